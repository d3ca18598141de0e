//go:build linux

package reliability

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

const authKey = "auth-matrix-key-7Q2x9"

// authConfig exposes everything the daemon can serve, so that every kind
// of route is registered: API, A2A (1.0, 0.3, legacy), /mcp with
// expose_tools, and (with gateway) an MCP gateway to the stdio fixture.
func authConfig(modelURL string, gateway bool) string {
	extra, gw := "", ""
	if gateway {
		extra, gw = fixtureServer("fx", nil), `gateways = ["fx"]`
	}
	return fmt.Sprintf(`api_key = %q

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "alpha"
provider = "fake"
model = "auth-model"
tools = ["memory_*"]

[agents.expose]
a2a = true
mcp = true

[a2a]
enabled = true

[mcp]
expose_tools = true
%s

[limits]
rate_per_sec = 100000
burst = 100000
`, authKey, modelURL, gw) + extra
}

// publicRoutes are the patterns served without a key: health, the Agent
// Cards, the OAuth redirect (a browser has no key; the single-use state
// it carries is its credential, and a state nobody waits for is refused),
// the dashboard's static assets and login form (which takes the key), and
// the API's OpenAPI document (no data; the same for every daemon of a
// version; read before a client has a key).
// Every other route must refuse a request without the key.
var publicRoutes = []string{"GET /api/health", "GET /livez", "GET /readyz", "GET /.well-known/agent-card.json", "GET /.well-known/agent.json", "GET /oauth/callback",
	"GET /{$}", "GET /ui/", "POST /api/ui/login", "GET /api/openapi.json"}

// routeRequest is one request derived from a registered pattern.
type routeRequest struct {
	pattern, method, path, body string
}

