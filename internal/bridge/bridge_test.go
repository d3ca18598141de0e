package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/mcpserver"
	"github.com/agentd/agentd/internal/store"
)

// bridgeScript is the local agents' scripted model.
func bridgeScript(r *llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	if last.Role == llm.RoleTool {
		if last.ToolResults[0].Name == "untrusted_fetch" {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("danger", `{}`)}}
		}
		return llmtest.Reply{Text: "approved: " + last.ToolResults[0].Content}
	}
	switch text := r.LastUserText(); text {
	case "count":
		return llmtest.Reply{Text: fmt.Sprintf("%d messages", len(r.Messages))}
	case "stream me":
		return llmtest.Reply{Text: "streamed answer", Chunks: 3, Delay: 5 * time.Millisecond}
	case "slow":
		return llmtest.Reply{Text: strings.Repeat("z", 500), Chunks: 500, Delay: 20 * time.Millisecond}
	case "approve me":
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("untrusted_fetch", `{}`)}}
	default:
		return llmtest.Reply{Text: "echo: " + text}
	}
}

// bridgeClient connects an MCP client to an MCP server serving the
// bridge's tools, in memory.
type bridgeClient struct {
	cs       *mcp.ClientSession
	mu       sync.Mutex
	calls    int
	progress map[string][]string // by progress token
	asked    []*mcp.ElicitParams
}

type clientOptions struct {
	version string // "" for the newest
	// elicit answers elicitations; nil declares no elicitation support.
	elicit func(*mcp.ElicitParams) *mcp.ElicitResult
}

func connectBridge(t *testing.T, b *Bridge, o clientOptions) *bridgeClient {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bridge-test", Version: "1"}, nil)
	tools, err := b.MCPTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		srv.AddTool(tl, b.CallMCPTool)
	}
	bc := &bridgeClient{progress: map[string][]string{}}
	copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		bc.mu.Lock()
		token := fmt.Sprint(req.Params.ProgressToken)
		bc.progress[token] = append(bc.progress[token], req.Params.Message)
		bc.mu.Unlock()
	}}
	if o.elicit != nil {
		copts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			bc.mu.Lock()
			bc.asked = append(bc.asked, req.Params)
			bc.mu.Unlock()
			return o.elicit(req.Params), nil
		}
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: o.version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
	})
	bc.cs = cs
	return bc
}

// call calls tool; its progress reports are under the token "call-N" of
// the N-th call.
func (bc *bridgeClient) call(t *testing.T, ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	bc.mu.Lock()
	bc.calls++
	token := fmt.Sprintf("call-%d", bc.calls)
	bc.mu.Unlock()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	p.SetProgressToken(token)
	res, err := bc.cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	return res, sc
}

