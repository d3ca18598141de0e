package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/principal"
)

func okHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			WriteError(w, http.StatusRequestEntityTooLarge, "too_large", err.Error())
			return
		}
		w.Write([]byte("ok"))
	})
}

func do(h http.Handler, method, path, auth, body, remote string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Host = "127.0.0.1:4200" // a local client; TestAdmission covers other hosts
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	if remote != "" {
		r.RemoteAddr = remote
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestAuth(t *testing.T) {
	h := Protect(okHandler(), ProtectOptions{APIKey: "s3cret-key", Public: func(r *http.Request) bool { return r.URL.Path == "/api/health" }})
	tests := []struct {
		name, path, auth string
		want             int
	}{
		{"public path without key", "/api/health", "", 200},
		{"missing key", "/api/agents", "", 401},
		{"wrong key", "/api/agents", "Bearer nope", 401},
		{"key as prefix", "/api/agents", "Bearer s3cret-key-and-more", 401},
		{"basic scheme", "/api/agents", "Basic s3cret-key", 401},
		{"right key", "/api/agents", "Bearer s3cret-key", 200},
		{"scheme is case-insensitive", "/api/agents", "bearer s3cret-key", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(h, "GET", tt.path, tt.auth, "", "")
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d", w.Code, tt.want)
			}
			if w.Code == 401 {
				var e struct{ Error Error }
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code != "unauthorized" {
					t.Fatalf("body %s", w.Body)
				}
				if strings.Contains(w.Body.String(), "s3cret") || w.Header().Get("WWW-Authenticate") == "" {
					t.Fatalf("bad 401: %v %s", w.Header(), w.Body)
				}
			}
		})
	}
}

func TestPreflightPassesWithoutKeyButRequestDoesNot(t *testing.T) {
	h := Protect(okHandler(), ProtectOptions{APIKey: "k"})
	r := httptest.NewRequest("OPTIONS", "/mcp", nil)
	r.Host = "localhost"
	r.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("preflight: %d", w.Code)
	}
	if w := do(h, "OPTIONS", "/mcp", "", "", ""); w.Code != 401 {
		t.Fatalf("plain OPTIONS without key: %d", w.Code)
	}
}

func TestNoKeyMeansNoAuth(t *testing.T) {
	h := Protect(okHandler(), ProtectOptions{})
	if w := do(h, "GET", "/api/agents", "", "", ""); w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
}

