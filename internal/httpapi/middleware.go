package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
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

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentd/agentd/internal/oauthrs"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/telemetry"
)

// ProtectOptions configure the admission layer every request passes
// through (admission.go).
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
	// public agent cards, the dashboard's files). The daemon decides it
	// from an explicit list of routes; everything else is admitted only
	// with credentials.
	Public func(r *http.Request) bool
	// Hosts are the Host header values served (DNS rebinding).
	Hosts HostPolicy
	// TrustedOrigins reports whether a browser origin may make
	// cross-site requests to r's route ([server] allowed_origins, and
	// [mcp] allowed_origins below the MCP endpoint); nil trusts none.
	TrustedOrigins func(r *http.Request, origin string) bool
	// Clients finds the client address of a request, behind trusted
	// proxies; failed authentications and anonymous rate limits count
	// per client address.
	Clients ClientAddrs
	// AuthFailures limits failed authentications per client address; nil
	// = DefaultAuthFailuresPerSec and DefaultAuthFailureBurst.
	AuthFailures *AuthLimiter
	// RatePerSec and Burst bound each client (see clientKey).
	RatePerSec float64
	Burst      int
	// Limits, if set, is where the per-client limits are changed while
	// serving (a config reload); RatePerSec and Burst are then its
	// initial values.
	Limits *RateLimits
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
	// Meter counts refusals (agentd.http.rate_limited,
	// agentd.http.refused); nil counts none.
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

// Admission refusals: one code each, the same on every route. JSON-RPC
// endpoints get them as JSON-RPC errors (refuseRPC).
const (
	codeBadHost   = "misdirected_host"
	codeCrossSite = "csrf"
	codeMediaType = "unsupported_media_type"
	codeTooLarge  = "too_large"
)

