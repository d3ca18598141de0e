package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/oauthrs/oauthrstest"
	"github.com/agentd/agentd/internal/store"
)

// TestRouteTableAdmission is the admission layer's suite, and a new route
// cannot skip it: it walks the daemon's whole route table (Routes) and
// sends every route, for each of its methods, a matrix of credentials ×
// browser-style variations, asserting the status of each cell:
//
//   - a foreign Host (DNS rebinding) gets 421 everywhere, public or not;
//   - a request a browser marks as cross-site gets 403 csrf on every
//     route that is not public, and on public ones when it changes state;
//   - without credentials, or with a wrong key, a route that is not in
//     publicRoutes gets 401; a public one is served;
//   - a valid OAuth token whose subject is no principal here (unknown,
//     or the reserved admin and local) gets 403 there;
//   - a text/plain body (a browser's simple request) gets 415 from every
//     route, once its caller is known;
//   - every principal's plain request (a configured key, a key minted
//     at runtime, a token) is admitted: whatever the route
//     answers (its own 400, 403 or 404), it is not an admission refusal.
//
// A route the table does not know how to call fails the test, so adding
// one means deciding here how it is reached.
func TestRouteTableAdmission(t *testing.T) {
	is := oauthrstest.New(t)
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	const aud = "http://agents.test"
	body := fmt.Sprintf(`listen = "127.0.0.1:0"
api_key_env = "ADMIN_KEY"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "shared"
provider = "fake"
model = "m"
tools = []

[agents.expose]
a2a = true

[a2a]
enabled = true

[limits]
rate_per_sec = 1000000
burst = 1000000

[[principals]]
name = "alice"
key_env = "ALICE_KEY"
agents = ["shared"]

[[principals]]
name = "bob"
key_env = "BOB_KEY"
agents = ["shared"]

[[principals]]
name = "carol"
agents = ["shared"]

[auth.oauth]
issuer = %q
audience = %q
allow_private = true
`, model.URL, is.URL, aud)
	d, srv := testDaemon(t, body, map[string]string{"ADMIN_KEY": "k-admin", "ALICE_KEY": "k-alice", "BOB_KEY": "k-bob"})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	// A key minted for alice at runtime (only its hash in the store) is
	// admitted like her configured key, on every route.
	const aliceMinted = "agentd_alice-minted-key-for-the-admission-matrix"
	if err := d.Store.CreateAPIKey(t.Context(), store.APIKey{ID: "key_matrix", Principal: "alice", Hash: sha256.Sum256([]byte(aliceMinted)), CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}

	token := func(sub string) string {
		return is.Token(t, oauthrstest.Claims{Subject: sub, Audience: []string{aud}, Scope: "agentd:admin", Expiry: time.Now().Add(time.Hour)})
	}
	type cred struct {
		name, bearer string
		known        bool // a principal the daemon knows
		stranger     bool // a valid token naming no principal here: 403
	}
	creds := []cred{
		{"none", "", false, false},
		{"wrong key", "k-wrong", false, false},
		{"alice", "k-alice", true, false},
		{"alice (minted key)", aliceMinted, true, false},
		{"bob", "k-bob", true, false},
		{"admin", "k-admin", true, false},
		{"oauth carol", token("carol"), true, false},
		{"oauth unknown subject", token("mallory"), false, true},
		{"oauth subject admin", token("admin"), false, true},
		{"oauth subject local", token("local"), false, true},
	}
	type variant struct {
		name  string
		apply func(r *http.Request)
	}
	variants := []variant{
		{"plain", func(*http.Request) {}},
		{"cross-site", func(r *http.Request) {
			r.Header.Set("Origin", "https://evil.example")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
		}},
		{"foreign Host", func(r *http.Request) { r.Host = "rebind.evil.example:" + port }},
		{"text/plain body", func(r *http.Request) { r.Header.Set("Content-Type", "text/plain;charset=UTF-8") }},
	}
	admissionCodes := []string{"misdirected_host", "csrf", "unauthorized", "unsupported_media_type", "too_large"}

	// Wrong keys spend their address's failed-authentication budget
	// (burst 10): each batch of wrong-key cells comes from another
	// loopback address, so no cell is refused with 429 for its
	// neighbours' guesses.
	wrongFrom, wrongSent := 2, 0
	wrongClient := fromAddr("127.0.0.2")
	plain := &http.Client{Timeout: 10 * time.Second}

	publicPatterns := map[string]bool{}
	for _, p := range d.publicList {
		publicPatterns[p.pattern] = true
	}
	routes := d.Routes()
	// The API's description is in the table, and public (routes.go
	// says why): the matrix below holds it to both.
	if openapi := "GET " + httpapi.OpenAPIPath; !slices.Contains(routes, openapi) || !publicPatterns[openapi] {
		t.Errorf("%s: served %v, public %v; want both", openapi, slices.Contains(routes, openapi), publicPatterns[openapi])
	}
	for p := range publicPatterns {
		if !slices.Contains(routes, p) {
			t.Errorf("publicRoutes lists %q, which the daemon does not serve", p)
		}
	}
	cells := 0
	for _, pattern := range routes {
		targets, ok := routeTargets(pattern)
		if !ok {
			t.Errorf("route %q: the suite does not know how to call it; add it to routeTargets", pattern)
			continue
		}
		for _, tg := range targets {
			for _, c := range creds {
				for _, v := range variants {
					if v.name == "text/plain body" && safe(tg.method) {
						continue
					}
					name := fmt.Sprintf("%s %s as %s, %s", tg.method, tg.path, c.name, v.name)
					req, err := http.NewRequest(tg.method, srv.URL+tg.path, strings.NewReader(tg.body))
					if err != nil {
						t.Fatal(err)
					}
					if tg.body != "" {
						req.Header.Set("Content-Type", "application/json")
					}
					if c.bearer != "" {
						req.Header.Set("Authorization", "Bearer "+c.bearer)
					}
					v.apply(req)
					client := plain
					if c.name == "wrong key" {
						if wrongSent == 9 {
							wrongFrom, wrongSent = wrongFrom+1, 0
							wrongClient = fromAddr(fmt.Sprintf("127.0.%d.%d", wrongFrom/250, 2+wrongFrom%250))
						}
						wrongSent++
						client = wrongClient
					}
					status, code := send(t, client, req)
					cells++
					public := d.public(req)
					var want int
					switch {
					case v.name == "foreign Host":
						want = http.StatusMisdirectedRequest
					case v.name == "cross-site" && (!public || !safe(tg.method)):
						want = http.StatusForbidden
					case !public && c.stranger:
						want = http.StatusForbidden
					case !public && !c.known:
						want = http.StatusUnauthorized
					case v.name == "text/plain body":
						want = http.StatusUnsupportedMediaType
					}
					if want != 0 {
						if status != want {
							t.Errorf("%s: %d %q, want %d", name, status, code, want)
						}
						continue
					}
					if slices.Contains(admissionCodes, code) || status == http.StatusTooManyRequests {
						t.Errorf("%s: refused by admission (%d %q), want it admitted", name, status, code)
					}
				}
			}
		}
	}
	t.Logf("%d routes, %d cells", len(routes), cells)
	if cells < 500 {
		t.Fatalf("only %d cells: the route table looks empty", cells)
	}
}

// target is one concrete request for a route pattern.
type target struct{ method, path, body string }

// routeTargets turns a ServeMux pattern into requests: its method (GET,
// POST and DELETE for a pattern without one), its wildcards filled with
// names that exist where that matters (the agent "shared") and ids that
// do not (nothing is deleted or cancelled for real). A body, when the
// method takes one, is an empty JSON object: every route then answers
// with its own validation error, which is what the suite needs to tell
// admission from the route.
func routeTargets(pattern string) ([]target, bool) {
	method, p, hasMethod := strings.Cut(pattern, " ")
	if !hasMethod {
		method, p = "", pattern
	}
	if strings.Contains(p, "{") {
		r := strings.NewReplacer(
			"{$}", "",
			"{name}", "shared",
			"{id}", "00000000-0000-0000-0000-000000000000",
			"{server}", "nosuch",
			"{path...}", "mcp",
			"{rest...}", "message:send",
		)
		p = r.Replace(p)
		if strings.Contains(p, "{") {
			return nil, false
		}
	}
	methods := []string{method}
	if method == "" {
		methods = []string{"GET", "POST", "DELETE"}
	}
	var out []target
	for _, m := range methods {
		b := ""
		if !safe(m) {
			b = "{}"
		}
		out = append(out, target{m, p, b})
	}
	// Below an agent's A2A routes sits its card, which is public.
	if strings.HasSuffix(p, "/agents/shared/message:send") {
		out = append(out, target{"GET", strings.TrimSuffix(p, "message:send") + ".well-known/agent-card.json", ""})
	}
	return out, true
}

func safe(method string) bool { return method == "GET" || method == "HEAD" || method == "OPTIONS" }

// send does req and returns its status and, for an error body, its code
// (the API's error shape, or a JSON-RPC error's data.code).
func send(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	// Streams (SSE) would hold the answer open: the status and the first
	// bytes are all a cell needs.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 400 {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error struct {
			Code json.RawMessage `json:"code"`
			Data struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	var code string
	if json.Unmarshal(e.Error.Code, &code) != nil {
		code = e.Error.Data.Code
	}
	return resp.StatusCode, code
}

// TestLeastDisclosure: a principal that is not an admin learns that an
// MCP server exists and its state, never how it is reached (command,
// arguments, URL with its token, headers); /metrics, whose labels name
// every agent and tool, is for admins.
func TestLeastDisclosure(t *testing.T) {
	body := `listen = "127.0.0.1:0"
api_key_env = "ADMIN_KEY"

[[principals]]
name = "alice"
key_env = "ALICE_KEY"
agents = ["*"]

[[mcp_servers]]
name = "files"
[mcp_servers.transport]
type = "stdio"
command = "/opt/secret-tools/bin/files-server"
args = ["--token-file", "/srv/private/token"]

[[mcp_servers]]
name = "remote"
[mcp_servers.transport]
type = "http"
url = "https://mcp.example.com/mcp?access_token=sekrit-in-url-123"
`
	_, srv := testDaemon(t, body, map[string]string{"ADMIN_KEY": "k-admin", "ALICE_KEY": "k-alice"})
	get := func(key, path string) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, alice := get("k-alice", "/api/mcp/servers")
	if status != 200 || !strings.Contains(alice, `"files"`) || !strings.Contains(alice, `"remote"`) {
		t.Fatalf("alice's view: %d %s", status, alice)
	}
	for _, secret := range []string{"secret-tools", "token-file", "/srv/private", "mcp.example.com", "sekrit-in-url-123"} {
		if strings.Contains(alice, secret) {
			t.Errorf("a principal that is not an admin sees %q: %s", secret, alice)
		}
	}
	status, admin := get("k-admin", "/api/mcp/servers")
	if status != 200 || !strings.Contains(admin, "/opt/secret-tools/bin/files-server") || !strings.Contains(admin, "mcp.example.com") {
		t.Fatalf("the admin's view lacks the configs: %d %s", status, admin)
	}
	if strings.Contains(admin, "sekrit-in-url-123") {
		t.Errorf("the URL's token is shown even to the admin: %s", admin)
	}
	if status, _ := get("k-alice", "/metrics"); status != http.StatusForbidden {
		t.Errorf("/metrics for a principal that is not an admin: %d, want 403", status)
	}
	if status, _ := get("k-admin", "/metrics"); status != http.StatusOK {
		t.Errorf("/metrics for the admin: %d, want 200", status)
	}
}

// TestBodyOverLimitIs413: a body over [limits] max_body_bytes is 413
// too_large on the legacy A2A send (it once answered 400), whether it
// declares its length (refused before it is read) or streams it chunked
// (cut where the limit is reached).
func TestBodyOverLimitIs413(t *testing.T) {
	body := `listen = "127.0.0.1:0"

[[agents]]
name = "alpha"
provider = "openai"
model = "m"
tools = []

[agents.expose]
a2a = true

[a2a]
enabled = true

[limits]
max_body_bytes = 1048576
`
	_, srv := testDaemon(t, body, nil)
	big := `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"id":"t1","message":{"role":"user","parts":[{"type":"text","text":"` + strings.Repeat("a", 2<<20) + `"}]}}}`
	for _, chunked := range []bool{false, true} {
		var rd io.Reader = strings.NewReader(big)
		if chunked {
			pr, pw := io.Pipe()
			go func() { _, _ = io.Copy(pw, strings.NewReader(big)); pw.Close() }()
			rd = pr
		}
		req, _ := http.NewRequest("POST", srv.URL+"/a2a/tasks/send", rd)
		req.Header.Set("Content-Type", "application/json")
		status, code := send(t, http.DefaultClient, req)
		if status != http.StatusRequestEntityTooLarge || code != "too_large" {
			t.Errorf("chunked=%v: %d %q, want 413 too_large", chunked, status, code)
		}
	}
}
