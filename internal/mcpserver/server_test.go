package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// transports connects a client to the harness each way the server is
// served: stdio, a 2025-11-25 HTTP session, and 2026-07-28 stateless HTTP.
var transports = []struct {
	name    string
	connect func(t *testing.T, h *harness, copts *mcp.ClientOptions) *mcp.ClientSession
	wantVer string
}{
	{"stdio", func(t *testing.T, h *harness, copts *mcp.ClientOptions) *mcp.ClientSession {
		return h.stdioClient(t, copts)
	}, "2026-07-28"},
	{"http-2025-11-25", func(t *testing.T, h *harness, copts *mcp.ClientOptions) *mcp.ClientSession {
		ts := h.httpServer(t)
		c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}, "2025-11-25"},
	{"http-2026-07-28", func(t *testing.T, h *harness, copts *mcp.ClientOptions) *mcp.ClientSession {
		ts := h.httpServer(t)
		return httpClient(t, ts.URL+"/mcp", copts)
	}, "2026-07-28"},
}

func TestAgentToolEveryTransport(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{model: llmtest.Script(
				llmtest.Reply{Text: "Paris is the capital.", Chunks: 3},
				llmtest.Reply{Text: "You asked about France."},
			)})
			cs := tr.connect(t, h, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != tr.wantVer {
				t.Errorf("protocol version %q, want %q", got, tr.wantVer)
			}
			ctx := context.Background()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			if !slices.Equal(names, []string{"agentd_agent_helper_bot"}) {
				t.Fatalf("tools %v, want only the exposed agent", names)
			}
			if list.Tools[0].OutputSchema == nil {
				t.Error("agent tool has no output schema")
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agentd_agent_helper_bot", Arguments: map[string]any{"message": "capital of France?"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 2 || res.Content[0].(*mcp.TextContent).Text != "Paris is the capital." {
				t.Fatalf("result %q (error %v), want the answer then the structured content as text", textOf(t, res), res.IsError)
			}
			var sc struct {
				SessionID  string `json:"session_id"`
				StopReason string `json:"stop_reason"`
			}
			remarshal(t, res.StructuredContent, &sc)
			if sc.SessionID == "" || sc.StopReason != "end_turn" {
				t.Fatalf("structured content %+v", sc)
			}

			// The session continues with session_id.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "agentd_agent_helper_bot", Arguments: map[string]any{"message": "what did I ask?", "session_id": sc.SessionID}})
			if err != nil || res.IsError {
				t.Fatalf("second call: %v %v", err, res)
			}
			last := h.provider.Last()
			if n := len(last.Messages); n != 3 {
				t.Fatalf("second turn sent %d messages to the model, want 3 (history kept)", n)
			}
		})
	}
}

func TestAgentToolErrors(t *testing.T) {
	h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Status: 500, ErrorMessage: "boom"})})
	cs := h.stdioClient(t, nil)
	ctx := context.Background()
	tests := []struct {
		name      string
		tool      string
		args      any
		protoErr  bool
		wantError string
	}{
		{"missing message", "agentd_agent_helper_bot", map[string]any{}, false, "invalid arguments"},
		{"message not a string", "agentd_agent_helper_bot", map[string]any{"message": 3}, false, "invalid arguments"},
		{"model fails", "agentd_agent_helper_bot", map[string]any{"message": "hi"}, false, "boom"},
		{"unknown session", "agentd_agent_helper_bot", map[string]any{"message": "hi", "session_id": "nope"}, false, "session not found"},
		{"unknown tool", "agentd_agent_nobody", map[string]any{"message": "hi"}, true, "unknown tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if tc.protoErr {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("err %v, want a protocol error containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatalf("protocol error %v, want a tool error", err)
			}
			if !res.IsError || !strings.Contains(textOf(t, res), tc.wantError) {
				t.Fatalf("result %q (isError %v), want an error containing %q", textOf(t, res), res.IsError, tc.wantError)
			}
		})
	}
}

