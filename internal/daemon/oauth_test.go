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

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/oauthrs/oauthrstest"
)

// TestOAuthResourceServer: with [auth.oauth], the daemon publishes
// Protected Resource Metadata naming the issuer, answers 401 with a
// challenge that points to it (and says why a token was refused), and
// serves a request made with a valid access token as the principal the
// token names, with that principal's rights.
func TestOAuthResourceServer(t *testing.T) {
	is := oauthrstest.New(t)
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	home := t.TempDir()
	const aud = "http://agents.test"
	body := fmt.Sprintf(`listen = "127.0.0.1:0"

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
agents = ["reviewer"]

[agents.expose]
a2a = true

[a2a]
enabled = true

[auth.oauth]
issuer = %q
audience = %q
allow_private = true
scope_rights = true
`, model.URL, is.URL, aud)
	path := filepath.Join(home, "config.toml")
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

	do := func(token, method, path, body string) (*http.Response, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, b := do("", "GET", "/.well-known/oauth-protected-resource/mcp", "")
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(b), &md) != nil || md.Resource != aud || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != is.URL {
		t.Fatalf("metadata: %d %s", resp.StatusCode, b)
	}

	// The Agent Card declares both ways in: a key, or a token from the issuer.
	resp, b = do("", "GET", "/a2a/agents/deployer/.well-known/agent-card.json", "")
	if resp.StatusCode != 200 || !strings.Contains(b, `"oauth2MetadataUrl": "`+is.URL+`/.well-known/oauth-authorization-server"`) || !strings.Contains(b, `"tokenUrl": "`+is.URL+`/token"`) {
		t.Fatalf("agent card: %d %s", resp.StatusCode, b)
	}

	resp, _ = do("", "POST", "/mcp", `{}`)
	want := `resource_metadata="` + srv.URL + `/.well-known/oauth-protected-resource/mcp"`
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("no token: %d, WWW-Authenticate %q, want it to contain %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	expired := is.Token(t, oauthrstest.Claims{Subject: "ci-bot", Audience: []string{aud}, Expiry: time.Now().Add(-time.Hour)})
	resp, _ = do(expired, "GET", "/api/sessions", "")
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("expired token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	ci := is.Token(t, oauthrstest.Claims{Subject: "ci-bot", Audience: []string{aud}})
	if resp, b := do(ci, "POST", "/api/agents/reviewer/messages", `{"message":"hi"}`); resp.StatusCode != 200 {
		t.Fatalf("ci-bot's token runs reviewer: %d %s", resp.StatusCode, b)
	}
	if resp, _ := do(ci, "POST", "/api/agents/deployer/messages", `{"message":"hi"}`); resp.StatusCode != 403 {
		t.Fatalf("ci-bot's token runs deployer: %d", resp.StatusCode)
	}
	scoped := is.Token(t, oauthrstest.Claims{Subject: "zoe", Audience: []string{aud}, Scope: "agentd:agent:deployer"})
	if resp, b := do(scoped, "POST", "/api/agents/deployer/messages", `{"message":"hi"}`); resp.StatusCode != 200 {
		t.Fatalf("scoped token runs deployer: %d %s", resp.StatusCode, b)
	}
	_, b = do(scoped, "GET", "/api/sessions", "")
	if !strings.Contains(b, `"principal": "oauth:zoe"`) || strings.Contains(b, `"principal": "ci-bot"`) {
		t.Fatalf("zoe's sessions: %s", b)
	}
}

// TestOAuthReservedSubjects: a token is a principal only through the
// configuration. Tokens whose subject is admin or local (with an admin
// scope, even) or a subject no [[principals]] entry names are refused:
// they never read the sessions of the operator's key, nor anyone's. A
// subject listed in an entry's oauth_subjects is that principal.
func TestOAuthReservedSubjects(t *testing.T) {
	is := oauthrstest.New(t)
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	const aud = "http://agents.test"
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

[[principals]]
name = "ci-bot"
agents = ["reviewer"]
oauth_subjects = ["auth0|5f1c"]

[auth.oauth]
issuer = %q
audience = %q
allow_private = true
`, model.URL, is.URL, aud)
	_, srv := testDaemon(t, body, map[string]string{"ADMIN_KEY": "k-admin"})
	do := func(token, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// The operator's session, which no token may read.
	if code, b := do("k-admin", "POST", "/api/agents/reviewer/messages", `{"message":"the operator's secret"}`); code != 200 {
		t.Fatalf("admin's message: %d %s", code, b)
	}
	for _, sub := range []string{"admin", "local", "mallory"} {
		tok := is.Token(t, oauthrstest.Claims{Subject: sub, Audience: []string{aud}, Scope: "agentd:admin"})
		code, b := do(tok, "GET", "/api/sessions", "")
		// A valid token of no principal here: 403, not a challenge, and
		// it reads nothing.
		if code != http.StatusForbidden || strings.Contains(b, "the operator's secret") || !strings.Contains(b, "names no principal of this daemon") {
			t.Errorf("token with subject %q: %d %s", sub, code, b)
		}
		if code, b := do(tok, "POST", "/api/agents/reviewer/messages", `{"message":"hi"}`); code != http.StatusForbidden {
			t.Errorf("token with subject %q runs reviewer: %s", sub, b)
		}
	}
	mapped := is.Token(t, oauthrstest.Claims{Subject: "auth0|5f1c", Audience: []string{aud}})
	if code, b := do(mapped, "POST", "/api/agents/reviewer/messages", `{"message":"hi"}`); code != 200 {
		t.Fatalf("mapped subject runs reviewer: %d %s", code, b)
	}
	code, b := do(mapped, "GET", "/api/sessions", "")
	if code != 200 || !strings.Contains(b, `"principal": "ci-bot"`) || strings.Contains(b, `"principal": "admin"`) {
		t.Fatalf("ci-bot's sessions through its mapped subject: %d %s", code, b)
	}
}