// requestsFor turns a ServeMux pattern into concrete requests: wildcards
// get values that reach real handlers, and method-less patterns are
// tried with GET, POST and DELETE.
func requestsFor(pattern string) []routeRequest {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	repl := strings.NewReplacer("{name}", "alpha", "{id}", "no-such-task", "{rest...}", "tasks", "{server}", "fx")
	if strings.HasPrefix(path, "/api/mcp/servers/") {
		repl = strings.NewReplacer("{name}", "fx")
	}
	if strings.HasPrefix(path, "/api/tools/") {
		repl = strings.NewReplacer("{name}", "memory_recall")
	}
	path = repl.Replace(path)
	if exact, ok := strings.CutSuffix(path, "{$}"); ok {
		path = exact // the path itself, nothing below it
	} else if strings.HasSuffix(path, "/") {
		path += "anything"
	}
	body := "{}"
	switch {
	case path == "/mcp" || strings.HasPrefix(path, "/mcp/"):
		body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"auth","version":"1"}}}`
	case strings.HasPrefix(path, "/a2a"):
		body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	case strings.HasSuffix(path, "/messages"):
		body = `{"message":"hi"}`
	}
	methods := []string{method}
	if method == "" {
		methods = []string{"GET", "POST", "DELETE"}
	}
	var out []routeRequest
	for _, m := range methods {
		b := body
		if m == "GET" || m == "DELETE" {
			b = ""
		}
		out = append(out, routeRequest{pattern: pattern, method: m, path: path, body: b})
	}
	return out
}

// badAuth are Authorization attempts that must all be refused.
var badAuth = []struct {
	name  string
	apply func(h http.Header) string // returns a query string to add
}{
	{"no header", func(http.Header) string { return "" }},
	{"wrong key", func(h http.Header) string { h.Set("Authorization", "Bearer wrong-"+authKey[6:]); return "" }},
	{"key plus a suffix", func(h http.Header) string { h.Set("Authorization", "Bearer "+authKey+"x"); return "" }},
	{"key minus its last byte", func(h http.Header) string { h.Set("Authorization", "Bearer "+authKey[:len(authKey)-1]); return "" }},
	{"key in upper case", func(h http.Header) string { h.Set("Authorization", "Bearer "+strings.ToUpper(authKey)); return "" }},
	{"empty bearer", func(h http.Header) string { h.Set("Authorization", "Bearer "); return "" }},
	{"basic scheme", func(h http.Header) string {
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("agentd:"+authKey)))
		return ""
	}},
	{"token scheme", func(h http.Header) string { h.Set("Authorization", "Token "+authKey); return "" }},
	{"X-API-Key header", func(h http.Header) string { h.Set("X-API-Key", authKey); return "" }},
	{"key in the query", func(http.Header) string { return "?api_key=" + authKey + "&token=" + authKey }},
}

// goodAuth are spellings of the right key that must all be accepted.
var goodAuth = []string{"Bearer " + authKey, "bearer " + authKey, "BEARER  " + authKey + " "}

// TestAuthMatrix enumerates every route the daemon registers and proves
// each non-public one refuses a missing, wrong or misplaced key, over the
// HTTP API, /mcp and A2A alike; and that the right key is accepted.
func TestAuthMatrix(t *testing.T) {
	track(t, areaAuth, false)
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "authorised answer"}))
	p := startDaemon(t, daemonSpec{Key: authKey, TOML: authConfig(model.URL, true)})
	p.waitTool(t, "mcp_fx_env", 20*time.Second)

	routes := p.D.Routes()
	if len(routes) < 20 {
		t.Fatalf("Routes() returned %d patterns: %v", len(routes), routes)
	}
	for _, want := range []string{"/mcp", "/mcp/gateway/{server}", "POST /a2a/agents/{name}", "POST /api/agents/{name}/messages", "GET /.well-known/agent-card.json"} {
		if !slices.Contains(routes, want) {
			t.Errorf("Routes() lacks %q: the enumeration is incomplete", want)
		}
	}
	var refused, letThrough, accepted, public int
	var kinds = map[string]int{}
	for _, pattern := range routes {
		isPublic := slices.Contains(publicRoutes, pattern)
		_, path, ok := strings.Cut(pattern, " ")
		if !ok {
			path = pattern
		}
		switch {
		case strings.HasPrefix(path, "/mcp"):
			kinds["MCP"]++
		case strings.HasPrefix(path, "/a2a") || strings.HasPrefix(path, "/.well-known"):
			kinds["A2A"]++
		default:
			kinds["HTTP API"]++
		}
		for _, rr := range requestsFor(pattern) {
			if isPublic {
				r := p.callKey(t, rr.method, rr.path, nilIfEmpty(rr.body), "", nil)
				if r.Status == http.StatusUnauthorized {
					t.Errorf("public %s %s refused without a key", rr.method, rr.path)
				}
				public++
				continue
			}
			for _, bad := range badAuth {
				h := http.Header{}
				q := bad.apply(h)
				r := p.guess(t, rr.method, rr.path+q, nilIfEmpty(rr.body), "", h)
				var e apiError
				if r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" || json.Unmarshal(r.Body, &e) != nil || e.Error.Code != "unauthorized" {
					letThrough++
					t.Errorf("%s %s (%s) with %s: %v, want 401 unauthorized", rr.method, rr.path, pattern, bad.name, r)
					continue
				}
				refused++
			}
			for _, good := range goodAuth {
				r := p.callKey(t, rr.method, rr.path, nilIfEmpty(rr.body), "", http.Header{"Authorization": {good}})
				if r.Status == http.StatusUnauthorized {
					t.Errorf("%s %s (%s) with %q: refused", rr.method, rr.path, pattern, good)
					continue
				}
				accepted++
			}
		}
	}
	if r := p.callKey(t, "GET", "/oauth/callback?state=forged&code=stolen", nil, "", nil); r.Status != http.StatusBadRequest {
		t.Errorf("an OAuth redirect with a state nobody waits for: %v, want 400", r)
	}
	// A public card under the agent routes stays public; anything else
	// under the same pattern does not.
	if r := p.callKey(t, "GET", "/a2a/agents/alpha/.well-known/agent-card.json", nil, "", nil); r.Status != http.StatusOK {
		t.Errorf("the agent's public card: %v", r)
	}
	fig(t, areaAuth, "Routes enumerated (Daemon.Routes)", "%d patterns: %d HTTP API, %d A2A, %d MCP; %d public (%s)",
		len(routes), kinds["HTTP API"], kinds["A2A"], kinds["MCP"], len(publicRoutes), strings.Join(publicRoutes, ", "))
	fig(t, areaAuth, "Requests without the right key", "%d sent (%d spellings × every non-public route and method): %d answered 401 with WWW-Authenticate, %d not",
		refused+letThrough, len(badAuth), refused, letThrough)
	fig(t, areaAuth, "Public routes without a key", "%d requests, none refused", public)
	fig(t, areaAuth, "Requests with the right key", "%d sent (%d spellings): %d accepted", accepted, len(goodAuth), accepted)

	t.Run("public_card = false", func(t *testing.T) {
		q := startDaemon(t, daemonSpec{Key: authKey, TOML: strings.Replace(authConfig(model.URL, false), "[a2a]\nenabled = true\n", "[a2a]\nenabled = true\npublic_card = false\n", 1)})
		for _, path := range []string{"/.well-known/agent-card.json", "/.well-known/agent.json", "/a2a/agents/alpha/.well-known/agent-card.json", "/a2a/agents/alpha/.well-known/agent.json"} {
			if r := q.callKey(t, "GET", path, nil, "", nil); r.Status != http.StatusUnauthorized {
				t.Errorf("%s without a key with public_card = false: %v", path, r)
			}
			if r := q.callKey(t, "GET", path, nil, authKey, nil); r.Status != http.StatusOK {
				t.Errorf("%s with the key: %v", path, r)
			}
		}
		if r := q.callKey(t, "GET", "/api/health", nil, "", nil); r.Status != http.StatusOK {
			t.Errorf("health with public_card = false: %v", r)
		}
		fig(t, areaAuth, "With public_card = false", "the Agent Cards refuse a missing key too; health stays public")
	})

	t.Run("protocol clients", func(t *testing.T) {
		ctx := context.Background()
		for _, tc := range []struct {
			key  string
			want bool
		}{{"wrong-key", false}, {authKey, true}} {
			hc := &http.Client{Transport: bearerTransport{key: tc.key, next: loadTransport()}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
			if (err == nil) != tc.want {
				t.Errorf("MCP client with key %q: connect error %v", tc.key, err)
			}
			if err == nil {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agentd_agent_alpha", Arguments: map[string]any{"message": "hi"}})
				if err != nil || res.IsError {
					t.Errorf("MCP tools/call with the key: %v %+v", err, res)
				}
				cs.Close()
			}
			cl := a2aClient(t, p.URL, "alpha", tc.key, loadTransport())
			res, err := cl.SendMessage(ctx, textMessage("hi"))
			if (err == nil) != tc.want {
				t.Errorf("A2A client with key %q: %v %v", tc.key, res, err)
			}
			if err == nil {
				if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
					t.Errorf("A2A send with the key: %+v", res)
				}
			}
		}
		fig(t, areaAuth, "Protocol clients (go-sdk MCP, a2a-go)", "refused with a wrong key, served with the right one")
	})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