func textOf(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

func TestBridgeTools(t *testing.T) {
	remote := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "remote says: " + r.LastUserText()}
	}, fixtureOptions{})
	f := newFixture(t, bridgeScript, fixtureOptions{external: []a2aedge.ExternalAgent{{Name: "Remote Beta", URL: remote.endpoint("beta"), AllowPrivate: true}}})
	b := NewBridge(BridgeOptions{Server: f.s, Kernel: f.k, Client: f.client})
	defer b.Close()
	changed := make(chan struct{}, 1)
	b.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	// Discovery happens in the background; the bridge says when it lands.
	deadline := time.After(10 * time.Second)
	for !f.client.Agents()[0].Discovered {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the external agent was not discovered")
		}
	}
	tools, err := b.MCPTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if string(tl.InputSchema.(json.RawMessage)) != bridgeSchema {
			t.Errorf("%s: schema %s", tl.Name, tl.InputSchema)
		}
	}
	if fmt.Sprint(names) != "[a2a_local_alpha a2a_local_beta a2a_remote_beta]" {
		t.Fatalf("tools %v", names)
	}
	if !strings.Contains(tools[0].Description, "Q&A: answers") || !strings.Contains(tools[2].Description, "/a2a/agents/beta") {
		t.Fatalf("descriptions %q / %q", tools[0].Description, tools[2].Description)
	}

	ctx := context.Background()
	bc := connectBridge(t, b, clientOptions{})

	t.Run("local agent, then the same conversation", func(t *testing.T) {
		res, sc := bc.call(t, ctx, "a2a_local_alpha", map[string]any{"message": "hello"})
		if res.IsError || textOf(res) != "echo: hello" || sc["state"] != "completed" || sc["agent"] != "alpha" {
			t.Fatalf("%q %v", textOf(res), sc)
		}
		// The task is a real A2A task of agent alpha.
		st, err := f.s.GetTask(ctx, "alpha", a2a.TaskID(sc["task_id"].(string)))
		if err != nil || st.ContextID != sc["context_id"] {
			t.Fatalf("task %v %v", st, err)
		}
		res, sc2 := bc.call(t, ctx, "a2a_local_alpha", map[string]any{"message": "count", "context_id": sc["context_id"]})
		if textOf(res) != "3 messages" || sc2["context_id"] != sc["context_id"] || sc2["task_id"] == sc["task_id"] {
			t.Fatalf("second turn %q %v", textOf(res), sc2)
		}
	})

	t.Run("remote agent", func(t *testing.T) {
		res, sc := bc.call(t, ctx, "a2a_remote_beta", map[string]any{"message": "ping"})
		if res.IsError || textOf(res) != "remote says: ping" || sc["state"] != "completed" || sc["task_id"] == nil {
			t.Fatalf("%q %v", textOf(res), sc)
		}
		if _, err := remote.tasks.Get(ctx, a2a.TaskID(sc["task_id"].(string))); err != nil {
			t.Fatalf("the remote has no task %v: %v", sc["task_id"], err)
		}
	})

	t.Run("progress", func(t *testing.T) {
		res, _ := bc.call(t, ctx, "a2a_local_alpha", map[string]any{"message": "stream me"})
		bc.mu.Lock()
		token := fmt.Sprintf("call-%d", bc.calls)
		bc.mu.Unlock()
		if textOf(res) != "streamed answer" {
			t.Fatalf("%q", textOf(res))
		}
		// Notifications are handled apart from the result: wait for them.
		deadline := time.Now().Add(5 * time.Second)
		for {
			bc.mu.Lock()
			got := strings.Join(bc.progress[token], "|")
			bc.mu.Unlock()
			// Text deltas arrive as they stream, in order.
			if strings.HasPrefix(got, "working") && strings.Contains(strings.ReplaceAll(got, "|", ""), "streamed answer") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("progress %q", got)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})

	t.Run("cancel cancels the task", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			p := &mcp.CallToolParams{Name: "a2a_local_alpha", Arguments: map[string]any{"message": "slow"}}
			p.SetProgressToken("slow")
			_, err := bc.cs.CallTool(cctx, p)
			done <- err
		}()
		// Wait for the run to stream, then cancel the MCP call.
		var id a2a.TaskID
		for id == "" {
			tasks, _, err := f.db.ListTasks(ctx, store.TaskFilter{Agent: "alpha", State: string(a2a.TaskStateWorking)})
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) > 0 {
				id = a2a.TaskID(tasks[0].ID)
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled call succeeded")
		}
		f.waitTask(id, a2a.TaskStateCanceled)
	})

	t.Run("input required without elicitation", func(t *testing.T) {
		res, sc := bc.call(t, ctx, "a2a_local_alpha", map[string]any{"message": "approve me"})
		if res.IsError || sc["state"] != "input-required" || !strings.Contains(textOf(res), "Approval needed") || !strings.Contains(textOf(res), "call a2a_local_alpha again with task_id") {
			t.Fatalf("%q %v", textOf(res), sc)
		}
		res, sc2 := bc.call(t, ctx, "a2a_local_alpha", map[string]any{"message": "yes", "task_id": sc["task_id"], "context_id": sc["context_id"]})
		if sc2["state"] != "completed" || sc2["task_id"] != sc["task_id"] || !strings.HasPrefix(textOf(res), "approved: done something dangerous") {
			t.Fatalf("%q %v", textOf(res), sc2)
		}
	})

	t.Run("bad arguments", func(t *testing.T) {
		res, _ := bc.call(t, ctx, "a2a_local_alpha", map[string]any{})
		if !res.IsError || !strings.Contains(textOf(res), "give a message") {
			t.Fatalf("%+v", res)
		}
	})
}

