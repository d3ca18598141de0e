package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/telemetry/otlptest"
	"github.com/agentd/agentd/internal/tool"
)

// traceHTML, when set, is where TestTraceAcrossProtocols writes its
// trace as an HTML waterfall (the picture in docs/observability.md).
var traceHTML = flag.String("trace-html", "", "write TestTraceAcrossProtocols's trace as an HTML waterfall to this file")

// startJSAgent runs interop/a2a-server.mjs (an @a2a-js/sdk agent) in its
// trace mode: its answer ends with the traceparent header it received.
// It returns the agent's base URL; the agent stops when t ends.
func startJSAgent(t *testing.T, node, dir, token string) string {
	t.Helper()
	cmd := exec.Command(node, "a2a-server.mjs", "v1", token, "trace")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close() // the server exits at the end of its stdin
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		var ready struct {
			URL string `json:"url"`
		}
		if json.Unmarshal([]byte(l), &ready) != nil || ready.URL == "" {
			t.Fatalf("js agent did not start: %q; stderr: %s", l, stderr.String())
		}
		return ready.URL
	case <-time.After(30 * time.Second):
		t.Fatalf("js agent did not start in time; stderr: %s", stderr.String())
	}
	return ""
}

// waitTool waits for reg to hold the tool name: the registry says when
// its tool set changes (an external agent's discovery does).
func waitTool(t *testing.T, reg *tool.Registry, name string, limit time.Duration) {
	t.Helper()
	changed := make(chan struct{}, 1)
	stop := reg.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer stop()
	timeout := time.After(limit)
	for {
		if _, ok := reg.Lookup(name); ok {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("no tool %s within %v", name, limit)
		}
	}
}

// relayScript is the fake model of the relay agent: a user turn gets
// three tool calls (server-everything's echo, the Go upstream's echo, the
// external A2A agent), the turn after their results an answer. The
// worker agent's requests get toolThenAnswer.
func relayScript(req *llmtest.Request) llmtest.Reply {
	if req.Model != "relay-m" {
		return toolThenAnswer(req)
	}
	usage := llm.Usage{InputTokens: 50, OutputTokens: 5}
	if req.Messages[len(req.Messages)-1].Role == llm.RoleTool {
		return llmtest.Reply{Text: "relayed", Usage: usage}
	}
	return llmtest.Reply{Usage: usage, ToolCalls: []llm.ToolCall{
		llmtest.ToolCall("mcp_everything_echo", `{"message":"hello everything"}`),
		llmtest.ToolCall("mcp_up_echo", `{"text":"hello up"}`),
		llmtest.ToolCall("a2a_js", `{"message":"hello js"}`),
	}}
}

