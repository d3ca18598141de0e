package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// expandHeaders resolves ${NAME} references in header values through
// lookup. It returns the headers and every resolved value (for redaction).
// An unset variable is an error naming the variable, never the value.
func expandHeaders(h map[string]string, lookup func(string) (string, bool)) (http.Header, []string, error) {
	out := make(http.Header, len(h))
	var secrets []string
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, err := expandVars(h[k], lookup)
		if err != nil {
			return nil, nil, fmt.Errorf("header %q: %w", k, err)
		}
		out.Set(k, v)
		if v != "" {
			secrets = append(secrets, v)
		}
	}
	return out, secrets, nil
}

// expandVars replaces each ${NAME} of s with the variable's value.
func expandVars(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			return "", errors.New("unterminated ${ in value")
		}
		name := s[i+2 : i+2+j]
		if !config.ValidEnvName(name) {
			return "", fmt.Errorf("%q is not a variable name", name)
		}
		var v string
		ok := false
		if lookup != nil {
			v, ok = lookup(name)
		}
		if !ok {
			return "", fmt.Errorf("variable %s is not set", name)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return "", fmt.Errorf("variable %s holds a line break", name)
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+2+j+1:]
	}
}

// roundTripper is the HTTP path of one session: it adds the configured
// headers, keeps every request on the configured origin (an SSE server's
// endpoint event or a redirect must not send our headers elsewhere), caps
// response bodies and tells the session what the responses say about it.
type roundTripper struct {
	base    http.RoundTripper
	origin  string // scheme://host of the configured URL
	headers http.Header
	max     int64
	ev      frameEvents
	sess    *session
	// streamBroken is called when a GET event stream fails mid-way (the
	// server went away); the session is then probed.
	streamBroken func()
	// rejected is called when a request carrying the session id is
	// answered 400 or 404.
	rejected func(status int)
	// bufs holds *bufio.Reader read buffers for the event streams of
	// responses (see newSSEReader).
	bufs sync.Pool
}

// sessionHeader is the Streamable HTTP session header.
const sessionHeader = "Mcp-Session-Id"

// RoundTrip implements http.RoundTripper.
func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if origin(req.URL) != rt.origin {
		if req.Body != nil {
			req.Body.Close()
		}
		err := fmt.Errorf("refusing a request to %s: only %s is configured", req.URL.Host, hostOf(rt.origin))
		// The SDK may report the connection closing rather than this:
		// the session keeps the reason for the status.
		rt.sess.fail(err)
		return nil, err
	}
	// A RoundTripper must not modify the request: the configured headers
	// go on a copy, made only when one of them is to be added (most
	// servers have none; the copy was a per-call cost).
	r2 := req
	for k, v := range rt.headers {
		if _, set := req.Header[k]; !set {
			if r2 == req {
				r2 = req.Clone(req.Context())
			}
			r2.Header[k] = v
		}
	}
	if req.Method == http.MethodPost && rt.sess.tasks.creating.Load() > 0 {
		rt.noteTaskCall(req)
	}
	resp, err := rt.base.RoundTrip(r2)
	if err != nil {
		return nil, err
	}
	if (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusBadRequest) &&
		req.Header.Get(sessionHeader) != "" && rt.rejected != nil {
		rt.rejected(resp.StatusCode)
	}
	var callID func() json.RawMessage
	if req.Method == http.MethodPost {
		callID = func() json.RawMessage { return requestID(req) }
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		sr := newSSEReader(resp.Body, rt.max, rt.ev, callID, &rt.bufs)
		if req.Method == http.MethodGet && rt.streamBroken != nil {
			ctx := req.Context()
			sr.broken = func(error) {
				if ctx.Err() == nil {
					rt.streamBroken()
				}
			}
		}
		resp.Body = sr
	case ct == "application/json" && resp.StatusCode/100 == 2:
		resp.Body = &jsonBody{body: resp.Body, max: rt.max, ev: rt.ev, callID: callID}
	default:
		resp.Body = &cappedBody{body: resp.Body, left: rt.max}
	}
	return resp, nil
}

// requestID returns the JSON-RPC id of a POSTed call, or nil.
func requestID(req *http.Request) json.RawMessage {
	if req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	head, _ := io.ReadAll(io.LimitReader(body, 1<<20))
	if f := jsonrpcwire.Scan(head); f.Method != "" {
		return f.ID
	}
	return nil
}

// noteTaskCall shows a POSTed request to the session's taskWatch while
// a task is being created, so that the answer can be tied to its call.
func (rt *roundTripper) noteTaskCall(req *http.Request) {
	if req.GetBody == nil {
		return
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	b, _ := io.ReadAll(io.LimitReader(body, 1<<20))
	rt.sess.tasks.sentRequest(b)
}

func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

func hostOf(origin string) string {
	_, h, _ := strings.Cut(origin, "://")
	return h
}

var _ http.RoundTripper = (*roundTripper)(nil)
