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

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store"
)

// TestPrincipalsOverTheAPI: three principals with different rights use
// the HTTP API of one daemon. Each may do what its entry allows and no
// more, sees its own sessions and audit records only (an admin sees all),
// and the records name who did what.
func TestPrincipalsOverTheAPI(t *testing.T) {
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
tools = []

[[agents]]
name = "deployer"
provider = "fake"
model = "m"
tools = []

[[principals]]
name = "ci-bot"
key_env = "CI_KEY"
agents = ["reviewer"]
tools = ["file_list"]

[[principals]]
name = "alice"
key_env = "ALICE_KEY"
agents = ["*"]
`, model.URL)
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ADMIN_KEY": "k-admin", "CI_KEY": "k-ci", "ALICE_KEY": "k-alice"}
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

	call := func(key, method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		if strings.Contains(string(b), "k-ci") || strings.Contains(string(b), "k-alice") || strings.Contains(string(b), "k-admin") {
			t.Fatalf("%s %s: a key appears in the answer: %s", method, path, b)
		}
		return resp.StatusCode, out
	}
	for _, tc := range []struct {
		who, key, method, path, body string
		want                         int
	}{
		{"nobody", "", "GET", "/api/sessions", "", 401},
		{"wrong key", "k-nope", "GET", "/api/sessions", "", 401},
		{"ci-bot runs reviewer", "k-ci", "POST", "/api/agents/reviewer/messages", `{"message":"hi"}`, 200},
		{"ci-bot may not run deployer", "k-ci", "POST", "/api/agents/deployer/messages", `{"message":"hi"}`, 403},
		{"ci-bot may not stream deployer", "k-ci", "POST", "/api/agents/deployer/messages", `{"message":"hi","stream":true}`, 403},
		{"alice runs deployer", "k-alice", "POST", "/api/agents/deployer/messages", `{"message":"hi"}`, 200},
		{"ci-bot calls its tool", "k-ci", "POST", "/api/tools/file_list/call", `{"path":"."}`, 200},
		{"alice may not call tools", "k-alice", "POST", "/api/tools/file_list/call", `{"path":"."}`, 403},
		{"ci-bot may not create agents", "k-ci", "POST", "/api/agents", `{"name":"x","provider":"fake","model":"m"}`, 403},
		{"ci-bot may not add servers", "k-ci", "POST", "/api/mcp/servers", `{}`, 403},
		{"admin creates agents", "k-admin", "POST", "/api/agents", `{"name":"x","provider":"fake","model":"m"}`, 201},
	} {
		if got, out := call(tc.key, tc.method, tc.path, tc.body); got != tc.want {
			t.Errorf("%s: %s %s = %d, want %d (%v)", tc.who, tc.method, tc.path, got, tc.want, out)
		}
	}

	sessions := func(key string) []string {
		_, out := call(key, "GET", "/api/sessions", "")
		var names []string
		for _, s := range out["sessions"].([]any) {
			m := s.(map[string]any)
			names = append(names, m["agent"].(string)+"/"+fmt.Sprint(m["principal"]))
		}
		return names
	}
	if got := fmt.Sprint(sessions("k-ci")); got != "[reviewer/ci-bot]" {
		t.Errorf("ci-bot sees sessions %s", got)
	}
	if got := fmt.Sprint(sessions("k-alice")); got != "[deployer/alice]" {
		t.Errorf("alice sees sessions %s", got)
	}
	if got := len(sessions("k-admin")); got != 2 {
		t.Errorf("admin sees %d sessions, want 2", got)
	}
	_, out := call("k-ci", "GET", "/api/sessions", "")
	ciSession := out["sessions"].([]any)[0].(map[string]any)["id"].(string)
	if got, _ := call("k-alice", "GET", "/api/sessions/"+ciSession, ""); got != 404 {
		t.Errorf("alice reads ci-bot's session: %d, want 404", got)
	}
	if got, _ := call("k-alice", "DELETE", "/api/sessions/"+ciSession, ""); got != 404 {
		t.Errorf("alice deletes ci-bot's session: %d, want 404", got)
	}
	if got, _ := call("k-alice", "POST", "/api/agents/reviewer/messages", `{"message":"hi","session_id":"`+ciSession+`"}`); got != 404 {
		t.Errorf("alice continues ci-bot's session: %d, want 404", got)
	}

	audit := func(key string) []string {
		_, out := call(key, "GET", "/api/audit", "")
		var who []string
		for _, r := range out["records"].([]any) {
			m := r.(map[string]any)
			who = append(who, fmt.Sprint(m["tool"], "/", m["principal"]))
		}
		return who
	}
	if got := fmt.Sprint(audit("k-ci")); got != "[file_list/ci-bot]" {
		t.Errorf("ci-bot's audit: %s", got)
	}
	if got := fmt.Sprint(audit("k-alice")); got != "[]" {
		t.Errorf("alice's audit: %s", got)
	}
	if got := fmt.Sprint(audit("k-admin")); got != "[file_list/ci-bot]" {
		t.Errorf("admin's audit: %s", got)
	}
}

// TestPrincipalsOverA2A: the A2A edge lets a principal use only the
// agents it may run, and the task's session carries its name.
func TestPrincipalsOverA2A(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "done"}))
	home := t.TempDir()
	body := fmt.Sprintf(`listen = "127.0.0.1:0"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "reviewer"
provider = "fake"
model = "m"
tools = []
[agents.expose]
a2a = true

[[agents]]
name = "deployer"
provider = "fake"
model = "m"
tools = []
[agents.expose]
a2a = true

[[principals]]
name = "ci-bot"
key_env = "CI_KEY"
agents = ["reviewer"]

[a2a]
enabled = true
`, model.URL)
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(k string) (string, bool) {
		if k == "CI_KEY" {
			return "k-ci", true
		}
		return "", false
	}})
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

	send := func(agentName string) (int, string) {
		msg := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
		req, _ := http.NewRequest("POST", srv.URL+"/a2a/agents/"+agentName, strings.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k-ci")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := send("deployer"); code != 403 || !strings.Contains(b, "forbidden") {
		t.Fatalf("ci-bot to deployer: %d %s", code, b)
	}
	code, b := send("reviewer")
	if code != 200 || !strings.Contains(b, "TASK_STATE_COMPLETED") {
		t.Fatalf("ci-bot to reviewer: %d %s", code, b)
	}
	ss, err := d.Store.ListSessions(context.Background(), store.SessionFilter{Principal: "ci-bot"})
	if err != nil || len(ss) != 1 || ss[0].Agent != "reviewer" || ss[0].Origin != "a2a" {
		t.Fatalf("ci-bot's A2A session: %+v, %v", ss, err)
	}
}
