package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/store"
)

// upstream is an in-process MCP server (go-sdk, Streamable HTTP on
// loopback) that the proxy agent reaches through a real mcpclient.Manager.
type upstream struct {
	url       string
	hanging   chan struct{} // a "hang" call started
	cancelled atomic.Int32  // "hang" calls whose context the client cancelled
}

type echoIn struct {
	Text string `json:"text"`
}
type sumIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}
type sumOut struct {
	Sum float64 `json:"sum"`
}
type stepsIn struct {
	Steps int `json:"steps"`
}

func startUpstream(t testing.TB) *upstream {
	t.Helper()
	u := &upstream{hanging: make(chan struct{}, 8)}
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sum", Description: "Adds a and b."}, func(_ context.Context, _ *mcp.CallToolRequest, in sumIn) (*mcp.CallToolResult, sumOut, error) {
		return nil, sumOut{Sum: in.A + in.B}, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Always fails."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("the tool failed on purpose")
	})
	srv.AddTool(&mcp.Tool{Name: "broken", Description: "Answers a JSON-RPC error.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32042, Message: "broken on purpose"}
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "progress", Description: "Reports progress."}, func(ctx context.Context, req *mcp.CallToolRequest, in stepsIn) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= in.Steps; i++ {
			time.Sleep(20 * time.Millisecond)
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d steps done", in.Steps)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang", Description: "Waits until cancelled."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		u.hanging <- struct{}{}
		<-ctx.Done()
		u.cancelled.Add(1)
		return nil, nil, ctx.Err()
	})
	srv.AddTool(&mcp.Tool{Name: "greet", Description: "Greets someone.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"name":{"type":"string"},"times":{"type":"integer"}},"required":["name","times"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Name  string `json:"name"`
				Times int    `json:"times"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("hello "+in.Name+"! ", in.Times)}}}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "secret", Description: "Left out by allowed_tools."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "leaked"}}}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	u.url = hs.URL
	return u
}

// proxyAgents: "proxy" reaches every allowed tool of server "tools";
// "narrow" only its echo.
func proxyAgents() []manifest.Manifest {
	expose := manifest.Exposure{A2A: true}
	return []manifest.Manifest{
		{Name: "proxy", Kind: manifest.KindMCPProxy, Tools: []string{"mcp_*"}, MCPServers: []string{"tools"}, Expose: expose},
		{Name: "narrow", Kind: manifest.KindMCPProxy, Tools: []string{"mcp_tools_echo"}, Expose: expose},
	}
}

// newProxyFixture is the A2A fixture with the proxy agents and a Manager
// connected to two upstreams ("tools" and "other", the same server) and
// one that never connects ("down").
func newProxyFixture(t testing.TB) (*fixture, *upstream) {
	t.Helper()
	u := startUpstream(t)
	m := mcpclient.NewManager(mcpclient.Options{ReconnectMin: 10 * time.Millisecond, ReconnectMax: 50 * time.Millisecond})
	t.Cleanup(func() { m.Close() })
	allowed := []string{"echo", "sum", "fail", "broken", "progress", "hang", "greet"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	ctx := context.Background()
	for _, s := range []config.MCPServer{
		{Name: "tools", Transport: config.MCPTransport{Type: "http", URL: u.url}, AllowPrivate: true, TimeoutSecs: 10, AllowedTools: &allowed},
		{Name: "other", Transport: config.MCPTransport{Type: "http", URL: u.url}, AllowPrivate: true, TimeoutSecs: 10},
		{Name: "down", Transport: config.MCPTransport{Type: "http", URL: dead}, AllowPrivate: true, TimeoutSecs: 1},
	} {
		if err := m.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ready := 0
		for _, st := range m.Status() {
			if st.Connected || st.Name == "down" && st.State == mcpclient.StateFailed {
				ready++
			}
		}
		if ready == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstreams not ready: %+v", m.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	f := newFixture(t, func(*llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "no model here"} },
		fixtureOptions{agents: proxyAgents(), mcp: m, fastWindow: 200 * time.Millisecond})
	return f, u
}

// proxyMessage is a user message with the proxy's data part.
func proxyMessage(server, tool string, args map[string]any) *a2a.SendMessageRequest {
	data := map[string]any{"target_mcp_server_id": server, "tool_name": tool}
	if args != nil {
		data["arguments"] = args
	}
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(data))}
}

// replyOf returns the data part and the text of a task's last message.
func replyOf(t *testing.T, task *a2a.Task) (map[string]any, string) {
	t.Helper()
	if task.Status.Message == nil {
		t.Fatalf("task %s (%s) has no status message", task.ID, task.Status.State)
	}
	var data map[string]any
	var text strings.Builder
	for _, p := range task.Status.Message.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			data, _ = d.Value.(map[string]any)
		}
		text.WriteString(p.Text())
	}
	if data == nil {
		t.Fatalf("no data part in %+v", task.Status.Message.Parts)
	}
	return data, text.String()
}

func errorOf(data map[string]any) (source string, code any) {
	e, _ := data["error"].(map[string]any)
	return fmt.Sprint(e["source"]), e["code"]
}

func TestProxyCalls(t *testing.T) {
	f, _ := newProxyFixture(t)
	proxy, narrow := f.a2aClient("proxy"), f.a2aClient("narrow")
	ctx := context.Background()

	tests := []struct {
		name   string
		client *a2aclient.Client
		req    *a2a.SendMessageRequest
		state  a2a.TaskState
		source string // "" for success
		code   any
		check  func(t *testing.T, data map[string]any, text string)
	}{
		{name: "echo", client: proxy, req: proxyMessage("tools", "echo", map[string]any{"text": "hi"}), state: a2a.TaskStateCompleted,
			check: func(t *testing.T, data map[string]any, text string) {
				res := data["mcp_result"].(map[string]any)
				content := res["content"].([]any)[0].(map[string]any)
				if content["type"] != "text" || content["text"] != "hi" || res["isError"] != false || !strings.HasPrefix(text, "hi") {
					t.Fatalf("result %v, text %q", res, text)
				}
			}},
		{name: "agentd's tool name is accepted", client: proxy, req: proxyMessage("tools", "mcp_tools_echo", map[string]any{"text": "x"}), state: a2a.TaskStateCompleted,
			check: func(t *testing.T, data map[string]any, _ string) {
				if data["tool_name"] != "echo" {
					t.Fatalf("tool_name %v", data["tool_name"])
				}
			}},
		{name: "structured content", client: proxy, req: proxyMessage("tools", "sum", map[string]any{"a": 2, "b": 3}), state: a2a.TaskStateCompleted,
			check: func(t *testing.T, data map[string]any, _ string) {
				sc, _ := data["mcp_result"].(map[string]any)["structuredContent"].(map[string]any)
				if sc["sum"] != 5.0 {
					t.Fatalf("structured %v", data["mcp_result"])
				}
			}},
		{name: "progress, past the fast window", client: proxy, req: proxyMessage("tools", "progress", map[string]any{"steps": 15}), state: a2a.TaskStateCompleted,
			check: func(t *testing.T, _ map[string]any, text string) {
				if !strings.Contains(text, "15 steps done") {
					t.Fatalf("text %q", text)
				}
			}},
		{name: "tool error", client: proxy, req: proxyMessage("tools", "fail", nil), state: a2a.TaskStateFailed, source: SourceTool, code: "tool_error",
			check: func(t *testing.T, data map[string]any, text string) {
				if data["mcp_result"].(map[string]any)["isError"] != true || !strings.Contains(text, "failed on purpose") {
					t.Fatalf("%v %q", data, text)
				}
			}},
		{name: "json-rpc error", client: proxy, req: proxyMessage("tools", "broken", nil), state: a2a.TaskStateFailed, source: SourceProtocol, code: -32042.0,
			check: func(t *testing.T, data map[string]any, _ string) {
				if data["mcp_result"] != nil || !strings.Contains(fmt.Sprint(data["error"]), "broken on purpose") {
					t.Fatalf("%v", data)
				}
			}},
		{name: "unknown server", client: proxy, req: proxyMessage("nope", "echo", nil), state: a2a.TaskStateFailed, source: SourceProxy, code: "unknown_server",
			check: func(t *testing.T, data map[string]any, _ string) {
				if !strings.Contains(fmt.Sprint(data["error"]), "this agent reaches: tools") {
					t.Fatalf("%v", data["error"])
				}
			}},
		{name: "unknown tool", client: proxy, req: proxyMessage("tools", "nope", nil), state: a2a.TaskStateFailed, source: SourceProxy, code: "unknown_tool"},
		{name: "left out by allowed_tools", client: proxy, req: proxyMessage("tools", "secret", nil), state: a2a.TaskStateFailed, source: SourceProxy, code: "unknown_tool"},
		{name: "server outside mcp_servers", client: proxy, req: proxyMessage("other", "echo", map[string]any{"text": "x"}), state: a2a.TaskStateFailed, source: SourceProxy, code: "not_allowed"},
		{name: "tool outside the patterns", client: narrow, req: proxyMessage("tools", "sum", map[string]any{"a": 1, "b": 1}), state: a2a.TaskStateFailed, source: SourceProxy, code: "not_allowed"},
		{name: "narrow agent's own tool", client: narrow, req: proxyMessage("tools", "echo", map[string]any{"text": "ok"}), state: a2a.TaskStateCompleted},
		{name: "server down", client: narrow, req: proxyMessage("down", "echo", nil), state: a2a.TaskStateFailed, source: SourceProtocol, code: "disconnected"},
		{name: "no data part", client: proxy, req: userMessage("call echo please"), state: a2a.TaskStateFailed, source: SourceProxy, code: "invalid_request"},
		{name: "arguments not an object", client: proxy, req: &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser,
			a2a.NewDataPart(map[string]any{"target_mcp_server_id": "tools", "tool_name": "echo", "arguments": "hi"}))},
			state: a2a.TaskStateFailed, source: SourceProxy, code: "invalid_request"},
		{name: "request as JSON text", client: proxy, req: userMessage(`{"target_mcp_server_id":"tools","tool_name":"echo","arguments":{"text":"from text"}}`), state: a2a.TaskStateCompleted,
			check: func(t *testing.T, _ map[string]any, text string) {
				if !strings.HasPrefix(text, "from text") {
					t.Fatalf("text %q", text)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.client.SendMessage(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			task := res.(*a2a.Task)
			data, text := replyOf(t, task)
			if task.Status.State != tt.state {
				t.Fatalf("state %s, want %s: %q", task.Status.State, tt.state, text)
			}
			if data["success"] != (tt.source == "") {
				t.Fatalf("success %v: %v", data["success"], data)
			}
			if tt.source != "" {
				if source, code := errorOf(data); source != tt.source || code != tt.code {
					t.Fatalf("error %s %v, want %s %v: %v", source, code, tt.source, tt.code, data["error"])
				}
			}
			if tt.check != nil {
				tt.check(t, data, text)
			}
		})
	}

	t.Run("the seed's tasks/send", func(t *testing.T) {
		// The AgentVault proxy pattern's request, exactly as its clients send it.
		code, body := f.post("/a2a/tasks/send", `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"agent":"proxy","message":{"role":"user","parts":[
			{"type":"data","mediaType":"application/json","content":{"target_mcp_server_id":"tools","tool_name":"echo","arguments":{"text":"seed"}}}]}}}`)
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, body)
		}
		var lt a2aedge.LegacyTask
		if err := json.Unmarshal(body, &lt); err != nil {
			t.Fatal(err)
		}
		last := lt.Messages[len(lt.Messages)-1]
		if lt.Status != "completed" || len(last.Parts) != 2 || last.Parts[0].Text != "seed" || !strings.Contains(string(last.Parts[1].Data), `"success":true`) {
			t.Fatalf("%s", body)
		}
	})

	t.Run("audited as the proxy agent", func(t *testing.T) {
		recs, err := f.db.QueryAudit(ctx, store.AuditFilter{Agent: "proxy", Tool: "mcp_tools_echo"})
		if err != nil || len(recs) == 0 {
			t.Fatalf("audit %v %v", recs, err)
		}
		if recs[0].Outcome != "ok" || !recs[0].Untrusted {
			t.Fatalf("audit record %+v", recs[0])
		}
	})
}

func TestProxyStreamsProgress(t *testing.T) {
	f, _ := newProxyFixture(t)
	cl := f.a2aClient("proxy")
	var progress []string
	var last a2a.TaskState
	var final *a2a.Message
	var taskID a2a.TaskID
	for ev, err := range cl.SendStreamingMessage(context.Background(), proxyMessage("tools", "progress", map[string]any{"steps": 4})) {
		if err != nil {
			t.Fatal(err)
		}
		switch v := ev.(type) {
		case *a2a.Task:
			taskID = v.ID
		case *a2a.TaskStatusUpdateEvent:
			last, final = v.Status.State, v.Status.Message
			if v.TaskID != taskID {
				t.Fatalf("event of task %s in the stream of %s", v.TaskID, taskID)
			}
			if v.Status.State == a2a.TaskStateWorking && v.Status.Message != nil {
				progress = append(progress, v.Status.Message.Parts[0].Text())
			}
		}
	}
	if last != a2a.TaskStateCompleted || final == nil || !strings.Contains(final.Parts[0].Text(), "4 steps done") {
		t.Fatalf("ended %s with %+v", last, final)
	}
	// Bursts are coalesced, and the last report may race the result, so
	// not every step need show; the ones that do are in order.
	re := regexp.MustCompile(`^tool mcp_tools_progress: progress (\d)/4: step (\d)$`)
	prev := 0
	for _, p := range progress {
		m := re.FindStringSubmatch(p)
		if m == nil || m[1] != m[2] || int(m[1][0]-'0') <= prev {
			t.Fatalf("progress updates %q", progress)
		}
		prev = int(m[1][0] - '0')
	}
	if len(progress) == 0 {
		t.Fatal("no progress update")
	}
}

func TestProxyCancelCancelsUpstream(t *testing.T) {
	f, u := newProxyFixture(t)
	cl := f.a2aClient("proxy")
	ctx := context.Background()
	req := proxyMessage("tools", "hang", nil)
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := cl.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	select {
	case <-u.hanging:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call never started")
	}
	canceled, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("state %s", canceled.Status.State)
	}
	deadline := time.Now().Add(5 * time.Second)
	for u.cancelled.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream call was not cancelled")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestProxyShutdownFailsTheTask checks that a proxied call a stopping
// daemon ends (a2aedge.Server.FailRuns with agent.ErrShuttingDown, what
// a drain that timed out does) fails its task with shutting_down: not
// canceled, which would tell the client it had canceled it.
func TestProxyShutdownFailsTheTask(t *testing.T) {
	f, u := newProxyFixture(t)
	cl := f.a2aClient("proxy")
	ctx := context.Background()
	req := proxyMessage("tools", "hang", nil)
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := cl.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	select {
	case <-u.hanging:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call never started")
	}
	f.s.FailRuns(agent.ErrShuttingDown)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State.Terminal() {
			if got.Status.State != a2a.TaskStateFailed {
				t.Fatalf("state %s, want failed", got.Status.State)
			}
			data, _ := replyOf(t, got)
			if source, code := errorOf(data); source != "A2A_PROXY" || code != "shutting_down" {
				t.Errorf("error %v %v, want A2A_PROXY shutting_down", source, code)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task is still %s", got.Status.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProxyAsksForMissingArguments checks that a call lacking required
// arguments keeps its task: it turns input-required, and the next
// message on the same task (data or text) completes it.
func TestProxyAsksForMissingArguments(t *testing.T) {
	f, _ := newProxyFixture(t)
	cl := f.a2aClient("proxy")
	ctx := context.Background()
	res, err := cl.SendMessage(ctx, proxyMessage("tools", "greet", nil))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("state %s", task.Status.State)
	}
	q, _ := replyOf(t, task)
	if q["type"] != "arguments_required" || fmt.Sprint(q["missing"]) != "[name times]" {
		t.Fatalf("question %v", q)
	}
	// A data part gives one argument; the task asks for the other.
	res, err = cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task,
		a2a.NewDataPart(map[string]any{"arguments": map[string]any{"name": "Ada"}}))})
	if err != nil {
		t.Fatal(err)
	}
	again := res.(*a2a.Task)
	if again.ID != task.ID || again.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task %s in %s, want %s input-required", again.ID, again.Status.State, task.ID)
	}
	// Text answers the last one, parsed by the schema's type.
	res, err = cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, again, a2a.NewTextPart("2"))})
	if err != nil {
		t.Fatal(err)
	}
	done := res.(*a2a.Task)
	data, text := replyOf(t, done)
	if done.ID != task.ID || done.ContextID != task.ContextID || done.Status.State != a2a.TaskStateCompleted || data["success"] != true {
		t.Fatalf("task %s/%s %s: %q", done.ID, done.ContextID, done.Status.State, text)
	}
	if !strings.HasPrefix(text, "hello Ada! hello Ada!") {
		t.Fatalf("text %q", text)
	}
	// The context goes on: a new task in it.
	next := proxyMessage("tools", "echo", map[string]any{"text": "again"})
	next.Message.ContextID = task.ContextID
	res, err = cl.SendMessage(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.(*a2a.Task); n.ContextID != task.ContextID || n.ID == task.ID || n.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("next task %s/%s %s", n.ID, n.ContextID, n.Status.State)
	}
	got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("get %v %v", got, err)
	}
}

func TestProxyCard(t *testing.T) {
	f, _ := newProxyFixture(t)
	code, body := f.get("/a2a/agents/proxy/.well-known/agent-card.json")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	card, err := a2aedge.ParseCard(body)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	want := []string{"tools/broken", "tools/echo", "tools/fail", "tools/greet", "tools/hang", "tools/progress", "tools/sum"}
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Fatalf("skills %v, want %v", ids, want)
	}
	for _, s := range card.Skills {
		if s.ID == "tools/greet" && !strings.Contains(s.Description, `"required":["name","times"]`) {
			t.Fatalf("greet's description lacks its schema: %q", s.Description)
		}
	}
	if len(card.Capabilities.Extensions) != 1 || card.Capabilities.Extensions[0].URI != ProxyExtensionURI {
		t.Fatalf("extensions %+v", card.Capabilities.Extensions)
	}
	tools, _ := card.Capabilities.Extensions[0].Params["tools"].([]any)
	if len(tools) != len(want) {
		t.Fatalf("extension tools %v", tools)
	}
	first := tools[0].(map[string]any)
	if _, ok := first["input_schema"].(map[string]any); !ok || first["target_mcp_server_id"] != "tools" {
		t.Fatalf("extension entry %v", first)
	}

	_, body = f.get("/a2a/agents/narrow/.well-known/agent-card.json")
	narrow, err := a2aedge.ParseCard(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(narrow.Skills) != 1 || narrow.Skills[0].ID != "tools/echo" {
		t.Fatalf("narrow skills %+v", narrow.Skills)
	}
}

// FuzzProxyRequest checks that no message crashes the request decoder and
// that anything it accepts names a server and a tool.
func FuzzProxyRequest(f *testing.F) {
	f.Add(`{"target_mcp_server_id":"s","tool_name":"t","arguments":{"a":1}}`, true)
	f.Add(`{"tool_name":"t","arguments":"x"}`, true)
	f.Add(`{"tool_name": 5}`, false)
	f.Add(`not json`, false)
	f.Fuzz(func(t *testing.T, body string, asData bool) {
		var part *a2a.Part
		var v any
		if asData && json.Unmarshal([]byte(body), &v) == nil {
			part = a2a.NewDataPart(v)
		} else {
			part = a2a.NewTextPart(body)
		}
		req, perr := parseProxyRequest(a2a.NewMessage(a2a.MessageRoleUser, part))
		if perr == nil && (req.Server == "" || req.Tool == "") {
			t.Fatalf("accepted %q without a server or tool", body)
		}
		if perr != nil && (perr.Source != SourceProxy || perr.Code != "invalid_request") {
			t.Fatalf("decoder error %+v", perr)
		}
	})
}

func userMessage(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
}