// TestBridgeElicits checks that input-required reaches clients that can
// answer: by elicitation on 2025-11-25, by an input-required result on
// 2026-07-28 (the go-sdk client fulfils and retries it), the task staying
// one task throughout.
func TestBridgeElicits(t *testing.T) {
	f := newFixture(t, bridgeScript, fixtureOptions{})
	b := NewBridge(BridgeOptions{Server: f.s, Kernel: f.k})
	defer b.Close()
	for _, tc := range []struct {
		version string
		answer  bool
		want    string
	}{
		{"2025-11-25", true, "approved: done something dangerous"},
		{"2025-11-25", false, "rejected"},
		{"2026-07-28", true, "approved: done something dangerous"},
	} {
		t.Run(fmt.Sprintf("%s approve=%v", tc.version, tc.answer), func(t *testing.T) {
			bc := connectBridge(t, b, clientOptions{version: tc.version, elicit: func(p *mcp.ElicitParams) *mcp.ElicitResult {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved": tc.answer}}
			}})
			if got := bc.cs.InitializeResult().ProtocolVersion; got != tc.version {
				t.Fatalf("negotiated %s", got)
			}
			res, sc := bc.call(t, context.Background(), "a2a_local_alpha", map[string]any{"message": "approve me"})
			if !strings.Contains(textOf(res), tc.want) || sc["state"] != "completed" {
				t.Fatalf("%q %v", textOf(res), sc)
			}
			bc.mu.Lock()
			defer bc.mu.Unlock()
			if len(bc.asked) != 1 || !strings.Contains(bc.asked[0].Message, "danger") {
				t.Fatalf("asked %+v", bc.asked)
			}
			schema, _ := json.Marshal(bc.asked[0].RequestedSchema)
			if !strings.Contains(string(schema), `"approved":{"title":"Allow it","type":"boolean"}`) {
				t.Fatalf("schema %s", schema)
			}
		})
	}
	t.Run("declined: the task still waits", func(t *testing.T) {
		bc := connectBridge(t, b, clientOptions{version: "2025-11-25", elicit: func(*mcp.ElicitParams) *mcp.ElicitResult {
			return &mcp.ElicitResult{Action: "decline"}
		}})
		res, sc := bc.call(t, context.Background(), "a2a_local_alpha", map[string]any{"message": "approve me"})
		if sc["state"] != "input-required" || !strings.HasPrefix(textOf(res), "You declined; the task still waits.") {
			t.Fatalf("%q %v", textOf(res), sc)
		}
	})
	t.Run("forged request state", func(t *testing.T) {
		forged := b.seal(requestState{Tool: "a2a_local_alpha", Task: "t1"})
		if _, err := b.open(forged, "a2a_local_alpha"); err != nil {
			t.Fatalf("own state refused: %v", err)
		}
		other := NewBridge(BridgeOptions{Server: f.s, Kernel: f.k})
		defer other.Close()
		if _, err := other.open(forged, "a2a_local_alpha"); err == nil {
			t.Fatal("a state sealed by another bridge was accepted")
		}
		if _, err := b.open(forged, "a2a_local_beta"); err == nil {
			t.Fatal("a state for another tool was accepted")
		}
	})
	t.Run("replicas sharing a key open each other's state", func(t *testing.T) {
		key := []byte(strings.Repeat("k", 32))
		one := NewBridge(BridgeOptions{Server: f.s, Kernel: f.k, Key: key})
		defer one.Close()
		two := NewBridge(BridgeOptions{Server: f.s, Kernel: f.k, Key: key})
		defer two.Close()
		st := one.seal(requestState{Tool: "a2a_local_alpha", Task: "t1"})
		if got, err := two.open(st, "a2a_local_alpha"); err != nil || got.Task != "t1" {
			t.Fatalf("state sealed by a replica with the same key: %+v, %v", got, err)
		}
		if _, err := b.open(st, "a2a_local_alpha"); err == nil {
			t.Fatal("a state sealed with another key was accepted")
		}
	})
}

// TestBridgeThroughProxy chains both bridges: MCP → A2A (the bridge) → the
// MCP proxy agent → an upstream MCP server; the proxy's question for a
// missing argument becomes an elicitation form of that argument.
func TestBridgeThroughProxy(t *testing.T) {
	f, _ := newProxyFixture(t)
	b := NewBridge(BridgeOptions{Server: f.s, Kernel: f.k})
	defer b.Close()
	bc := connectBridge(t, b, clientOptions{version: "2025-11-25", elicit: func(p *mcp.ElicitParams) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "times": 1}}
	}})
	ctx := context.Background()
	res, sc := bc.call(t, ctx, "a2a_local_proxy", map[string]any{"data": map[string]any{"target_mcp_server_id": "tools", "tool_name": "sum", "arguments": map[string]any{"a": 1, "b": 2}}})
	data, _ := sc["data"].([]any)
	if res.IsError || sc["state"] != "completed" || len(data) != 1 {
		t.Fatalf("%q %v", textOf(res), sc)
	}
	reply := data[0].(map[string]any)
	if reply["success"] != true || fmt.Sprint(reply["mcp_result"].(map[string]any)["structuredContent"]) != "map[sum:3]" {
		t.Fatalf("reply %v", reply)
	}

	res, sc = bc.call(t, ctx, "a2a_local_proxy", map[string]any{"data": map[string]any{"target_mcp_server_id": "tools", "tool_name": "greet"}})
	if sc["state"] != "completed" || !strings.Contains(textOf(res), "hello Ada!") {
		t.Fatalf("%q %v", textOf(res), sc)
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	schema, _ := json.Marshal(bc.asked[0].RequestedSchema)
	if !strings.Contains(string(schema), `"times":{"type":"integer"}`) || !strings.Contains(string(schema), `"required":["name","times"]`) {
		t.Fatalf("form %s", schema)
	}
}

