package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/mcpclient"
)

// upstreamArg makes the test binary an MCP server on stdio (TestMain):
// the upstream of the observability tests, whose echo tool answers with
// the traceparent it found in the request's _meta.
const upstreamArg = "agentd-test-mcp-upstream"

// tapArg makes the test binary a tap in front of a stdio MCP server
// (TestMain): `tapArg LOG COMMAND ARGS...` runs COMMAND and copies to
// LOG every byte it passes to the server's stdin, so a test sees what a
// server that echoes nothing of it (server-everything) received.
const tapArg = "agentd-test-stdio-tap"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == upstreamArg {
		os.Exit(runUpstream())
	}
	if len(os.Args) > 3 && os.Args[1] == tapArg {
		os.Exit(runTap(os.Args[2], os.Args[3], os.Args[4:]...))
	}
	os.Exit(m.Run())
}

func runTap(log, command string, args ...string) int {
	f, err := os.Create(log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tap:", err)
		return 1
	}
	defer f.Close()
	cmd := exec.Command(command, args...)
	// The copy to the server's stdin writes the log first: whatever the
	// server has read is in the log.
	cmd.Stdin = io.TeeReader(os.Stdin, f)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tap:", err)
		return 1
	}
	return 0
}

func runUpstream() int {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes text and the traceparent it received"},
		func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
			tp, _ := req.Params.GetMeta()["traceparent"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + a.Text + " traceparent=" + tp}}}, nil, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		return 1
	}
	return 0
}

// secretArg is put in every tool call's arguments: it must never appear
// in a metric label or a span attribute.
const secretArg = "sekret-argument-4711"

// inventedTool is a tool the model calls that does not exist: its name
// must not become a metric label.
const inventedTool = "no_such_tool_zq81"

// toolThenAnswer is the fake model: a user turn gets two tool calls (the
// upstream's echo and a tool that does not exist), the turn after their
// results gets an answer.
func toolThenAnswer(req *llmtest.Request) llmtest.Reply {
	last := req.Messages[len(req.Messages)-1]
	usage := llm.Usage{InputTokens: 120, OutputTokens: 7}
	if last.Role == llm.RoleTool {
		return llmtest.Reply{Text: "done", Usage: usage}
	}
	return llmtest.Reply{Usage: usage, ToolCalls: []llm.ToolCall{
		llmtest.ToolCall("mcp_up_echo", `{"text":"`+secretArg+`"}`),
		llmtest.ToolCall(inventedTool, `{}`),
	}}
}

// harness is a daemon serving on loopback with a fake model, an upstream
// MCP server on stdio and an API key.
type harness struct {
	t     *testing.T
	d     *Daemon
	url   string
	key   string
	model *llmtest.Server
}

func newHarness(t *testing.T, extra string, env map[string]string) *harness {
	t.Helper()
	return newHarnessLog(t, extra, env, nil)
}

// newHarnessLog is newHarness with the daemon logging to log.
func newHarnessLog(t *testing.T, extra string, env map[string]string, log *slog.Logger) *harness {
	t.Helper()
	return newHarnessModel(t, extra, env, log, toolThenAnswer)
}

// newHarnessModel is newHarnessLog with the fake model answering with
// script.
func newHarnessModel(t *testing.T, extra string, env map[string]string, log *slog.Logger, script llmtest.Handler) *harness {
	t.Helper()
	model := llmtest.NewOpenAIServer(t, script)
	home := t.TempDir()
	body := fmt.Sprintf(`listen = "127.0.0.1:0"
api_key_env = "TEST_KEY"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "worker"
provider = "fake"
model = "m"
tools = ["mcp_up_*"]
[agents.expose]
mcp = true
a2a = true

[[mcp_servers]]
name = "up"
allowed_tools = ["echo"]
[mcp_servers.transport]
type = "stdio"
command = %q
args = [%q]

[a2a]
enabled = true

[limits]
rate_per_sec = 1
burst = 40
limit_loopback = true
%s`, model.URL, os.Args[0], upstreamArg, extra)
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = map[string]string{}
	}
	env["TEST_KEY"] = "k-test"
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := New(ctx, cfg, Options{ConnectMCP: true, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := d.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-served
		d.Close()
	})
	h := &harness{t: t, d: d, url: "http://" + ln.Addr().String(), key: "k-test", model: model}
	h.waitConnected("up")
	return h
}

// waitConnected waits for the upstream's first connection: the test
// binary starts in milliseconds, but the daemon connects in the background.
func (h *harness) waitConnected(server string) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range h.d.MCP.Status() {
			if s.Name == server && s.State == mcpclient.StateConnected && s.ToolsCount > 0 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("mcp server %q never connected: %+v", server, h.d.MCP.Status())
}

// do sends a request with the API key (or key, when not "") and returns
// the response with its body read.
func (h *harness) do(method, path, key string, body any, header http.Header) (*http.Response, []byte) {
	h.t.Helper()
	return h.doFrom(http.DefaultClient, method, path, key, body, header)
}

// fromAddr returns a client whose connections come from the loopback
// address addr (127.0.0.2, ...): another client, as per-address limits
// count them.
func fromAddr(addr string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// doFrom is do through client c.
func (h *harness) doFrom(c *http.Client, method, path, key string, body any, header http.Header) (*http.Response, []byte) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if key == "" {
		key = h.key
	}
	if key != "-" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, data
}

// mcpSession connects an MCP client to /mcp with the API key.
func (h *harness) mcpSession(ctx context.Context) *mcp.ClientSession {
	h.t.Helper()
	hc := &http.Client{Transport: &bearerRT{h.key, http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return cs
}

// agentTool is the name /mcp serves the worker agent under.
func agentTool(t *testing.T, ctx context.Context, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		// The agent itself, not the A2A bridge's tool for it.
		if strings.Contains(tl.Name, "worker") && !strings.HasPrefix(tl.Name, "a2a_") {
			return tl.Name
		}
		names = append(names, tl.Name)
	}
	t.Fatalf("no tool for agent worker in %v", names)
	return ""
}

// runOverMCP asks the worker agent over /mcp; meta goes in _meta.
func runOverMCP(t *testing.T, ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: agentTool(t, ctx, cs), Arguments: map[string]any{"message": "work, " + secretArg}})
	if err != nil || res.IsError {
		t.Fatalf("agent over mcp: %+v %v", res, err)
	}
	return res
}