func TestProgressAndCancel(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{
				tools: []tool.Tool{echoTool{}},
				model: func(req *llmtest.Request) llmtest.Reply {
					switch {
					case req.Seq == 1:
						return llmtest.Reply{Text: "Let me echo. ", ToolCalls: []llm.ToolCall{llmtest.ToolCall("echo", `{"text":"hi"}`)}}
					case req.Seq == 2:
						return llmtest.Reply{Text: "Done echoing."}
					case req.LastUserText() == "slow":
						// About 20 s of streaming unless cancelled.
						return llmtest.Reply{Text: strings.Repeat("slow ", 200), Chunks: 200, Delay: 100 * time.Millisecond}
					}
					return llmtest.Reply{Text: "after"}
				},
			})
			var mu sync.Mutex
			var msgs []string
			cs := tr.connect(t, h, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				msgs = append(msgs, r.Params.Message)
				mu.Unlock()
			}})
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "agentd_agent_helper_bot", Arguments: map[string]any{"message": "echo hi"}}
			params.SetProgressToken("tok-1")
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			// Notifications precede the result on the wire, but the client
			// may hand them to the handler after CallTool returns.
			var got string
			waitFor(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				got = strings.Join(msgs, "|")
				return strings.Contains(got, "Done echoing.")
			})
			for _, want := range []string{"Let me echo.", "calling tool echo", "tool echo: echoing", "tool echo finished", "Done echoing."} {
				if !strings.Contains(got, want) {
					t.Errorf("progress %q lacks %q", got, want)
				}
			}

			// Cancelling the request cancels the run: the session is free
			// again long before the slow answer would have ended.
			cctx, cancel := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "agentd_agent_helper_bot", Arguments: map[string]any{"message": "slow"}})
				errc <- err
			}()
			var slowID string
			waitFor(t, func() bool {
				list, _ := h.db.ListSessions(ctx, store.SessionFilter{})
				for _, s := range list {
					if s.Title == "slow" {
						slowID = s.ID
					}
				}
				return slowID != "" && h.provider.Count() >= 3
			})
			cancel()
			if err := <-errc; err == nil {
				t.Fatal("cancelled call returned no error")
			}
			start := time.Now()
			waitFor(t, func() bool {
				_, err := h.kernel.Run(ctx, &agent.RunRequest{Agent: "helper-bot", SessionID: slowID, Input: llm.TextMessage(llm.RoleUser, "again")})
				return !errors.Is(err, agent.ErrSessionBusy)
			})
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("run went on for %v after cancellation", d)
			}
		})
	}
}

func TestToolListChanged(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			changed := make(chan struct{}, 10)
			cs := tr.connect(t, h, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				changed <- struct{}{}
			}})
			ctx := context.Background()
			// A 2026-07-28 client subscribes (subscriptions/listen) in the
			// background after connecting, with no event a test can wait
			// on; so the change is repeated (as an update) until one is
			// notified.
			notified := false
			for i := 0; i < 20 && !notified; i++ {
				m := manifest.Manifest{Name: "new-one", Description: "v" + itoa(i), Provider: "fake", Model: "m", Expose: manifest.Exposure{MCP: true}}
				if err := h.kernel.Agents().Put(ctx, m); err != nil {
					t.Fatal(err)
				}
				select {
				case <-changed:
					notified = true
				case <-time.After(250 * time.Millisecond):
				}
			}
			if !notified {
				t.Fatal("no notifications/tools/list_changed after creating an agent")
			}
			if names := toolNames(t, cs); !slices.Contains(names, "agentd_agent_new_one") {
				t.Fatalf("tools %v lack the new agent", names)
			}
			for len(changed) > 0 {
				<-changed
			}
			if err := h.kernel.Agents().Delete(ctx, "new-one"); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-time.After(5 * time.Second):
				t.Fatal("no notifications/tools/list_changed after deleting an agent")
			}
			// A late notification of the updates above may be the one
			// received; the deletion shows up in the list soon after.
			waitFor(t, func() bool { return !slices.Contains(toolNames(t, cs), "agentd_agent_new_one") })
		})
	}
}