// TestBridgeResult checks how a settled task becomes a tool result.
func TestBridgeResult(t *testing.T) {
	tgt := bridgeTarget{tool: "a2a_x", agent: "x"}
	tv := &taskView{id: "t1", contextID: "c1", state: a2a.TaskStateCompleted, artifacts: []*a2a.Artifact{
		{ID: "a1", Parts: a2a.ContentParts{a2a.NewTextPart("see "), a2a.NewTextPart("files")}},
		{ID: "a2", Parts: a2a.ContentParts{
			{Content: a2a.URL("https://example.com/r.pdf"), Filename: "r.pdf", MediaType: "application/pdf"},
			{Content: a2a.Raw("hello"), Filename: "h.txt", MediaType: "text/plain"},
			{Content: a2a.Raw([]byte{0, 1, 2}), MediaType: "image/png"},
			a2a.NewDataPart(map[string]any{"k": 1.0}),
		}},
	}}
	res := tv.result(tgt)
	if res.IsError || textOf(res) != `see files{"k":1}` {
		t.Fatalf("text %q", textOf(res))
	}
	link, ok := res.Content[1].(*mcp.ResourceLink)
	if !ok || link.URI != "https://example.com/r.pdf" || link.Name != "r.pdf" || link.MIMEType != "application/pdf" {
		t.Fatalf("link %#v", res.Content[1])
	}
	txt, ok := res.Content[2].(*mcp.EmbeddedResource)
	if !ok || txt.Resource.Text != "hello" || txt.Resource.URI != "agentd://a2a/tasks/t1/files/4/h.txt" {
		t.Fatalf("text resource %#v", res.Content[2])
	}
	bin, ok := res.Content[3].(*mcp.EmbeddedResource)
	if !ok || string(bin.Resource.Blob) != "\x00\x01\x02" || bin.Resource.MIMEType != "image/png" {
		t.Fatalf("blob resource %#v", res.Content[3])
	}
	sc := res.StructuredContent.(map[string]any)
	if sc["task_id"] != "t1" || sc["context_id"] != "c1" || fmt.Sprint(sc["data"]) != "[map[k:1]]" {
		t.Fatalf("structured %v", sc)
	}
	if last := res.Content[len(res.Content)-1].(*mcp.TextContent).Text; !strings.Contains(last, `"task_id":"t1"`) {
		t.Fatalf("structured content not repeated as text: %q", last)
	}

	tv.state = a2a.TaskStateFailed
	tv.artifacts = nil
	tv.status = a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("it broke"))
	res = tv.result(tgt)
	if !res.IsError || textOf(res) != "it broke" || res.StructuredContent.(map[string]any)["state"] != "failed" {
		t.Fatalf("failed task: %+v", res)
	}
}

// FuzzRequestState checks that no client-supplied requestState crashes
// open or passes for one the bridge did not seal.
func FuzzRequestState(f *testing.F) {
	b := &Bridge{key: []byte("0123456789abcdef0123456789abcdef")}
	good := b.seal(requestState{Tool: "a2a_x", Task: "t", Context: "c", Kind: questionText})
	f.Add(good)
	f.Add("")
	f.Add("a.b")
	f.Add(good[:len(good)-2] + "AA")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := b.open(s, "a2a_x")
		if err == nil && s != good && b.seal(st) != s {
			t.Fatalf("accepted %q", s)
		}
	})
}

// TestBridgeOnMCPServer serves the bridge from agentd's MCP server edge
// over Streamable HTTP, both eras: a stateful 2025-11-25 session is asked
// by elicitation, a stateless 2026-07-28 client gets an input-required
// result and retries.
func TestBridgeOnMCPServer(t *testing.T) {
	f := newFixture(t, bridgeScript, fixtureOptions{})
	b := NewBridge(BridgeOptions{Server: f.s, Kernel: f.k})
	defer b.Close()
	ms, err := mcpserver.New(context.Background(), mcpserver.Options{Kernel: f.k, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	ms.AddToolSet(b)
	mux := http.NewServeMux()
	ms.Mount(mux)
	hs := httptest.NewServer(mux)
	defer hs.Close()

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			var asked []string
			var mu sync.Mutex
			c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved": true}}, nil
				},
			})
			ctx := context.Background()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s", got)
			}
			// The tool list follows the bridge (AddToolSet re-syncs in
			// the background).
			deadline := time.Now().Add(5 * time.Second)
			for {
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Tools) > 0 && res.Tools[0].Name == "a2a_local_alpha" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("tools %+v", res.Tools)
				}
				time.Sleep(10 * time.Millisecond)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a2a_local_alpha", Arguments: map[string]any{"message": "approve me"}})
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := res.StructuredContent.(map[string]any)
			if sc["state"] != "completed" || !strings.HasPrefix(textOf(res), "approved: done something dangerous") {
				t.Fatalf("%q %v", textOf(res), sc)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || !strings.Contains(asked[0], "Approval needed") {
				t.Fatalf("asked %q", asked)
			}
		})
	}
}