func TestRateLimitGCRA(t *testing.T) {
	now := time.Unix(1000, 0)
	h := Protect(okHandler(), ProtectOptions{RatePerSec: 10, Burst: 5, Now: func() time.Time { return now }})
	// A burst of 5 passes, the 6th is limited with a Retry-After.
	for i := 0; i < 5; i++ {
		if w := do(h, "GET", "/x", "", "", "10.0.0.1:1"); w.Code != 200 {
			t.Fatalf("request %d limited", i)
		}
	}
	w := do(h, "GET", "/x", "", "", "10.0.0.1:1")
	if w.Code != 429 || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("status %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	// Another client is not affected.
	if w := do(h, "GET", "/x", "", "", "10.0.0.2:1"); w.Code != 200 {
		t.Fatal("other client limited")
	}
	// A token the daemon does not check (it has no keys) buys no bucket
	// of its own: buckets are never keyed on what a client chooses.
	if w := do(h, "GET", "/x", "Bearer a", "", "10.0.0.1:1"); w.Code != 429 {
		t.Fatalf("an unchecked token escaped its address's limit: %d", w.Code)
	}
	// After one emission interval (100 ms) one more request passes.
	now = now.Add(100 * time.Millisecond)
	if w := do(h, "GET", "/x", "", "", "10.0.0.1:1"); w.Code != 200 {
		t.Fatal("not refilled after one interval")
	}
	if w := do(h, "GET", "/x", "", "", "10.0.0.1:1"); w.Code != 429 {
		t.Fatal("refilled more than one request")
	}
}

// TestRateLimitPerPrincipal: a proven principal has its own budget,
// whichever address it comes from, and does not spend its address's.
func TestRateLimitPerPrincipal(t *testing.T) {
	now := time.Unix(1000, 0)
	h := Protect(okHandler(), ProtectOptions{APIKey: "k", RatePerSec: 10, Burst: 5, Now: func() time.Time { return now }})
	for i := range 5 {
		if w := do(h, "GET", "/x", "Bearer k", "", "10.0.0.1:1"); w.Code != 200 {
			t.Fatalf("request %d: %d", i, w.Code)
		}
	}
	if w := do(h, "GET", "/x", "Bearer k", "", "10.0.0.2:1"); w.Code != 429 {
		t.Fatalf("the principal's 6th request from another address: %d, want 429 (one budget per principal)", w.Code)
	}
}

// TestFailedAuthLimit: wrong keys are limited per client address,
// whatever key is tried (each wrong key once had a bucket of its own:
// 773 guesses a second), loopback included; while an address is over
// its budget even the right key is refused, so a guesser learns nothing;
// other addresses are not affected; the budget refills.
func TestFailedAuthLimit(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	h := Protect(okHandler(), ProtectOptions{APIKey: "right", AuthFailures: NewAuthLimiter(1, 10, clock), Now: clock})
	for _, remote := range []string{"127.0.0.1:1", "10.0.0.3:1"} {
		refused := 0
		for i := range 100 {
			w := do(h, "GET", "/x", fmt.Sprintf("Bearer guess-%d", i), "", remote)
			switch w.Code {
			case 401:
			case 429:
				refused++
				if w.Header().Get("Retry-After") == "" {
					t.Fatal("429 without Retry-After")
				}
			default:
				t.Fatalf("%s: guess %d answered %d", remote, i, w.Code)
			}
		}
		if refused != 90 {
			t.Fatalf("%s: 100 different wrong keys drew %d refusals, want 90 (a burst of 10 failures)", remote, refused)
		}
		if w := do(h, "GET", "/x", "Bearer right", "", remote); w.Code != 429 {
			t.Fatalf("%s: the right key while over budget: %d, want 429", remote, w.Code)
		}
	}
	if w := do(h, "GET", "/x", "Bearer right", "", "10.0.0.4:1"); w.Code != 200 {
		t.Fatalf("another address was refused: %d", w.Code)
	}
	now = now.Add(2 * time.Second)
	if w := do(h, "GET", "/x", "Bearer right", "", "10.0.0.3:1"); w.Code != 200 {
		t.Fatalf("after the budget refilled: %d", w.Code)
	}
}

// TestClientAddrBehindProxy: X-Forwarded-For is believed from trusted
// proxies only, read from the right past trusted hops.
func TestClientAddrBehindProxy(t *testing.T) {
	c := ClientAddrs{Trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	tests := []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"no proxy", "192.0.2.1:5", nil, "192.0.2.1"},
		{"untrusted peer's header is ignored", "192.0.2.1:5", []string{"198.51.100.7"}, "192.0.2.1"},
		{"trusted proxy names the client", "10.1.1.1:5", []string{"198.51.100.7"}, "198.51.100.7"},
		{"a client's own forged hop is skipped", "10.1.1.1:5", []string{"1.2.3.4, 198.51.100.7"}, "198.51.100.7"},
		{"trusted hops are skipped", "10.1.1.1:5", []string{"198.51.100.7, 10.2.2.2"}, "198.51.100.7"},
		{"several headers join", "10.1.1.1:5", []string{"198.51.100.7", "10.2.2.2"}, "198.51.100.7"},
		{"malformed: the proxy", "10.1.1.1:5", []string{"nonsense"}, "10.1.1.1"},
		{"only proxies: the peer", "10.1.1.1:5", []string{"10.3.3.3"}, "10.1.1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := c.Of(r); got != tt.want {
				t.Fatalf("client %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	h := Protect(okHandler(), ProtectOptions{MaxBodyBytes: 10})
	if w := do(h, "POST", "/x", "", "short", ""); w.Code != 200 {
		t.Fatalf("small body: %d", w.Code)
	}
	if w := do(h, "POST", "/x", "", strings.Repeat("x", 11), ""); w.Code != 413 {
		t.Fatalf("large body: %d", w.Code)
	}
}

func TestSweepForgetsIdleClients(t *testing.T) {
	now := time.Unix(0, 0)
	g := newGCRA(1, 1, func() time.Time { return now })
	for i := 0; i < 100; i++ {
		g.allow(string(rune('a' + i)))
	}
	now = now.Add(2 * time.Minute)
	g.allow("z")
	if n := len(g.tat); n != 1 {
		t.Fatalf("%d clients remembered after they went idle", n)
	}
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		err  error
		want int
		code string
	}{
		{&llm.AuthError{Provider: "openai", EnvVar: "OPENAI_API_KEY"}, 502, "model_auth"},
		{fmt.Errorf("model x: %w", &llm.StatusError{Status: 500, Message: "boom"}), 502, "model_error"},
		{fmt.Errorf("get: %w", agent.ErrAgentNotFound), 404, "not_found"},
		{agent.ErrReadOnly, 409, "read_only"},
		{agent.ErrSessionBusy, 409, "conflict"},
		{errors.New("disk on fire"), 500, "internal"},
	}
	for _, tt := range tests {
		e := ToError(tt.err)
		if e.Status != tt.want || e.Code != tt.code {
			t.Errorf("ToError(%v) = %d %s, want %d %s", tt.err, e.Status, e.Code, tt.want, tt.code)
		}
	}
}

func TestRateLimitWhoIsThrottled(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	rpc := func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/mcp") }
	health := func(p string) bool { return p == "/api/health" }
	tests := []struct {
		name       string
		opts       ProtectOptions
		path, auth string
		remote     string
		session    func(i int) string // Mcp-Session-Id of request i
		wantLimit  bool
	}{
		{"loopback without key is not throttled", ProtectOptions{}, "/x", "", "127.0.0.1:5", nil, false},
		{"ipv6 loopback without key is not throttled", ProtectOptions{}, "/x", "", "[::1]:5", nil, false},
		{"loopback throttled when asked", ProtectOptions{LimitLoopback: true}, "/x", "", "127.0.0.1:5", nil, true},
		{"loopback throttled when a key is configured", ProtectOptions{APIKey: "k"}, "/x", "Bearer k", "127.0.0.1:5", nil, true},
		{"other hosts are throttled", ProtectOptions{}, "/x", "", "10.1.1.1:5", nil, true},
		{"health is never throttled", ProtectOptions{LimitLoopback: true, APIKey: "k"}, "/api/health", "", "10.1.1.1:5", nil, false},
		{"a made-up MCP session id buys no bucket", ProtectOptions{LimitLoopback: true}, "/mcp", "", "127.0.0.1:5", func(i int) string { return fmt.Sprint("s", i) }, true},
		{"one MCP session shares one bucket", ProtectOptions{LimitLoopback: true}, "/mcp", "", "127.0.0.1:5", func(int) string { return "s" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.RatePerSec, opts.Burst, opts.Now, opts.Unlimited, opts.JSONRPC = 1, 3, clock, health, rpc
			h := Protect(okHandler(), opts)
			limited := false
			for i := range 10 {
				r := httptest.NewRequest("GET", tt.path, nil)
				r.Host = "localhost"
				r.RemoteAddr = tt.remote
				if tt.auth != "" {
					r.Header.Set("Authorization", tt.auth)
				}
				if tt.session != nil {
					r.Header.Set("Mcp-Session-Id", tt.session(i))
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code == 429 {
					limited = true
				}
			}
			if limited != tt.wantLimit {
				t.Fatalf("10 requests at once: limited = %v, want %v", limited, tt.wantLimit)
			}
		})
	}
}

func TestRateLimitJSONRPCRefusal(t *testing.T) {
	now := time.Unix(1000, 0)
	h := Protect(okHandler(), ProtectOptions{
		RatePerSec: 0.5, Burst: 1, Now: func() time.Time { return now },
		JSONRPC: func(r *http.Request) bool { return r.URL.Path == "/mcp" },
	})
	do(h, "POST", "/mcp", "", `{}`, "10.0.0.9:1")
	for _, tt := range []struct{ body, wantID string }{
		{`{"jsonrpc":"2.0","id":42,"method":"tools/call"}`, "42"},
		{`{"jsonrpc":"2.0","method":"x","id":"abc"}`, `"abc"`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "null"},
		{`{"jsonrpc":"2.0","id":{"no":1}}`, "null"},
		{`not json`, "null"},
	} {
		w := do(h, "POST", "/mcp", "", tt.body, "10.0.0.9:1")
		if w.Code != 429 || w.Header().Get("Retry-After") != "2" {
			t.Fatalf("%s: status %d Retry-After %q", tt.body, w.Code, w.Header().Get("Retry-After"))
		}
		var got struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int            `json:"code"`
				Message string         `json:"message"`
				Data    map[string]int `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: refusal is not JSON: %v: %s", tt.body, err, w.Body)
		}
		if got.JSONRPC != "2.0" || string(got.ID) != tt.wantID || got.Error.Code != CodeRateLimited ||
			got.Error.Data["retryAfterSeconds"] != 2 || !strings.Contains(got.Error.Message, "retry after 2 s") {
			t.Fatalf("%s: refusal %s", tt.body, w.Body)
		}
	}
	// Other paths keep the API's error shape.
	w := do(h, "POST", "/api/x", "", "", "10.0.0.9:1")
	if w.Code != 429 || !strings.Contains(w.Body.String(), `"rate_limited"`) || strings.Contains(w.Body.String(), "jsonrpc") {
		t.Fatalf("api refusal %d %s", w.Code, w.Body)
	}
}

// TestRateLimitConnectionsOfOneAddress: a local client known only by its
// address has the budget per connection, and the address together four
// times it, so a client that opens a connection per request is still
// held, and one throttled connection leaves room for another.
func TestRateLimitConnectionsOfOneAddress(t *testing.T) {
	now := time.Unix(1000, 0)
	h := Protect(okHandler(), ProtectOptions{LimitLoopback: true, RatePerSec: 1, Burst: 3, Now: func() time.Time { return now }})
	send := func(remote string) int {
		r := httptest.NewRequest("GET", "/x", nil)
		r.Host, r.RemoteAddr = "localhost", remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	codes := func(remote func(i int) string, n int) (ok int) {
		for i := range n {
			if send(remote(i)) == http.StatusOK {
				ok++
			}
		}
		return ok
	}
	if ok := codes(func(int) string { return "127.0.0.1:1000" }, 10); ok != 3 {
		t.Errorf("one connection: %d of 10 admitted, want its burst of 3", ok)
	}
	if ok := codes(func(int) string { return "127.0.0.1:1001" }, 10); ok != 3 {
		t.Errorf("a second connection while the first is throttled: %d of 10 admitted, want 3", ok)
	}
	if ok := codes(func(i int) string { return fmt.Sprintf("127.0.0.1:%d", 2000+i) }, 20); ok != 6 {
		t.Errorf("a connection per request: %d of 20 admitted, want the address's remaining 12-6 = 6", ok)
	}
}

// TestRateLimitsSetLive: a config reload's new rate and burst apply to
// a serving admission layer from the next request: lowered, raised, and
// turned off (0).
func TestRateLimitsSetLive(t *testing.T) {
	now := time.Unix(1000, 0)
	limits := NewRateLimits()
	h := Protect(okHandler(), ProtectOptions{RatePerSec: 10, Burst: 5, Limits: limits, Now: func() time.Time { return now }})
	burst := func(remote string) int {
		n := 0
		for range 50 {
			if w := do(h, "GET", "/x", "", "", remote); w.Code != 200 {
				break
			}
			n++
		}
		return n
	}
	if n := burst("10.0.0.1:1"); n != 5 {
		t.Fatalf("initial burst: %d admitted, want 5", n)
	}
	limits.Set(10, 2)
	if n := burst("10.0.0.2:1"); n != 2 {
		t.Errorf("after Set(10, 2): %d admitted, want 2", n)
	}
	limits.Set(10, 20)
	if n := burst("10.0.0.3:1"); n != 20 {
		t.Errorf("after Set(10, 20): %d admitted, want 20", n)
	}
	limits.Set(0, 0)
	if n := burst("10.0.0.1:1"); n != 50 {
		t.Errorf("after Set(0, 0) (no limit): %d admitted, want all 50", n)
	}
}

// downMinted is a principal.Minted whose store cannot be read.
type downMinted struct{ asked *int }

func (m downMinted) Resolve(context.Context, [sha256.Size]byte) (*principal.Principal, error) {
	*m.asked++
	return nil, errors.New("store unavailable, retry")
}

func (m downMinted) Live(context.Context, string) (bool, error) { return false, errors.New("down") }

// TestMintedKeyStoreDown: while the minted keys cannot be read, a request
// with an agentd_ key is a 503 (retry), not a 401 and not a failed
// authentication (a burst of them does not lock the address out); the
// configured key and other tokens never ask the store.
func TestMintedKeyStoreDown(t *testing.T) {
	asked := 0
	keys := &principal.Keys{}
	keys.Add(sha256.Sum256([]byte("agentd_configured")), &principal.Principal{Name: "ops"})
	keys.SetMinted(downMinted{&asked})
	h := Protect(okHandler(), ProtectOptions{Principals: keys, AuthFailures: NewAuthLimiter(1, 2, nil)})
	for i := range 5 {
		w := do(h, "GET", "/api/agents", "Bearer agentd_minted", "", "10.0.0.9:1")
		var e struct{ Error Error }
		if w.Code != 503 || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Code != "unavailable" {
			t.Fatalf("request %d with a minted key, store down: %d %s", i, w.Code, w.Body)
		}
	}
	if asked != 5 {
		t.Errorf("the minted keys were asked %d times, want 5", asked)
	}
	if w := do(h, "GET", "/api/agents", "Bearer agentd_configured", "", "10.0.0.9:1"); w.Code != 200 {
		t.Errorf("the configured key after the 503s: %d, want 200 (no failed authentication was counted)", w.Code)
	}
	if w := do(h, "GET", "/api/agents", "Bearer not-an-agentd-key", "", "10.0.0.8:1"); w.Code != 401 {
		t.Errorf("another token: %d, want 401", w.Code)
	}
	if asked != 5 {
		t.Errorf("a configured key or another token asked the store (%d)", asked)
	}
}
