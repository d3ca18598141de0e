package gemini

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// retryTransport retries requests that failed with 408, 429 or 5xx, or
// with a connection error, honouring the server's wait (Retry-After-Ms,
// Retry-After in seconds or as a date, or Google's RetryInfo.retryDelay in
// the error body) and otherwise backing off exponentially with jitter. The
// genai SDK's own retries ignore Retry-After, so they stay off.
type retryTransport struct {
	next       http.RoundTripper
	maxRetries int
	// baseDelay is the first backoff; it doubles up to maxDelay.
	baseDelay, maxDelay time.Duration
	// maxRetryAfter is the longest server-directed wait honoured; a longer
	// one ends the retries and returns the response.
	maxRetryAfter time.Duration
	logger        *slog.Logger
}

// errBodyPeek bounds how much of an error body is read for RetryInfo.
const errBodyPeek = 64 << 10

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			r = req.Clone(ctx)
			if req.Body != nil && req.Body != http.NoBody {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		res, err := t.next.RoundTrip(r)
		if ctx.Err() != nil || attempt >= t.maxRetries || !retryable(res, err) {
			return res, err
		}
		if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			return res, err // the body cannot be sent again
		}
		delay, ok := t.delay(res, attempt)
		if !ok {
			return res, err
		}
		if err != nil {
			t.logger.Warn("gemini request failed, retrying", "attempt", attempt, "delay", delay, "err", describeTransport(err))
		} else {
			t.logger.Warn("gemini request failed, retrying", "attempt", attempt, "delay", delay, "status", res.StatusCode)
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, errBodyPeek))
			res.Body.Close()
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// describeTransport is a transport error's message without the URL, which
// carries no key for Gemini (it travels in a header) but may carry
// credentials in its userinfo.
func describeTransport(err error) string {
	if urlErr, ok := err.(*url.Error); ok {
		return urlErr.Op + ": " + urlErr.Err.Error()
	}
	return err.Error()
}

// retryable reports whether an attempt is worth repeating.
func retryable(res *http.Response, err error) bool {
	if err != nil {
		return true
	}
	return res.StatusCode == http.StatusRequestTimeout || res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500
}

// delay is the wait before the next attempt: what the server asked for if
// it said (false if that is too long), else exponential backoff.
func (t *retryTransport) delay(res *http.Response, attempt int) (time.Duration, bool) {
	if res != nil {
		if d, ok := serverDelay(res); ok {
			if d > t.maxRetryAfter {
				return 0, false
			}
			return d, true
		}
	}
	d := t.baseDelay << attempt
	if d <= 0 || d > t.maxDelay {
		d = t.maxDelay
	}
	// Up to a quarter less, so concurrent clients spread out.
	if q := int64(d / 4); q > 0 {
		d -= time.Duration(rand.Int64N(q))
	}
	return d, true
}

// serverDelay reads the wait the server asked for. It may replace
// res.Body with an equivalent reader after peeking at it.
func serverDelay(res *http.Response) (time.Duration, bool) {
	if d, ok := parseRetryAfter(res.Header.Get("Retry-After-Ms"), res.Header.Get("Retry-After"), time.Now()); ok {
		return d, true
	}
	if res.StatusCode != http.StatusTooManyRequests && res.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, errBodyPeek))
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), res.Body), res.Body}
	return parseRetryInfo(body)
}

// parseRetryAfter interprets Retry-After-Ms (milliseconds) or Retry-After
// (seconds, or an HTTP date relative to now). Negative waits count as 0.
func parseRetryAfter(ms, after string, now time.Time) (time.Duration, bool) {
	if v, err := strconv.ParseFloat(strings.TrimSpace(ms), 64); err == nil && v == v {
		return clampDuration(v * float64(time.Millisecond)), true
	}
	after = strings.TrimSpace(after)
	if after == "" {
		return 0, false
	}
	if v, err := strconv.ParseFloat(after, 64); err == nil && v == v {
		return clampDuration(v * float64(time.Second)), true
	}
	if at, err := http.ParseTime(after); err == nil {
		return clampDuration(float64(at.Sub(now))), true
	}
	return 0, false
}

// clampDuration converts nanoseconds to a Duration within [0, 24h].
func clampDuration(ns float64) time.Duration {
	const ceiling = 24 * time.Hour
	switch {
	case ns <= 0:
		return 0
	case ns >= float64(ceiling):
		return ceiling
	default:
		return time.Duration(ns)
	}
}

// parseRetryInfo finds google.rpc.RetryInfo's retryDelay ("13s", "0.5s")
// in a Google API error body.
func parseRetryInfo(body []byte) (time.Duration, bool) {
	var e struct {
		Error struct {
			Details []struct {
				Type       string `json:"@type"`
				RetryDelay string `json:"retryDelay"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return 0, false
	}
	for _, d := range e.Error.Details {
		if !strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			continue
		}
		secs, ok := strings.CutSuffix(strings.TrimSpace(d.RetryDelay), "s")
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(secs, 64); err == nil && v == v {
			return clampDuration(v * float64(time.Second)), true
		}
	}
	return 0, false
}
