package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestDashboardWiring: the daemon serves the dashboard at / without a key
// and with its CSP, the login form's key becomes a session cookie that
// authenticates API reads, and a write made with the cookie needs the
// CSRF token. A principal's cookie sees only its agents.
func TestDashboardWiring(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	home := t.TempDir()
	body := fmt.Sprintf(`listen = "127.0.0.1:0"
api_key_env = "ADMIN_KEY"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "reviewer"
provider = "fake"
model = "m"

[[agents]]
name = "deployer"
provider = "fake"
model = "m"

[[principals]]
name = "ci-bot"
key_env = "CI_KEY"
agents = ["reviewer"]
`, model.URL)
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ADMIN_KEY": "k-admin", "CI_KEY": "k-ci"}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()

	do := func(method, p, body string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+p, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, body := do("GET", "/", "", nil)
	page := body
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") || !strings.Contains(page, "/ui/js/app.js") {
		t.Fatalf("GET / without a key: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := do("GET", "/ui/js/app.js", "", nil); resp.StatusCode != 200 {
		t.Fatalf("GET the app module without a key: %d", resp.StatusCode)
	}
	if resp, _ := do("GET", "/api/ui/session", "", nil); resp.StatusCode != 401 {
		t.Fatalf("session without a cookie: %d", resp.StatusCode)
	}

	login := func(key string) (cookie, csrf string) {
		t.Helper()
		resp, body := do("POST", "/api/ui/login", `{"key":"`+key+`"}`, map[string]string{"Content-Type": "application/json"})
		var info struct {
			CSRF string `json:"csrf_token"`
		}
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &info) != nil || len(resp.Cookies()) != 1 {
			t.Fatalf("login: %d %s", resp.StatusCode, body)
		}
		c := resp.Cookies()[0]
		if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
			t.Fatalf("cookie %+v", c)
		}
		return c.Name + "=" + c.Value, info.CSRF
	}
	cookie, csrf := login("k-admin")
	if resp, body := do("GET", "/api/agents", "", map[string]string{"Cookie": cookie}); resp.StatusCode != 200 || !strings.Contains(body, "deployer") {
		t.Fatalf("agents with the admin's cookie: %d %s", resp.StatusCode, body)
	}
	newAgent := `{"name":"x","provider":"fake","model":"m"}`
	if resp, body := do("POST", "/api/agents", newAgent, map[string]string{"Cookie": cookie}); resp.StatusCode != 403 || !strings.Contains(body, `"csrf"`) {
		t.Fatalf("write with the cookie, without the token: %d %s", resp.StatusCode, body)
	}
	if resp, body := do("POST", "/api/agents", newAgent, map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": "http://evil.example"}); resp.StatusCode != 403 {
		t.Fatalf("write with the token from another origin: %d %s", resp.StatusCode, body)
	}
	if resp, body := do("POST", "/api/agents", newAgent, map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": srv.URL}); resp.StatusCode != 201 {
		t.Fatalf("write with the token: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do("POST", "/mcp", `{}`, map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf}); resp.StatusCode != 401 {
		t.Fatalf("/mcp with the dashboard's cookie: %d, want 401 (the cookie is for /api/)", resp.StatusCode)
	}

	ci, ciCSRF := login("k-ci")
	// The dashboard's chat: a message sent with the cookie and the token.
	if resp, body := do("POST", "/api/agents/reviewer/messages", `{"message":"check the release notes"}`, map[string]string{"Cookie": ci, "X-CSRF-Token": ciCSRF}); resp.StatusCode != 200 {
		t.Fatalf("ci-bot's message: %d %s", resp.StatusCode, body)
	}
	if _, body := do("GET", "/api/sessions?q=RELEASE", "", map[string]string{"Cookie": ci}); !strings.Contains(body, "check the release notes") {
		t.Fatalf("search: %s", body)
	}
	if _, body := do("GET", "/api/sessions?q=nowhere", "", map[string]string{"Cookie": ci}); strings.Contains(body, "release") {
		t.Fatalf("search for nothing: %s", body)
	}
	if _, body := do("GET", "/api/sessions?q=release", "", map[string]string{"Cookie": cookie}); !strings.Contains(body, "release") {
		t.Fatalf("the admin's search: %s", body)
	}
	if resp, body := do("POST", "/api/agents/deployer/messages", `{"message":"admin run"}`, map[string]string{"Authorization": "Bearer k-admin"}); resp.StatusCode != 200 {
		t.Fatalf("admin's message: %d %s", resp.StatusCode, body)
	}
	var runs struct {
		Runs []struct{ Agent, Principal string } `json:"runs"`
	}
	_, body = do("GET", "/api/runs", "", map[string]string{"Cookie": ci})
	if json.Unmarshal([]byte(body), &runs) != nil || len(runs.Runs) != 1 || runs.Runs[0].Principal != "ci-bot" {
		t.Fatalf("ci-bot's runs: %s", body)
	}
	_, body = do("GET", "/api/runs", "", map[string]string{"Cookie": cookie})
	if json.Unmarshal([]byte(body), &runs) != nil || len(runs.Runs) != 2 {
		t.Fatalf("the admin's runs: %s", body)
	}
	if resp, body := do("GET", "/api/agents", "", map[string]string{"Cookie": ci}); resp.StatusCode != 200 || strings.Contains(body, "deployer") || !strings.Contains(body, "reviewer") {
		t.Fatalf("ci-bot's agents: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do("GET", "/api/agents/deployer", "", map[string]string{"Cookie": ci}); resp.StatusCode != 404 {
		t.Fatalf("ci-bot reads an agent it may not run: %d", resp.StatusCode)
	}
}

// TestDashboardAPIs covers what the dashboard's forms and filters need
// from the API: validation errors that name their fields, disabling and
// enabling a server registered through the API, and audit filters.
func TestDashboardAPIs(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	body := fmt.Sprintf("listen = \"127.0.0.1:0\"\n\n[providers.fake]\nkind = \"openai\"\nbase_url = %q\n\n[[agents]]\nname = \"a\"\nprovider = \"fake\"\nmodel = \"m\"\n", model.URL)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	do := func(method, p, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+p, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		b, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}
	fields := func(out map[string]any) (string, map[string]any) {
		e, _ := out["error"].(map[string]any)
		f, _ := e["fields"].(map[string]any)
		s, _ := e["field"].(string)
		return s, f
	}

	t.Run("validation errors name their fields", func(t *testing.T) {
		for _, tc := range []struct {
			path, body, field string
			also              []string
		}{
			{"/api/mcp/servers", `{"name":"bad name","transport":{"type":"stdio"}}`, "name", []string{"transport.command"}},
			{"/api/mcp/servers", `{"name":"ok","transport":{"type":"http","url":"ftp://x"}}`, "transport.url", nil},
			{"/api/mcp/servers", `{"name":"ok","transport":{"type":"stdio","command":"x"},"colour":"red"}`, "colour", nil},
			{"/api/agents", `{"name":"x","provider":"fake"}`, "model", nil},
			{"/api/agents", `{"name":"x","provider":"nope","model":"m"}`, "provider", nil},
			{"/api/agents", `{"name":"x","provider":"fake","model":"m","temperature":"hot"}`, "temperature", nil},
			// One bad max_tokens marks max_tokens alone (it marked three).
			{"/api/agents", `{"name":"x","provider":"fake","model":"m","max_tokens":-1}`, "max_tokens", nil},
			// Every problem at once, each by its field; a malformed glob too.
			{"/api/agents", `{"name":"bad name","provider":"nope","model":"m","max_tokens":-2,"tools":["file_*","["]}`, "name", []string{"provider", "max_tokens", "tools[1]"}},
		} {
			code, out := do("POST", tc.path, tc.body)
			field, all := fields(out)
			if code != 400 || field != tc.field {
				t.Errorf("POST %s %s: %d field %q, want 400 field %q (%v)", tc.path, tc.body, code, field, tc.field, out)
			}
			// A decode error (temperature "hot") names its field without a fields map.
			if tc.path == "/api/agents" && len(all) > 0 && len(all) != 1+len(tc.also) {
				t.Errorf("POST %s %s: fields %v, want %q and %q only", tc.path, tc.body, all, tc.field, tc.also)
			}
			for _, f := range tc.also {
				if all[f] == nil {
					t.Errorf("POST %s %s: fields %v lack %q", tc.path, tc.body, all, f)
				}
			}
		}
		if code, out := do("POST", "/api/mcp/servers", `{"name":"a1","transport":{"type":"stdio","command":"/nonexistent/server"}}`); code != 201 {
			t.Fatalf("add: %d %v", code, out)
		}
		if code, out := do("POST", "/api/mcp/servers", `{"name":"a1","transport":{"type":"stdio","command":"/nonexistent/server"}}`); code != 409 {
			t.Fatalf("add twice: %d %v", code, out)
		} else if f, _ := fields(out); f != "name" {
			t.Errorf("add twice names field %q", f)
		}
	})

	t.Run("disable and enable a server registered through the API", func(t *testing.T) {
		state := func() string {
			for _, s := range d.MCP.Status() {
				if s.Name == "a1" {
					return s.State
				}
			}
			return "missing"
		}
		if code, out := do("PATCH", "/api/mcp/servers/a1", `{"enabled":false}`); code != 204 {
			t.Fatalf("disable: %d %v", code, out)
		}
		if got := state(); got != "disabled" {
			t.Fatalf("state after disable: %s", got)
		}
		recs, _ := d.Store.ListMCPServers(context.Background())
		if len(recs) != 1 || !strings.Contains(string(recs[0].Config), `"enabled":false`) {
			t.Fatalf("stored: %+v", recs)
		}
		if code, _ := do("PATCH", "/api/mcp/servers/a1", `{"enabled":true}`); code != 204 {
			t.Fatalf("enable: %d", code)
		}
		if got := state(); got == "disabled" || got == "missing" {
			t.Fatalf("state after enable: %s", got)
		}
		if code, _ := do("PATCH", "/api/mcp/servers/nope", `{"enabled":true}`); code != 404 {
			t.Errorf("unknown server: %d", code)
		}
		if code, out := do("PATCH", "/api/mcp/servers/a1", `{}`); code != 400 {
			t.Errorf("no enabled: %d %v", code, out)
		}
	})

	t.Run("audit filters", func(t *testing.T) {
		if code, out := do("POST", "/api/tools/agent_list/call", `{}`); code != 200 {
			t.Fatalf("tool call: %d %v", code, out)
		}
		count := func(q string) int {
			t.Helper()
			code, out := do("GET", "/api/audit?"+q, "")
			if code != 200 {
				t.Fatalf("audit?%s: %d %v", q, code, out)
			}
			recs, _ := out["records"].([]any)
			return len(recs)
		}
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		for q, want := range map[string]int{
			"tool=agent_list": 1, "decision=allow": 1, "decision=deny": 0, "outcome=ok": 1, "outcome=error": 0,
			"until=" + future: 1, "until=" + past: 0, "since=" + past + "&until=" + future + "&agent=operator": 1,
		} {
			if got := count(q); got != want {
				t.Errorf("audit?%s: %d records, want %d", q, got, want)
			}
		}
		if code, out := do("GET", "/api/audit?until=yesterday", ""); code != 400 {
			t.Errorf("bad until: %d", code)
		} else if f, _ := fields(out); f != "until" {
			t.Errorf("bad until names %q", f)
		}
	})
}

// TestApprovalsFromEdgesThatCannotAsk: a run started over the HTTP API,
// or by an MCP client without elicitation, cannot ask its client; it waits
// for a decision on the dashboard's queue (GET/POST /api/approvals)
// instead of being denied at once; only its principal and admins see and
// decide it; without a decision the timeout denies it with a reason the
// model reads.
func TestApprovalsFromEdgesThatCannotAsk(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "tool" {
			return llmtest.Reply{Text: "tool said: " + last.ToolResults[0].Content}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_write", `{"path":"note.txt","content":"hi"}`)}}
	})
	home := t.TempDir()
	body := fmt.Sprintf(`listen = "127.0.0.1:0"
api_key_env = "ADMIN_KEY"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "writer"
provider = "fake"
model = "m"
tools = ["file_write"]

[agents.expose]
mcp = true

[tools]
approval_timeout_secs = 1

[[principals]]
name = "ops"
key_env = "OPS_KEY"
agents = ["*"]
ask_tools = ["file_write"]

[[principals]]
name = "other"
key_env = "OTHER_KEY"
agents = ["*"]
`, model.URL)
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ADMIN_KEY": "k-admin", "OPS_KEY": "k-ops", "OTHER_KEY": "k-other"}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	do := func(key, method, p, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+p, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	pending := func(key string) []map[string]any {
		t.Helper()
		_, body := do(key, "GET", "/api/approvals", "")
		var out struct{ Approvals []map[string]any }
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("approvals: %s", body)
		}
		return out.Approvals
	}
	waitQueued := func() {
		t.Helper()
		ch := make(chan struct{}, 1)
		stop := d.Approvals.OnChange(func() {
			select {
			case ch <- struct{}{}:
			default:
			}
		})
		defer stop()
		for len(d.Approvals.Pending()) == 0 {
			select {
			case <-ch:
			case <-time.After(10 * time.Second):
				t.Fatal("no approval request was queued")
			}
		}
	}

	// Decided in time: the call runs and the run finishes.
	reply := make(chan string, 1)
	go func() {
		_, body := do("k-ops", "POST", "/api/agents/writer/messages", `{"message":"write it"}`)
		reply <- body
	}()
	waitQueued()
	mine := pending("k-ops")
	if len(mine) != 1 || mine[0]["tool"] != "file_write" || mine[0]["principal"] != "ops" || mine[0]["agent"] != "writer" {
		t.Fatalf("ops's queue: %v", mine)
	}
	if got := pending("k-other"); len(got) != 0 {
		t.Fatalf("another principal sees %v", got)
	}
	if got := pending("k-admin"); len(got) != 1 {
		t.Fatalf("the admin sees %v", got)
	}
	id := mine[0]["id"].(string)
	if code, _ := do("k-other", "POST", "/api/approvals/"+id, `{"decision":"once"}`); code != 404 {
		t.Fatalf("another principal decides: %d", code)
	}
	if code, body := do("k-ops", "POST", "/api/approvals/"+id, `{"decision":"maybe"}`); code != 400 || !strings.Contains(body, `"field": "decision"`) {
		t.Fatalf("a bad decision: %d %s", code, body)
	}
	if code, body := do("k-ops", "POST", "/api/approvals/"+id, `{"decision":"once"}`); code != 204 {
		t.Fatalf("decide: %d %s", code, body)
	}
	if got := <-reply; !strings.Contains(got, "tool said: wrote") {
		t.Fatalf("the approved run answered %s", got)
	}

	// An MCP client without elicitation: the same queue.
	hc := &http.Client{Transport: &bearerRT{"k-ops", http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "no-elicitation", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcpReply := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "agentd_agent_writer", Arguments: map[string]any{"message": "write over mcp"}})
		if err != nil {
			mcpReply <- err.Error()
			return
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		mcpReply <- b.String()
	}()
	waitQueued()
	if got := pending("k-ops"); len(got) != 1 {
		t.Fatalf("the MCP run's request: %v", got)
	} else if code, body := do("k-admin", "POST", "/api/approvals/"+got[0]["id"].(string), `{"decision":"once"}`); code != 204 {
		t.Fatalf("the admin decides: %d %s", code, body)
	}
	if got := <-mcpReply; !strings.Contains(got, "tool said: wrote") {
		t.Fatalf("the approved MCP call answered %q", got)
	}

	// Not decided: the timeout denies it, and says why.
	code, body := do("k-ops", "POST", "/api/agents/writer/messages", `{"message":"write again"}`)
	if code != 200 || !strings.Contains(body, "no operator decided within 1s") {
		t.Fatalf("the undecided run answered %d %s", code, body)
	}
	if n := len(d.Approvals.Pending()); n != 0 {
		t.Fatalf("%d requests left", n)
	}
}
