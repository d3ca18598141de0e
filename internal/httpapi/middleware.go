package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProtectOptions configure the middleware every request passes through.
type ProtectOptions struct {
	// APIKey, when set, is required as "Authorization: Bearer KEY" on
	// every path but the public ones.
	APIKey string
	// Public reports whether a path is served without the key (health,
	// public agent cards).
	Public func(path string) bool
	// RatePerSec and Burst bound each client (by key, else by IP).
	RatePerSec float64
	Burst      int
	// MaxBodyBytes caps request bodies.
	MaxBodyBytes int64
	Logger       *slog.Logger
	// Now is the clock, for tests; nil = time.Now.
	Now func() time.Time
}

// Protect wraps h with, in order: security headers, body limit, rate
// limit and auth. Rate limiting runs before auth so that guessing keys is
// rate limited too.
func Protect(h http.Handler, opts ProtectOptions) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Public == nil {
		opts.Public = func(string) bool { return false }
	}
	limiter := newGCRA(opts.RatePerSec, opts.Burst, opts.Now)
	keyHash := sha256.Sum256([]byte(opts.APIKey))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if opts.MaxBodyBytes > 0 && r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, opts.MaxBodyBytes)
		}
		token, hasToken := bearer(r)
		client := clientKey(r, token)
		if ok, retry := limiter.allow(client); !ok {
			secs := int(math.Ceil(retry.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			WriteError(w, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("too many requests; retry after %d s", max(secs, 1)))
			return
		}
		// Browsers send CORS preflights without credentials; the handler
		// behind (the MCP endpoint's Origin policy) decides on them, and
		// the real request that follows still needs the key.
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if opts.APIKey != "" && !preflight && !opts.Public(r.URL.Path) {
			got := sha256.Sum256([]byte(token))
			// Comparing fixed-length hashes keeps the comparison constant
			// time regardless of the token's length.
			if !hasToken || subtle.ConstantTimeCompare(got[:], keyHash[:]) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agentd"`)
				WriteError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong API key: send Authorization: Bearer <api_key>")
				log.Debug("unauthorized request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", false
}

// clientKey identifies the client for rate limiting: a hash of its
// token when it sends one (never the token itself), else its IP.
func clientKey(r *http.Request, token string) string {
	if token != "" {
		h := sha256.Sum256([]byte(token))
		return fmt.Sprintf("k:%x", h[:8])
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip:" + host
}

// gcra is the generic cell rate algorithm: one timestamp per client (the
// theoretical arrival time), so the limiter is O(1) in time and memory per
// client and needs no background refill.
type gcra struct {
	interval time.Duration // emission interval: 1/rate
	tau      time.Duration // burst tolerance
	now      func() time.Time

	mu    sync.Mutex
	tat   map[string]time.Time
	swept time.Time
}

func newGCRA(rate float64, burst int, now func() time.Time) *gcra {
	if now == nil {
		now = time.Now
	}
	g := &gcra{now: now, tat: map[string]time.Time{}}
	if rate > 0 {
		g.interval = time.Duration(float64(time.Second) / rate)
		g.tau = g.interval * time.Duration(max(burst, 1))
	}
	return g
}

func (g *gcra) allow(key string) (bool, time.Duration) {
	if g.interval == 0 {
		return true, 0
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweep(now)
	tat := g.tat[key]
	if tat.Before(now) {
		tat = now
	}
	newTat := tat.Add(g.interval)
	if wait := newTat.Sub(now) - g.tau; wait > 0 {
		return false, wait
	}
	g.tat[key] = newTat
	return true, 0
}

// sweep forgets clients whose state has fully decayed, at most once a
// minute, so the map cannot grow without bound.
func (g *gcra) sweep(now time.Time) {
	if now.Sub(g.swept) < time.Minute {
		return
	}
	g.swept = now
	for k, t := range g.tat {
		if t.Before(now) {
			delete(g.tat, k)
		}
	}
}
