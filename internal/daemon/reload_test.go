package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestReloadOnSIGHUP runs the agentd binary with an MCP session open,
// edits its config file (a new agent on a new provider, a new upstream
// MCP server, a new
// principal, a new rate limit, and a key only a restart applies) and
// sends SIGHUP: the new agent reaches the same session's tools/list and
// GET /api/agents, the server connects, the principal's key works, the
// restart-only key is reported, and the session still calls tools. A
// broken file then changes nothing and the error names file:line; POST
// /api/admin/reload does the same reload for an admin only. An A2A
// stream open across the reload ends COMPLETED.
func TestReloadOnSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentd binary")
	}
	bin := buildAgentd(t)
	asked := make(chan struct{}, 1)
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		if text := r.LastUserText(); strings.HasPrefix(text, "slow") {
			asked <- struct{}{}
			// About 2 s of streamed answer: the reloads happen under it.
			return llmtest.Reply{Text: strings.Repeat("s", 40), Chunks: 40, Delay: 50 * time.Millisecond}
		}
		return llmtest.Reply{Text: "answer to " + r.LastUserText()}
	})
	// sessions counts agentd's connections to the upstream server: a
	// reload that leaves its entry alone must not reconnect it.
	var sessions atomic.Int32
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, &mcp.ServerOptions{
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { sessions.Add(1) },
	})
	mcp.AddTool(up, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	// Closed after agentd is killed (cleanups run last first), which
	// holds a connection to it.
	t.Cleanup(upSrv.Close)

	home := t.TempDir()
	addr := freeAddr(t)
	base := "http://" + addr
	cfgPath := filepath.Join(home, "config.toml")
	v1 := fmt.Sprintf(`listen = %q
api_key = %q

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "alpha"
provider = "fake"
model = "test-model"

[agents.expose]
mcp = true
a2a = true

[a2a]
enabled = true

[limits]
rate_per_sec = 1000
burst = 1000
`, addr, a2aTestKey, model.URL)
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(v1)
	cmd := startAgentd(t, bin, cfgPath, home, addr)
	logText := func() string {
		logs, _ := filepath.Glob(filepath.Join(home, "agentd-*.log"))
		var b strings.Builder
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			b.Write(data)
		}
		return b.String()
	}
	hup := func() {
		t.Helper()
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	const carolKey = "k-carol-reload"
	carolGet := func(path string) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+carolKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	changed := make(chan struct{}, 1)
	cs := mcpClientTo(t, base, changed)
	sid := cs.ID()
	if names := toolNames(t, cs); !slices.Contains(names, "agentd_agent_alpha") || slices.Contains(names, "agentd_agent_beta") {
		t.Fatalf("tools before the reload: %v", names)
	}
	if code := carolGet("/api/agents"); code != http.StatusUnauthorized {
		t.Fatalf("carol before the reload: %d, want 401", code)
	}

	// An A2A stream under way across the reloads.
	type streamEnd struct {
		state  a2a.TaskState
		events int
		err    error
		at     time.Time
	}
	streamDone := make(chan streamEnd, 1)
	cl := a2aClientFor(t, base)
	go func() {
		var end streamEnd
		for ev, err := range cl.SendStreamingMessage(t.Context(), userMessage("slow stream")) {
			if err != nil {
				end.err = err
				break
			}
			end.events++
			switch e := ev.(type) {
			case *a2a.TaskStatusUpdateEvent:
				end.state = e.Status.State
			case *a2a.Task:
				end.state = e.Status.State
			}
		}
		end.at = time.Now()
		streamDone <- end
	}()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the A2A stream's run never reached the model")
	}

	// The edit: agent beta on a new provider, server up, principal
	// carol, a new burst (live), and max_body_bytes (restart only).
	sum := sha256.Sum256([]byte(carolKey))
	v2 := strings.Replace(v1, "burst = 1000\n", "burst = 900\nmax_body_bytes = 2000000\n", 1) + fmt.Sprintf(`
[[agents]]
name = "beta"
provider = "fake2"
model = "test-model"

[agents.expose]
mcp = true

[[mcp_servers]]
name = "up"
allow_private = true
allowed_tools = ["echo"]

[mcp_servers.transport]
type = "http"
url = %q

[[principals]]
name = "carol"
key_sha256 = %q
agents = ["beta"]

[providers.fake2]
kind = "openai"
base_url = %q
`, upSrv.URL+"/", hex.EncodeToString(sum[:]), model.URL)
	write(v2)
	hupAt := time.Now()
	hup()

	// The open session is told, and lists the new agent.
	deadline := time.After(10 * time.Second)
	for listed := false; !listed; {
		select {
		case <-changed:
			listed = slices.Contains(toolNames(t, cs), "agentd_agent_beta")
		case <-deadline:
			t.Fatalf("no tools/list_changed listing agent beta after SIGHUP (tools: %v)\n%s", toolNames(t, cs), logText())
		}
	}
	t.Logf("SIGHUP to tools/list_changed listing the new agent on the open session: %v", time.Since(hupAt).Round(time.Millisecond))
	if cs.ID() != sid {
		t.Errorf("session id changed: %q -> %q", sid, cs.ID())
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentd_agent_beta", Arguments: map[string]any{"message": "hello beta"}})
	if err != nil || res.IsError {
		t.Fatalf("call the new agent on the old session: %v %+v %s", err, res, toolText(res))
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "answer to hello beta") {
		t.Errorf("beta answered %q", text)
	}
	if code, out := apiDo(t, base, http.MethodGet, "/api/agents", ""); code != http.StatusOK || !strings.Contains(fmt.Sprint(out), "beta") {
		t.Errorf("GET /api/agents after the reload: %d %v", code, out)
	}
	// The principal's key is admitted now.
	if code := carolGet("/api/agents"); code != http.StatusOK {
		t.Errorf("carol after the reload: %d, want 200", code)
	}
	// The new upstream server connects.
	waitFor(t, 10*time.Second, "mcp server up connects", func() bool {
		_, body := rawDo(t, http.MethodGet, base+"/api/mcp/servers", "")
		return strings.Contains(body, `"up"`) && strings.Contains(body, `"connected"`)
	})
	log := logText()
	for _, want := range []string{"needs a restart: limits.max_body_bytes", `applied="[providers agents mcp_servers limits.burst principals]"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the reload's log lacks %q\n%s", want, log)
		}
	}

	select {
	case end := <-streamDone:
		if end.err != nil || end.state != a2a.TaskStateCompleted {
			t.Errorf("the A2A stream open across the reload: %d events, last state %q, err %v; want COMPLETED", end.events, end.state, end.err)
		}
		if !end.at.After(hupAt) {
			t.Errorf("the A2A stream ended before the SIGHUP: the test did not reload under it")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the A2A stream open across the reload did not end")
	}

	// A broken file: refused with file:line, the daemon and the session
	// keep everything.
	write(v2 + "\n[[agents]\nname = \n")
	hup()
	lineRE := regexp.MustCompile(regexp.QuoteMeta(cfgPath) + `:\d+`)
	waitFor(t, 10*time.Second, "the refused reload is logged", func() bool {
		return strings.Contains(logText(), "config reload refused") && lineRE.MatchString(logText())
	})
	if code, _ := rawDo(t, http.MethodGet, base+"/livez", ""); code != http.StatusOK {
		t.Fatalf("after a broken reload /livez answers %d", code)
	}
	if names := toolNames(t, cs); !slices.Contains(names, "agentd_agent_beta") {
		t.Errorf("after a broken reload the session lists %v", names)
	}
	code, body := rawDo(t, http.MethodPost, base+"/api/admin/reload", "{}")
	if code != http.StatusUnprocessableEntity || !lineRE.MatchString(body) {
		t.Errorf("POST /api/admin/reload of a broken file: %d %s; want 422 naming file:line", code, body)
	}

	// The API reload: the file without beta removes it; not for carol.
	write(strings.Replace(v2, "name = \"beta\"", "name = \"gamma\"", 1))
	req, _ := http.NewRequest(http.MethodPost, base+"/api/admin/reload", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+carolKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /api/admin/reload as carol: %d, want 403", resp.StatusCode)
	}
	code, body = rawDo(t, http.MethodPost, base+"/api/admin/reload", "{}")
	var rep ReloadReport
	if err := json.Unmarshal([]byte(body), &rep); code != http.StatusOK || err != nil {
		t.Fatalf("POST /api/admin/reload: %d %s (%v)", code, body, err)
	}
	if !slices.Contains(rep.Applied, "agents") || !slices.Contains(rep.Restart, "limits.max_body_bytes") {
		t.Errorf("reload report %+v: want agents applied, limits.max_body_bytes needing a restart", rep)
	}
	// The session's tool list follows the directory's change
	// notification, which is delivered asynchronously.
	waitFor(t, 5*time.Second, "the session lists gamma, not beta", func() bool {
		names := toolNames(t, cs)
		return !slices.Contains(names, "agentd_agent_beta") && slices.Contains(names, "agentd_agent_gamma")
	})
	if n := sessions.Load(); n != 1 {
		t.Errorf("the unchanged upstream server was connected %d times, want once", n)
	}
	// Its entry removed, the server is disconnected and gone.
	i := strings.Index(v2, "[[mcp_servers]]")
	j := strings.Index(v2, "[[principals]]")
	if code, body := func() (int, string) {
		write(strings.Replace(v2[:i]+v2[j:], "name = \"beta\"", "name = \"gamma\"", 1))
		return rawDo(t, http.MethodPost, base+"/api/admin/reload", "{}")
	}(); code != http.StatusOK || !strings.Contains(body, "mcp_servers") {
		t.Fatalf("reload without the server: %d %s", code, body)
	}
	if _, body := rawDo(t, http.MethodGet, base+"/api/mcp/servers", ""); strings.Contains(body, `"up"`) {
		t.Errorf("the removed server is still listed: %s", body)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentd_agent_alpha", Arguments: map[string]any{"message": "still here"}})
	if err != nil || res.IsError {
		t.Fatalf("the session after four reloads: %v %+v", err, res)
	}
}

// toolText is the text of a tool result, for failure messages.
func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	if res != nil {
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
	}
	return b.String()
}
