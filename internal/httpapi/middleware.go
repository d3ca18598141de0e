package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/telemetry"
)

// ProtectOptions configure the middleware every request passes through.
type ProtectOptions struct {
	// Principals resolve "Authorization: Bearer KEY" to who is asking; a
	// key is required on every path but the public ones when there is
	// any. Without keys every request is principal.Local.
	Principals *principal.Keys
	// APIKey adds one admin principal for KEY (tests, simple setups).
	APIKey string
	// Tokens, when set, accepts OAuth access tokens besides the keys.
	Tokens TokenVerifier
	// ResourceMetadata returns the URL of the Protected Resource Metadata
	// (RFC 9728) for r's path, named in 401 answers so an OAuth client
	// knows where to get a token. Used when Tokens is set.
	ResourceMetadata func(r *http.Request) string
	// Public reports whether a request is served without the key (health,
	// public agent cards, the dashboard's files).
	Public func(r *http.Request) bool
	// RatePerSec and Burst bound each client (see clientKey).
	RatePerSec float64
	Burst      int
	// LimitLoopback throttles loopback clients when no APIKey is set.
	// Off by default: on a developer's machine the editor, the relay, A2A
	// peers and the CLI all come from 127.0.0.1, and one shared bucket made
	// two conformance runs back to back fail with 429.
	LimitLoopback bool
	// Unlimited reports whether a path is never throttled (health: a load
	// balancer's probe must not take the node out because one client is
	// busy).
	Unlimited func(path string) bool
	// JSONRPC reports whether r is a JSON-RPC request (/mcp, A2A); its
	// refusals are JSON-RPC errors, the shape its client can read.
	JSONRPC func(r *http.Request) bool
	// MaxBodyBytes caps request bodies.
	MaxBodyBytes int64
	// Meter counts refusals (agentd.http.rate_limited); nil counts none.
	Meter metric.MeterProvider
	// UI, when set, lets the dashboard's session cookie authenticate
	// requests below /api/ (see UISessions); state-changing ones must then
	// carry the session's CSRF token.
	UI     *UISessions
	Logger *slog.Logger
	// Now is the clock, for tests; nil = time.Now.
	Now func() time.Time
}

// TokenVerifier checks an OAuth access token (package oauthrs).
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (*principal.Principal, []string, error)
}

