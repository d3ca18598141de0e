package daemon

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store"
)

type bearerRT struct {
	key  string
	next http.RoundTripper
}

func (b *bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// TestPrincipalsOverMCP: over /mcp a principal lists only the agent tools
// it may run and the tools it may call, is refused the others, and its
// runs and calls are recorded under its name; a session opened by one
// principal cannot be used with another's key.
func TestPrincipalsOverMCP(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "reviewed"}))
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
mcp = true

[[agents]]
name = "deployer"
provider = "fake"
model = "m"
tools = []
[agents.expose]
mcp = true

[mcp]
expose_tools = true

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
	env := map[string]string{"CI_KEY": "k-ci", "ALICE_KEY": "k-alice"}
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
	ctx := context.Background()

	connect := func(key string) *mcp.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: &bearerRT{key, http.DefaultTransport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true},
			// A session-era client: the session binding is what is tested.
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	names := func(cs *mcp.ClientSession) []string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return out
	}
	ci := connect("k-ci")
	defer ci.Close()
	if got := fmt.Sprint(names(ci)); !strings.Contains(got, "file_list") || strings.Contains(got, "file_read") || strings.Contains(got, "deployer") || !strings.Contains(got, "reviewer") {
		t.Fatalf("ci-bot lists %s", got)
	}
	alice := connect("k-alice")
	defer alice.Close()
	if got := fmt.Sprint(names(alice)); strings.Contains(got, "file_") || !strings.Contains(got, "deployer") {
		t.Fatalf("alice lists %s", got)
	}

	toolNamed := func(cs *mcp.ClientSession, agentName string) string {
		res, _ := cs.ListTools(ctx, nil)
		for _, tl := range res.Tools {
			if strings.Contains(tl.Title, agentName) || tl.Name == agentName {
				return tl.Name
			}
		}
		return agentName
	}
	res, err := ci.CallTool(ctx, &mcp.CallToolParams{Name: toolNamed(ci, "reviewer"), Arguments: map[string]any{"message": "check"}})
	if err != nil || res.IsError {
		t.Fatalf("ci-bot runs reviewer: %+v %v", res, err)
	}
	res, err = ci.CallTool(ctx, &mcp.CallToolParams{Name: toolNamed(alice, "deployer"), Arguments: map[string]any{"message": "ship"}})
	if err == nil && !res.IsError {
		t.Fatalf("ci-bot ran deployer: %+v", res)
	}
	res, err = ci.CallTool(ctx, &mcp.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": "x"}})
	if err == nil && !res.IsError {
		t.Fatalf("ci-bot called file_read: %+v", res)
	}
	if _, err := ci.CallTool(ctx, &mcp.CallToolParams{Name: "file_list", Arguments: map[string]any{"path": "."}}); err != nil {
		t.Fatal(err)
	}
	ss, _ := d.Store.ListSessions(ctx, store.SessionFilter{Principal: "ci-bot"})
	recs, _ := d.Audit.QueryAudit(ctx, store.AuditFilter{Principal: "ci-bot", Tool: "file_list"})
	if len(ss) != 1 || ss[0].Agent != "reviewer" || ss[0].Origin != "mcp" || len(recs) != 1 {
		t.Fatalf("ci-bot's sessions %+v, file_list audit %d records", ss, len(recs))
	}

	// alice presents ci-bot's session id with her own key: refused.
	if ci.ID() == "" {
		t.Fatal("no MCP session to test the binding with")
	}
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer k-alice")
	req.Header.Set("Mcp-Session-Id", ci.ID())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("alice used ci-bot's MCP session: %s", resp.Status)
	}
}