func TestExposeTools(t *testing.T) {
	h := newHarness(t, harnessOptions{
		cfg:       config.MCPServe{ExposeTools: true},
		tools:     []tool.Tool{echoTool{}, fakeUpstream{name: "mcp_web_fetch", text: "page"}, shellTool{}},
		untrusted: map[string]policy.Action{"shell_exec": policy.Ask},
	})
	changed := make(chan struct{}, 10)
	ts := h.httpServer(t)
	// Taint lives in an MCP session: a 2025-11-25 one here (2026-07-28
	// requests are sessionless, each its own scope).
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	names := toolNames(t, cs)
	for _, want := range []string{"agentd_agent_helper_bot", "echo", "agent_send", "agent_list", "mcp_web_fetch", "shell_exec"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}})
	if err != nil || res.IsError || textOf(t, res) != "ping" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"echoed":"ping"}` {
		t.Errorf("structured content %s", sc)
	}
	// Before untrusted data, shell_exec runs.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell_exec", Arguments: map[string]any{"cmd": "ls"}})
	if err != nil || res.IsError {
		t.Fatalf("shell_exec before taint: %v %+v", err, res)
	}
	// An upstream result taints the session ...
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_web_fetch", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(textOf(t, res), "<untrusted-data") {
		t.Fatalf("upstream call: %v %+v", err, res)
	}
	// ... after which the untrusted policy asks, and nobody can answer.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell_exec", Arguments: map[string]any{"cmd": "ls"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(textOf(t, res), "needs approval") {
		t.Fatalf("shell_exec after taint: %q, want a denial naming the approval", textOf(t, res))
	}
	// Every call was audited under the MCP client's name.
	recs, err := h.db.QueryAudit(ctx, auditFilter(ClientAgent))
	if err != nil || len(recs) != 4 {
		t.Fatalf("audit: %d records, err %v; want 4", len(recs), err)
	}
	// A change in the registry (an upstream's tools/list_changed) reaches
	// the client on its GET stream, which it opens in the background: the
	// change is repeated until one is notified.
	for i := 0; ; i++ {
		h.tools.Add(fakeUpstream{name: "mcp_web_new" + itoa(i), text: "x"})
		select {
		case <-changed:
		case <-time.After(250 * time.Millisecond):
			if i < 20 {
				continue
			}
			t.Fatal("no notifications/tools/list_changed after the registry changed")
		}
		break
	}
	waitFor(t, func() bool { return slices.Contains(toolNames(t, cs), "mcp_web_new0") })
}

func TestApprovalByElicitation(t *testing.T) {
	h := newHarness(t, harnessOptions{
		cfg:       config.MCPServe{ExposeTools: true},
		tools:     []tool.Tool{fakeUpstream{name: "mcp_web_fetch", text: "page"}, shellTool{}},
		untrusted: map[string]policy.Action{"shell_exec": policy.Ask},
	})
	ts := h.httpServer(t)
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": len(asked) == 1}}, nil
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_web_fetch", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	for i, wantErr := range []bool{false, true} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell_exec", Arguments: map[string]any{"cmd": "ls"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != wantErr {
			t.Fatalf("call %d: isError %v (%q), want %v", i, res.IsError, textOf(t, res), wantErr)
		}
	}
	if len(asked) != 2 || !strings.Contains(asked[0], "shell_exec") {
		t.Fatalf("elicitations %q", asked)
	}
}

func TestSessionResources(t *testing.T) {
	h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Text: "answer with ``` fences"})})
	cs := h.stdioClient(t, nil)
	ctx := context.Background()
	var ids []string
	for i := range 55 {
		res, err := h.kernel.Run(ctx, runRequest("helper-bot", "question "+itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.SessionID)
	}
	first, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Resources) != sessionPageSize || first.NextCursor == "" {
		t.Fatalf("first page: %d resources, cursor %q", len(first.Resources), first.NextCursor)
	}
	second, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Resources) != 5 || second.NextCursor != "" {
		t.Fatalf("second page: %d resources, cursor %q", len(second.Resources), second.NextCursor)
	}
	seen := map[string]bool{}
	for _, r := range append(first.Resources, second.Resources...) {
		seen[r.URI] = true
	}
	for _, id := range ids {
		if !seen[SessionURI(id)] {
			t.Fatalf("session %s not listed", id)
		}
	}
	if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "bogus"}); err == nil {
		t.Error("a bogus cursor was accepted")
	}

	md, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: SessionURI(ids[0])})
	if err != nil {
		t.Fatal(err)
	}
	text := md.Contents[0].Text
	for _, want := range []string{"# question 0", "## User", "question 0", "## Assistant", "answer with ``` fences", "agent: `helper-bot`"} {
		if !strings.Contains(text, want) {
			t.Errorf("transcript lacks %q:\n%s", want, text)
		}
	}
	js, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: SessionURI(ids[0]) + "/messages.json"})
	if err != nil {
		t.Fatal(err)
	}
	var doc sessionJSON
	if err := json.Unmarshal([]byte(js.Contents[0].Text), &doc); err != nil || doc.Session.ID != ids[0] || len(doc.Messages) != 2 {
		t.Fatalf("json transcript %q: %v", js.Contents[0].Text, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: SessionURI("missing")}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("reading a missing session: %v", err)
	}
}