// Protect wraps h with the admission layer: security headers, Host,
// body limit, cross-site refusal, failed-authentication limit,
// credentials, rate limit and media type, in that order (admission.go).
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
	if opts.TrustedOrigins == nil {
		opts.TrustedOrigins = func(*http.Request, string) bool { return false }
	}
	failures := opts.AuthFailures
	if failures == nil {
		failures = NewAuthLimiter(DefaultAuthFailuresPerSec, DefaultAuthFailureBurst, opts.Now)
	}
	limiter := newGCRA(opts.RatePerSec, opts.Burst, opts.Now)
	// Local clients without a principal share an address; each of their
	// connections has the configured budget and the address together
	// addressShare times it (see connKey).
	addrLimiter := newGCRA(opts.RatePerSec*addressShare, opts.Burst*addressShare, opts.Now)
	if opts.Limits != nil {
		opts.Limits.attach(limiter, addrLimiter)
	}
	var limited, refusedC metric.Int64Counter
	if opts.Meter != nil {
		m := opts.Meter.Meter(telemetry.Scope)
		limited, _ = m.Int64Counter("agentd.http.rate_limited",
			metric.WithUnit("{request}"),
			metric.WithDescription("Requests refused with 429 by the per-client rate limit or the failed-authentication limit."))
		refusedC, _ = m.Int64Counter("agentd.http.refused",
			metric.WithUnit("{request}"),
			metric.WithDescription("Requests refused by the admission layer, by reason (misdirected_host, csrf, unauthorized, unsupported_media_type, too_large)."))
	}
	count := func(r *http.Request, reason string) {
		if refusedC != nil {
			refusedC.Add(r.Context(), 1, metric.WithAttributes(attrReason.String(reason)))
		}
	}
	keys := opts.Principals
	if opts.APIKey != "" {
		keys = opts.Principals.Clone()
		keys.Add(sha256.Sum256([]byte(opts.APIKey)), &principal.Principal{Name: "admin", Admin: true, Agents: []string{"*"}, Tools: []string{"*"}})
	}
	authRequired := keys.Len() > 0 || opts.Tokens != nil
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		jsonrpc := opts.JSONRPC(r)
		if !opts.Hosts.hostAllowed(r.Host) {
			count(r, codeBadHost)
			reject(w, r, jsonrpc, http.StatusMisdirectedRequest, codeBadHost,
				"this daemon does not serve the host name "+strconvQuote(r.Host)+": add it to [server] allowed_hosts if it is one of its names")
			return
		}
		if opts.MaxBodyBytes > 0 && r.ContentLength > opts.MaxBodyBytes {
			count(r, codeTooLarge)
			reject(w, r, jsonrpc, http.StatusRequestEntityTooLarge, codeTooLarge,
				fmt.Sprintf("request body of %d bytes is over the limit of %d bytes ([limits] max_body_bytes)", r.ContentLength, opts.MaxBodyBytes))
			return
		}
		if opts.MaxBodyBytes > 0 && r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, opts.MaxBodyBytes)
		}
		public := opts.Public(r)
		// Browsers send CORS preflights without credentials; the handler
		// behind (the MCP endpoint's CORS answer) replies to a trusted
		// origin's, and the real request that follows still needs the key.
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if (!public || !safeMethod(r.Method)) && crossSite(r, func(o string) bool { return opts.TrustedOrigins(r, o) }) {
			count(r, codeCrossSite)
			reject(w, r, jsonrpc, http.StatusForbidden, codeCrossSite,
				"cross-site request refused: this route takes browser requests from the daemon's own origin only (or from [server] allowed_origins)")
			return
		}
		client := opts.Clients.Of(r)
		r = r.WithContext(context.WithValue(r.Context(), clientAddrKey{}, client))
		token, _ := bearer(r)
		who := principal.Local
		var tokenErr error
		if authRequired {
			// Only credentialed requests are held back: one without
			// credentials is refused with 401 anyway, and says nothing.
			_, cookie := r.Header["Cookie"]
			if token != "" || cookie || (public && r.URL.Path == UIPath+"login") {
				if blocked, retry := failures.Blocked(client); blocked {
					if limited != nil {
						limited.Add(r.Context(), 1)
					}
					log.WarnContext(r.Context(), "too many failed authentications", "client", client, "path", r.URL.Path)
					refuse(w, r, jsonrpc, retry)
					return
				}
			}
			var keyErr error
			who, keyErr = keys.Resolve(r.Context(), token) // nil when missing or wrong
			if keyErr != nil {
				// A minted key could not be checked (the store is down):
				// neither a yes nor a failed authentication.
				log.WarnContext(r.Context(), "cannot check an API key", "client", client, "err", keyErr)
				WriteError(w, http.StatusServiceUnavailable, "unavailable", "cannot check the API key now (the store is unavailable): retry")
				return
			}
			if who == nil && token != "" && opts.Tokens != nil {
				who, _, tokenErr = opts.Tokens.Verify(r.Context(), token)
			}
			if who == nil && token != "" && !errors.Is(tokenErr, oauthrs.ErrNoPrincipal) {
				failures.Failed(client)
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
		if rateLimited(r, opts, authRequired, token) {
			ok, retry := false, time.Duration(0)
			if ck := connKey(r, client, who); ck != "" {
				ok, retry = allowBoth(limiter, ck, addrLimiter, clientKey(client, who))
			} else {
				ok, retry = limiter.allow(clientKey(client, who))
			}
			if !ok {
				if limited != nil {
					limited.Add(r.Context(), 1)
				}
				refuse(w, r, jsonrpc, retry)
				return
			}
		}
		if uiSess != nil && !safeMethod(r.Method) && !uiSess.checkCSRF(r) {
			count(r, codeCrossSite)
			WriteError(w, http.StatusForbidden, codeCrossSite, "missing or wrong "+CSRFHeader+" header: reload the dashboard")
			return
		}
		if who == nil && !preflight && !public && errors.Is(tokenErr, oauthrs.ErrNoPrincipal) {
			// A valid token of someone this daemon does not know (or of a
			// reserved name): another token of the same subject would not
			// help, so no challenge, and not a failed authentication.
			count(r, "forbidden")
			WriteError(w, http.StatusForbidden, "forbidden", tokenErr.Error())
			return
		}
		if who == nil && !preflight && !public {
			count(r, "unauthorized")
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
			log.DebugContext(r.Context(), "unauthorized request", "method", r.Method, "path", r.URL.Path, "client", client, "reason", tokenErr)
			return
		}
		if !safeMethod(r.Method) && !jsonBody(r) {
			count(r, codeMediaType)
			reject(w, r, jsonrpc, http.StatusUnsupportedMediaType, codeMediaType,
				"request body must be JSON (Content-Type: application/json), not "+strconvQuote(r.Header.Get("Content-Type")))
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

// rateLimited reports whether r counts against a rate limit. Without an
// API key the daemon listens on loopback only (Listen refuses otherwise),
// so every client is local and trusted as much as the user's own shell;
// throttling them is the operator's choice (LimitLoopback).
func rateLimited(r *http.Request, opts ProtectOptions, authRequired bool, token string) bool {
	if opts.Unlimited(r.URL.Path) {
		return false
	}
	if !authRequired && !opts.LimitLoopback && token == "" && isLoopback(remoteHost(r)) {
		return false
	}
	return true
}

// clientKey identifies the client for rate limiting: its principal when
// it has proven one (all of a principal's clients share its budget),
// else its address. Never anything the client chooses unproven (a
// made-up Mcp-Session-Id header once bought a fresh bucket per request);
// failed authentications have their own limit (AuthLimiter).
func clientKey(client string, who *principal.Principal) string {
	if who != nil && who != principal.Local {
		return "p:" + who.Name
	}
	return "ip:" + client
}

// addressShare is how many connections' worth of budget all the
// connections of one local address get together.
const addressShare = 4

// connKey is the bucket of a request's connection when its client is
// known only by its address (no principal), so that one client being
// throttled on its connection does not starve another process on the
// same address (two MCP clients on one machine, with limit_loopback):
// the other's connection, and its session set-up, have budgets of
// their own. The address as a whole is still held to addressShare
// times the budget, so a client that opens a connection per request
// gains little. Behind a trusted proxy the connection is the proxy's,
// so the address alone counts there. "" when the key is a principal.
func connKey(r *http.Request, client string, who *principal.Principal) string {
	if (who != nil && who != principal.Local) || client != remoteHost(r) {
		return ""
	}
	return "c:" + r.RemoteAddr
}

// allowBoth admits a request only if both buckets have room, and
// charges both only then: a refusal by one costs the other nothing.
func allowBoth(g1 *gcra, k1 string, g2 *gcra, k2 string) (bool, time.Duration) {
	now := g1.now()
	g1.mu.Lock()
	defer g1.mu.Unlock()
	if g1.interval == 0 {
		return true, 0
	}
	g2.mu.Lock()
	defer g2.mu.Unlock()
	g1.sweep(now)
	g2.sweep(now)
	t1, w1 := g1.next(k1, now)
	t2, w2 := g2.next(k2, now)
	if w := max(w1, w2); w > 0 {
		return false, w
	}
	g1.tat[k1], g2.tat[k2] = t1, t2
	return true, 0
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

// reject answers a request the admission layer refuses with status and
// one stable code: the API's error shape, or on JSON-RPC endpoints a
// JSON-RPC error (Invalid Request) carrying the code in its data, so MCP
// and A2A clients show the reason.
func reject(w http.ResponseWriter, r *http.Request, jsonrpc bool, status int, code, msg string) {
	if !jsonrpc {
		WriteError(w, status, code, msg)
		return
	}
	data := map[string]any{"code": code}
	if id := RequestIDOf(w); id != "" {
		data["requestId"] = id
	}
	var id json.RawMessage = json.RawMessage("null")
	if status != http.StatusRequestEntityTooLarge {
		id = requestID(r)
	}
	body, _ := json.Marshal(rpcRefusal{JSONRPC: "2.0", ID: id, Error: rpcError{
		Code: CodeInvalidRequest, Message: msg, Data: data,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// CodeInvalidRequest is JSON-RPC's Invalid Request, the code of every
// admission refusal but the rate limit's.
const CodeInvalidRequest = -32600

var attrReason = attribute.Key("reason")

func strconvQuote(s string) string { return strconv.Quote(s) }

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
	now func() time.Time

	mu       sync.Mutex
	interval time.Duration // emission interval: 1/rate; 0 = unlimited
	tau      time.Duration // burst tolerance
	tat      map[string]time.Time
	swept    time.Time
}

func newGCRA(rate float64, burst int, now func() time.Time) *gcra {
	if now == nil {
		now = time.Now
	}
	g := &gcra{now: now, tat: map[string]time.Time{}}
	g.set(rate, burst)
	return g
}

// set changes the rate and burst; clients keep their arrival times, so
// a lowered limit applies from their next request.
func (g *gcra) set(rate float64, burst int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.interval, g.tau = 0, 0
	if rate > 0 {
		g.interval = time.Duration(float64(time.Second) / rate)
		g.tau = g.interval * time.Duration(max(burst, 1))
	}
}

func (g *gcra) allow(key string) (bool, time.Duration) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.interval == 0 {
		return true, 0
	}
	g.sweep(now)
	newTat, wait := g.next(key, now)
	if wait > 0 {
		return false, wait
	}
	g.tat[key] = newTat
	return true, 0
}

// next is key's theoretical arrival time if a request were admitted
// now, and how long it must wait first (> 0: refused). Call with g.mu.
func (g *gcra) next(key string, now time.Time) (time.Time, time.Duration) {
	tat := g.tat[key]
	if tat.Before(now) {
		tat = now
	}
	newTat := tat.Add(g.interval)
	return newTat, newTat.Sub(now) - g.tau
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

// RateLimits changes the per-client rate limits of the admission
// layers it is given to (ProtectOptions.Limits) while they serve: a
// config reload's [limits] rate_per_sec and burst.
type RateLimits struct {
	mu       sync.Mutex
	limiters [][2]*gcra // per client, per address
}

// NewRateLimits returns a handle with no admission layer attached yet.
func NewRateLimits() *RateLimits { return &RateLimits{} }

func (l *RateLimits) attach(client, addr *gcra) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.limiters = append(l.limiters, [2]*gcra{client, addr})
}

// Set changes the limits of every attached admission layer.
func (l *RateLimits) Set(ratePerSec float64, burst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, g := range l.limiters {
		g[0].set(ratePerSec, burst)
		g[1].set(ratePerSec*addressShare, burst*addressShare)
	}
}