// TestTraceAcrossProtocols is issue 17's trace: one tools/call from an
// MCP client (go-sdk, traceparent in its headers and _meta) to an agent,
// whose run calls the model (OpenAI wire format), two upstream MCP
// servers over stdio (@modelcontextprotocol/server-everything, and a
// go-sdk server that reports the _meta it got) and an external A2A agent
// (@a2a-js/sdk), is ONE trace in an OTLP/HTTP collector:
//
//	POST /mcp → tools/call agentd_agent_relay → invoke_agent relay
//	  → chat relay-m (×2)
//	  → execute_tool mcp_everything_echo → tools/call echo (everything)
//	  → execute_tool mcp_up_echo → tools/call echo (up)
//	  → execute_tool a2a_js → SendMessage js
//
// and every next hop saw its parent span's context: server-everything
// got params._meta.traceparent on its stdin (it echoes nothing of _meta,
// so a tap in front of it records what it read), the Go upstream answers
// with the traceparent its handler found in _meta, the A2A agent with
// the traceparent header of its request (the SendMessage span's), the
// model API in its headers.
func TestTraceAcrossProtocols(t *testing.T) {
	node, dir := nodePeer(t)
	everything := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(everything); err != nil {
		t.Skipf("server-everything is not installed: %v", err)
	}
	jsURL := startJSAgent(t, node, dir, "js-secret")
	tap := filepath.Join(t.TempDir(), "everything-stdin.jsonl")
	rcv := otlptest.New(t)
	extra := fmt.Sprintf(`
[telemetry]
endpoint = %q
service_name = "agentd-test"

[[mcp_servers]]
name = "everything"
allowed_tools = ["echo"]
[mcp_servers.transport]
type = "stdio"
command = %q
args = [%q, %q, %q, %q, "stdio"]
[mcp_servers.sandbox]
# The tap writes what the server received beside it; the sandbox grants
# a server no write outside its own TMPDIR unless told.
write = [%q]

[[a2a.external_agents]]
name = "js"
url = %q
token_env = "JS_TOKEN"
allow_private = true

[[agents]]
name = "relay"
provider = "fake"
model = "relay-m"
tools = ["mcp_up_*", "mcp_everything_*", "a2a_js"]
[agents.expose]
mcp = true
`, rcv.URL, os.Args[0], tapArg, tap, node, everything, filepath.Dir(tap), jsURL)
	h := newHarnessModel(t, extra, map[string]string{"JS_TOKEN": "js-secret"}, nil, relayScript)
	h.waitConnected("everything")
	waitTool(t, h.d.Tools, "a2a_js", 30*time.Second)

	const traceID = "6bf92f3577b34da6a3ce929d0e0e4738"
	const remoteParent = "00f067aa0ba902b8"
	tp := "00-" + traceID + "-" + remoteParent + "-01"
	ctx := context.Background()
	hc := &http.Client{Transport: &traceparentRT{tp, &bearerRT{h.key, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"traceparent": tp}, Name: "agentd_agent_relay",
		Arguments: map[string]any{"message": "ask everyone"}})
	if err != nil || res.IsError {
		t.Fatalf("relay over mcp: %+v %v", res, err)
	}

	inTrace := func(spans []span, name string, attr ...string) []span {
		var out []span
		for _, s := range spans {
			if s.TraceID != traceID || s.Name != name {
				continue
			}
			if len(attr) == 2 && s.Attrs[attr[0]] != attr[1] {
				continue
			}
			out = append(out, s)
		}
		return out
	}
	spans := waitSpans(t, rcv, h, func(s []span) bool {
		return len(inTrace(s, "chat relay-m")) == 2 && len(inTrace(s, "tools/call echo")) == 2 &&
			len(inTrace(s, "SendMessage js")) == 1 && len(inTrace(s, "tools/call agentd_agent_relay")) == 1 && len(inTrace(s, "POST /mcp")) >= 2
	})
	t.Logf("trace %s:\n%s", traceID, otlptest.Tree(spans, traceID))
	if *traceHTML != "" {
		page := otlptest.Waterfall(spans, traceID, "agentd: one MCP tools/call across the agent run, the model, two MCP servers and an A2A agent")
		if err := os.WriteFile(*traceHTML, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	one := func(name string, attr ...string) span {
		t.Helper()
		got := inTrace(spans, name, attr...)
		if len(got) != 1 {
			t.Fatalf("%d spans %q %v in trace %s, want 1", len(got), name, attr, traceID)
		}
		return got[0]
	}
	call := one("tools/call agentd_agent_relay")
	run := one("invoke_agent relay")
	exEverything := one("execute_tool mcp_everything_echo")
	exUp := one("execute_tool mcp_up_echo")
	exJS := one("execute_tool a2a_js")
	upEverything := one("tools/call echo", "agentd.mcp.server", "everything")
	upUp := one("tools/call echo", "agentd.mcp.server", "up")
	sendJS := one("SendMessage js")
	var post span
	for _, s := range inTrace(spans, "POST /mcp") {
		if s.SpanID == call.ParentID {
			post = s
		}
	}
	checks := []struct{ what, parent, want string }{
		{"POST /mcp ← the client's span", post.ParentID, remoteParent},
		{"tools/call ← POST /mcp", call.ParentID, post.SpanID},
		{"invoke_agent ← tools/call", run.ParentID, call.SpanID},
		{"execute_tool everything ← invoke_agent", exEverything.ParentID, run.SpanID},
		{"execute_tool up ← invoke_agent", exUp.ParentID, run.SpanID},
		{"execute_tool a2a_js ← invoke_agent", exJS.ParentID, run.SpanID},
		{"tools/call echo (everything) ← execute_tool", upEverything.ParentID, exEverything.SpanID},
		{"tools/call echo (up) ← execute_tool", upUp.ParentID, exUp.SpanID},
		{"SendMessage js ← execute_tool", sendJS.ParentID, exJS.SpanID},
	}
	for _, chat := range inTrace(spans, "chat relay-m") {
		checks = append(checks, struct{ what, parent, want string }{"chat ← invoke_agent", chat.ParentID, run.SpanID})
	}
	for _, c := range checks {
		if c.parent != c.want || c.want == "" {
			t.Errorf("%s: parent %q, want %q", c.what, c.parent, c.want)
		}
	}
	if upEverything.Kind != tracepb.Span_SPAN_KIND_CLIENT || exJS.Attrs["agentd.tool.outcome"] != "ok" {
		t.Errorf("spans: everything %v %v, a2a_js %v", upEverything.Kind, upEverything.Attrs, exJS.Attrs)
	}
	if sendJS.Kind != tracepb.Span_SPAN_KIND_CLIENT || sendJS.Attrs["agentd.a2a.agent"] != "js" || sendJS.Attrs["a2a.task.state"] != "completed" {
		t.Errorf("SendMessage span: %v %v", sendJS.Kind, sendJS.Attrs)
	}
	// ONE trace: every span of the request hangs, through its parents, on
	// the client's span; nothing of it went to another trace.
	ids := map[string]span{}
	for _, s := range spans {
		if s.TraceID == traceID {
			ids[s.SpanID] = s
		}
	}
	for _, s := range ids {
		p := s
		for hops := 0; p.ParentID != remoteParent; hops++ {
			next, ok := ids[p.ParentID]
			if !ok || hops > 20 {
				t.Errorf("span %q hangs on %s, which is no span of the trace", s.Name, p.ParentID)
				break
			}
			p = next
		}
	}
	for _, s := range spans {
		if s.TraceID != traceID && (strings.HasPrefix(s.Name, "execute_tool") || strings.HasPrefix(s.Name, "chat ") || strings.HasPrefix(s.Name, "tools/call") || strings.HasPrefix(s.Name, "SendMessage")) {
			t.Errorf("span %q of the run is in another trace %s", s.Name, s.TraceID)
		}
	}

	// The next hops saw their parents' contexts.
	want := func(s span) string { return "00-" + traceID + "-" + s.SpanID + "-01" }
	reqs := h.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	results := fmt.Sprint(reqs[1].Messages)
	if !strings.Contains(results, "traceparent="+want(upUp)) {
		t.Errorf("the Go upstream did not see %s in _meta; the model got %s", want(upUp), results)
	}
	if !strings.Contains(results, "js agent got: hello js traceparent="+want(sendJS)) {
		t.Errorf("the A2A agent did not see %s in its headers; the model got %s", want(sendJS), results)
	}
	if !strings.Contains(results, "hello everything") {
		t.Errorf("server-everything's echo is not in the results: %s", results)
	}
	for i, r := range reqs {
		ok := false
		for _, c := range inTrace(spans, "chat relay-m") {
			ok = ok || r.Header.Get("Traceparent") == want(c)
		}
		if !ok {
			t.Errorf("model request %d: traceparent %q is no chat span's", i+1, r.Header.Get("Traceparent"))
		}
	}
	if got := everythingMeta(t, tap, "echo"); got != want(upEverything) {
		t.Errorf("server-everything read tools/call echo with _meta.traceparent %q, want %q", got, want(upEverything))
	}
}

// everythingMeta returns the _meta.traceparent of the tools/call of tool
// in the tap's log of what server-everything read on stdin.
func everythingMeta(t *testing.T, log, tool string) string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string         `json:"name"`
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.Method != "tools/call" || msg.Params.Name != tool {
			continue
		}
		tp, _ := msg.Params.Meta["traceparent"].(string)
		return tp
	}
	t.Fatalf("server-everything never read a tools/call of %s:\n%s", tool, data)
	return ""
}