// Protect wraps h with, in order: security headers, body limit, rate
// limit and auth. Rate limiting runs before auth so that guessing keys is
// rate limited too.
func Protect(h http.Handler, opts ProtectOptions) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	never := func(string) bool { return false }
	if opts.Public == nil {
		opts.Public = func(*http.Request) bool { return false }
	}
	if opts.Unlimited == nil {
		opts.Unlimited = never
	}
	if opts.JSONRPC == nil {
		opts.JSONRPC = func(*http.Request) bool { return false }
	}
	limiter := newGCRA(opts.RatePerSec, opts.Burst, opts.Now)
	var refused metric.Int64Counter
	if opts.Meter != nil {
		refused, _ = opts.Meter.Meter(telemetry.Scope).Int64Counter("agentd.http.rate_limited",
			metric.WithUnit("{request}"),
			metric.WithDescription("Requests refused with 429 by the per-client rate limit."))
	}
	keys := opts.Principals
	if opts.APIKey != "" {
		keys = &principal.Keys{}
		if opts.Principals != nil {
			*keys = *opts.Principals
		}
		keys.Add(sha256.Sum256([]byte(opts.APIKey)), &principal.Principal{Name: "admin", Admin: true, Agents: []string{"*"}, Tools: []string{"*"}})
	}
	authRequired := keys.Len() > 0 || opts.Tokens != nil
	// Browsers attach cookies (and, without keys, reach the loopback API
	// at all) on requests other sites' pages make; the browser's own
	// Sec-Fetch-Site and Origin headers tell those apart.
	crossOrigin := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if opts.MaxBodyBytes > 0 && r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, opts.MaxBodyBytes)
		}
		token, _ := bearer(r)
		who := principal.Local
		var tokenErr error
		if authRequired {
			who, _ = keys.Lookup(token) // nil when missing or wrong
			if who == nil && token != "" && opts.Tokens != nil {
				who, _, tokenErr = opts.Tokens.Verify(r.Context(), token)
			}
		}
		// The dashboard's cookie counts only without an Authorization
		// header (a wrong key stays a wrong key) and only below /api/.
		var uiSess *uiSession
		if _, hasAuth := r.Header["Authorization"]; !hasAuth && opts.UI != nil && cookieScope(r.URL.Path) {
			if _, uiSess = opts.UI.fromCookie(r); uiSess != nil {
				who = uiSess.p
			}
		}
		if limited(r, opts, authRequired, token) {
			if ok, retry := limiter.allow(clientKey(r, who, token)); !ok {
				if refused != nil {
					refused.Add(r.Context(), 1)
				}
				refuse(w, r, opts.JSONRPC(r), retry)
				return
			}
		}
		// Browsers send CORS preflights without credentials; the handler
		// behind (the MCP endpoint's Origin policy) decides on them, and
		// the real request that follows still needs the key.
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if !safeMethod(r.Method) && token == "" && cookieScope(r.URL.Path) {
			// A state-changing API request without a key: from the
			// dashboard (cookie), a local tool (no auth configured), or a
			// browser tricked by another site, which these checks refuse.
			if err := crossOrigin.Check(r); err != nil {
				WriteError(w, http.StatusForbidden, "csrf", "cross-origin request refused: the API takes state-changing browser requests from the dashboard's own origin only")
				return
			}
			if uiSess != nil && !uiSess.checkCSRF(r) {
				WriteError(w, http.StatusForbidden, "csrf", "missing or wrong "+CSRFHeader+" header: reload the dashboard")
				return
			}
		}
		if who == nil && !preflight && !opts.Public(r) {
			challenge := `Bearer realm="agentd"`
			msg := "missing or wrong API key: send Authorization: Bearer <api_key>"
			if opts.Tokens != nil {
				// RFC 6750 and the MCP authorization spec: say where the
				// metadata is, and why a token was refused.
				if opts.ResourceMetadata != nil {
					challenge += `, resource_metadata="` + opts.ResourceMetadata(r) + `"`
				}
				msg = "missing or invalid credentials: send Authorization: Bearer <api_key or access token>"
				if tokenErr != nil {
					challenge += `, error="invalid_token", error_description="` + strings.ReplaceAll(tokenErr.Error(), `"`, "'") + `"`
					msg = tokenErr.Error()
				}
			}
			w.Header().Set("WWW-Authenticate", challenge)
			WriteError(w, http.StatusUnauthorized, "unauthorized", msg)
			log.DebugContext(r.Context(), "unauthorized request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", tokenErr)
			return
		}
		if who != nil {
			r = r.WithContext(principal.NewContext(r.Context(), who))
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

// limited reports whether r counts against a rate limit. Without an API
// key the daemon listens on loopback only (Listen refuses otherwise), so
// every client is local and trusted as much as the user's own shell;
// throttling them is the operator's choice (LimitLoopback).
func limited(r *http.Request, opts ProtectOptions, authRequired bool, token string) bool {
	if opts.Unlimited(r.URL.Path) {
		return false
	}
	if !authRequired && !opts.LimitLoopback && token == "" && isLoopback(remoteHost(r)) {
		return false
	}
	return true
}

// clientKey identifies the client for rate limiting: its principal when
// it has proven one (all of a principal's clients share its budget), a
// hash of its token when the token is wrong (never the token itself:
// guessing is limited too), else its address plus the MCP session it
// speaks in, so two MCP clients on one host do not share a bucket.
func clientKey(r *http.Request, who *principal.Principal, token string) string {
	if who != nil && who != principal.Local {
		return "p:" + who.Name
	}
	if token != "" {
		h := sha256.Sum256([]byte(token))
		return fmt.Sprintf("k:%x", h[:8])
	}
	key := "ip:" + remoteHost(r)
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && len(sid) <= 256 {
		key += "|mcp:" + sid
	}
	return key
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refuse answers a throttled request with Retry-After and, on JSON-RPC
// endpoints, a JSON-RPC error carrying the request's id and the wait in
// its data, so MCP and A2A clients surface a readable reason instead of a
// body they cannot parse.
func refuse(w http.ResponseWriter, r *http.Request, jsonrpc bool, retry time.Duration) {
	secs := max(int(math.Ceil(retry.Seconds())), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	msg := fmt.Sprintf("too many requests; retry after %d s", secs)
	if !jsonrpc {
		WriteError(w, http.StatusTooManyRequests, "rate_limited", msg)
		return
	}
	data := map[string]any{"retryAfterSeconds": secs}
	if id := RequestIDOf(w); id != "" {
		data["requestId"] = id
	}
	body, _ := json.Marshal(rpcRefusal{JSONRPC: "2.0", ID: requestID(r), Error: rpcError{
		Code: CodeRateLimited, Message: msg, Data: data,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(body)
}

type rpcRefusal struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// CodeRateLimited is the JSON-RPC error code of a throttled request: in
// the implementation-defined server error range, as JSON-RPC has no
// standard code for it.
const CodeRateLimited = -32029

// maxIDScan bounds how much of a refused body is read to find its id: a
// refusal must stay cheap.
const maxIDScan = 64 << 10

// requestID is the id of the JSON-RPC request in r's body, or null when
// it has none (a notification, a batch, or more than maxIDScan bytes).
func requestID(r *http.Request) json.RawMessage {
	null := json.RawMessage("null")
	if r.Body == nil {
		return null
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxIDScan)).Decode(&msg); err != nil || len(msg.ID) == 0 {
		return null
	}
	if c := msg.ID[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return null // ids are strings or numbers
	}
	return msg.ID
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
