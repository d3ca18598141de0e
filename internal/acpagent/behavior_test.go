package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/tool"
)

// taintThenWrite is a turn whose file_write needs approval: an upstream
// result taints it first.
func taintThenWrite(path, content string) []llmtest.Reply {
	args, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return []llmtest.Reply{
		{ToolCalls: call("mcp_docs_lookup", `{"q":"x"}`)},
		{ToolCalls: call("file_write", string(args))},
		{Text: "done"},
	}
}

func TestCancelWhileAskingPermission(t *testing.T) {
	w := newWorld(t, llmtest.Script(taintThenWrite("a.txt", "x")...))
	c := w.connect(t, nil)
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd, docsServer)
	// No answer: the editor leaves the question open.
	done := make(chan acp.PromptResponse, 1)
	go func() { done <- c.prompt(ctx, id, "write a.txt") }()
	<-c.ed.asked
	sent := time.Now()
	if err := c.client.Cancel(ctx, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	resp := <-done
	if resp.StopReason != acp.StopReasonCancelled {
		t.Errorf("stop reason = %q, want cancelled", resp.StopReason)
	}
	if d := time.Since(sent); d > 200*time.Millisecond {
		t.Errorf("answered %v after the cancel, want within 200ms", d)
	}
	if _, ok := c.ed.file(filepath.Join(w.cwd, "a.txt")); ok {
		t.Errorf("the file was written although the turn was cancelled before approval")
	}
}

func TestPermissionResentAfterLoad(t *testing.T) {
	w := newWorld(t, llmtest.Script(taintThenWrite("b.txt", "y")...))
	c := w.connect(t, nil)
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd, docsServer)
	done := make(chan acp.PromptResponse, 1)
	go func() { done <- c.prompt(ctx, id, "write b.txt") }()
	first := <-c.ed.asked

	// The editor reloads the session (say its window was reopened): the
	// open question must come again, and the answer to it counts.
	c.ed.setAnswer(func(acp.RequestPermissionRequest) string { return optAllowOnce })
	if _, err := c.client.LoadSession(ctx, acp.LoadSessionRequest{SessionId: id, Cwd: w.cwd, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	var again acp.RequestPermissionRequest
	select {
	case again = <-c.ed.asked:
	case <-time.After(5 * time.Second):
		t.Fatalf("the pending permission request was not sent again after session/load\n%s", c.tr.normalized(t, w.cwd))
	}
	if again.ToolCall.ToolCallId != first.ToolCall.ToolCallId {
		t.Errorf("re-sent request is for %q, want %q", again.ToolCall.ToolCallId, first.ToolCall.ToolCallId)
	}
	if resp := <-done; resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stop reason = %q, want end_turn", resp.StopReason)
	}
	if got, _ := c.ed.file(filepath.Join(w.cwd, "b.txt")); got != "y" {
		t.Errorf("b.txt = %q, want the approved write", got)
	}
	// Replay showed the turn so far: the user's message at least.
	var replayed bool
	c.ed.mu.Lock()
	for _, n := range c.ed.updates {
		if n.Update.UserMessageChunk != nil && n.Update.UserMessageChunk.Content.Text != nil && n.Update.UserMessageChunk.Content.Text.Text == "write b.txt" {
			replayed = true
		}
	}
	c.ed.mu.Unlock()
	if !replayed {
		t.Errorf("session/load did not replay the user's message")
	}
}

// stuckTool ignores cancellation until released, like a tool stuck in a
// system call.
type stuckTool struct {
	started chan struct{}
	release chan struct{}
}

func (stuckTool) Spec() tool.Spec {
	return tool.Spec{Name: "stuck", Description: "never returns early", InputSchema: json.RawMessage(`{"type":"object"}`), Origin: tool.OriginBuiltin}
}

func (s stuckTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	close(s.started)
	<-s.release
	return tool.Result{Content: "finally"}, nil
}

func TestCancelAnswersWhileRunWindsDown(t *testing.T) {
	stuck := stuckTool{started: make(chan struct{}), release: make(chan struct{})}
	w := newWorld(t, llmtest.Script(
		llmtest.Reply{ToolCalls: call("stuck", `{}`)},
		llmtest.Reply{Text: "next turn"},
	), stuck)
	c := w.connect(t, func(o *Options) { o.CancelGrace = 20 * time.Millisecond })
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd)
	done := make(chan acp.PromptResponse, 1)
	go func() { done <- c.prompt(ctx, id, "go") }()
	<-stuck.started
	sent := time.Now()
	if err := c.client.Cancel(ctx, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if resp := <-done; resp.StopReason != acp.StopReasonCancelled {
		t.Errorf("stop reason = %q, want cancelled", resp.StopReason)
	}
	if d := time.Since(sent); d > 200*time.Millisecond {
		t.Errorf("answered %v after the cancel, want within 200ms although the tool ignores it", d)
	}

	// The next prompt waits for the old run to release the session.
	next := make(chan acp.PromptResponse, 1)
	go func() { next <- c.prompt(ctx, id, "again") }()
	select {
	case r := <-next:
		t.Fatalf("next prompt answered (%q) while the previous run still held the session", r.StopReason)
	case <-time.After(50 * time.Millisecond):
	}
	close(stuck.release)
	select {
	case r := <-next:
		if r.StopReason != acp.StopReasonEndTurn {
			t.Errorf("next prompt: stop reason = %q", r.StopReason)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("next prompt never ran")
	}
	// Nothing of the cancelled turn reached the editor after its answer.
	c.ed.mu.Lock()
	defer c.ed.mu.Unlock()
	for _, n := range c.ed.updates {
		if u := n.Update.ToolCallUpdate; u != nil && u.Status != nil && *u.Status == acp.ToolCallStatusCompleted {
			t.Errorf("a tool_call_update of the cancelled turn was sent after its response: %+v", u)
		}
	}
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		name    string
		replies []llmtest.Reply
		maxIter int
		want    acp.StopReason
	}{
		{"end turn", []llmtest.Reply{{Text: "ok"}}, 0, acp.StopReasonEndTurn},
		{"max tokens", []llmtest.Reply{{Text: "cut", StopReason: llm.StopMaxTokens}}, 0, acp.StopReasonMaxTokens},
		{"refusal", []llmtest.Reply{{Text: "no", StopReason: llm.StopRefusal}}, 0, acp.StopReasonRefusal},
		{"max iterations", []llmtest.Reply{{ToolCalls: call("mcp_docs_lookup", `{}`)}}, 1, acp.StopReasonMaxTurnRequests},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, llmtest.Script(tt.replies...))
			if tt.maxIter > 0 {
				w.kernel = agent.New(agent.Options{
					Agents: w.kernel.Agents(), Providers: providerMap{"fake": w.model},
					Runner: w.kernel.Runner(), Sessions: w.db, MaxIterations: tt.maxIter,
				})
			}
			c := w.connect(t, nil)
			ctx := context.Background()
			c.initialize(ctx)
			id := c.newSession(ctx, w.cwd, docsServer)
			if got := c.prompt(ctx, id, "hi").StopReason; got != tt.want {
				t.Errorf("stop reason = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStopReasonMapping(t *testing.T) {
	tests := map[agent.StopReason]acp.StopReason{
		agent.StopEndTurn: acp.StopReasonEndTurn, agent.StopMaxTokens: acp.StopReasonMaxTokens,
		agent.StopMaxIterations: acp.StopReasonMaxTurnRequests, agent.StopTokenBudget: acp.StopReasonMaxTurnRequests,
		agent.StopRefusal: acp.StopReasonRefusal, agent.StopCancelled: acp.StopReasonCancelled,
	}
	for in, want := range tests {
		if got := stopReason(in); got != want {
			t.Errorf("stopReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestModelErrorIsJSONRPCError(t *testing.T) {
	w := newWorld(t, llmtest.Script(llmtest.Reply{Status: 500, ErrorMessage: "upstream exploded"}))
	c := w.connect(t, nil)
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd)
	_, err := c.client.Prompt(ctx, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
	re := requestError(t, err)
	if re.Code != -32603 || !strings.Contains(re.Error(), "upstream exploded") {
		t.Errorf("error = %v, want an internal error naming the model failure", re)
	}
}

func TestAuthentication(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		meta     map[string]any
		wantCode int // 0: success
	}{
		{"right token", AuthMethodID, map[string]any{"token": "t0k3n"}, 0},
		{"wrong token", AuthMethodID, map[string]any{"token": "nope"}, -32000},
		{"no token", AuthMethodID, nil, -32000},
		{"unknown method", "oauth", map[string]any{"token": "t0k3n"}, -32602},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, nil)
			c := w.connect(t, func(o *Options) { o.AuthToken = "t0k3n" })
			ctx := context.Background()
			init := c.initialize(ctx)
			if len(init.AuthMethods) != 1 || init.AuthMethods[0].Agent == nil || init.AuthMethods[0].Agent.Id != AuthMethodID {
				t.Fatalf("authMethods = %+v, want the token method", init.AuthMethods)
			}
			_, err := c.client.NewSession(ctx, acp.NewSessionRequest{Cwd: w.cwd, McpServers: []acp.McpServer{}})
			if re := requestError(t, err); re.Code != -32000 {
				t.Fatalf("session/new before authenticate: code %d, want -32000 auth_required", re.Code)
			}
			_, err = c.client.Authenticate(ctx, acp.AuthenticateRequest{MethodId: tt.method, Meta: tt.meta})
			if tt.wantCode != 0 {
				if re := requestError(t, err); re.Code != tt.wantCode {
					t.Errorf("authenticate: code %d, want %d", re.Code, tt.wantCode)
				}
				if strings.Contains(err.Error(), "t0k3n") {
					t.Errorf("error reveals the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("authenticate: %v", err)
			}
			c.newSession(ctx, w.cwd)
		})
	}
}

func TestSessionModes(t *testing.T) {
	tests := []struct {
		mode      string
		wantFile  bool
		wantAsked int
	}{
		{modeApprove, true, 0},
		{modeReject, false, 0},
		{modeAsk, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			w := newWorld(t, llmtest.Script(taintThenWrite("m.txt", "z")...))
			c := w.connect(t, nil)
			c.ed.setAnswer(func(acp.RequestPermissionRequest) string { return optAllowOnce })
			ctx := context.Background()
			c.initialize(ctx)
			id := c.newSession(ctx, w.cwd, docsServer)
			if _, err := c.client.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: id, ModeId: acp.SessionModeId(tt.mode)}); err != nil {
				t.Fatalf("set_mode: %v", err)
			}
			c.prompt(ctx, id, "write")
			if _, ok := c.ed.file(filepath.Join(w.cwd, "m.txt")); ok != tt.wantFile {
				t.Errorf("file written = %v, want %v", ok, tt.wantFile)
			}
			if n := len(c.ed.asked); n != tt.wantAsked {
				t.Errorf("permission requests = %d, want %d", n, tt.wantAsked)
			}
		})
	}

	t.Run("unknown mode", func(t *testing.T) {
		w := newWorld(t, nil)
		c := w.connect(t, nil)
		ctx := context.Background()
		c.initialize(ctx)
		id := c.newSession(ctx, w.cwd)
		_, err := c.client.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: id, ModeId: "yolo"})
		if re := requestError(t, err); re.Code != -32602 {
			t.Errorf("code %d, want invalid params", re.Code)
		}
	})
}

func TestSessionErrors(t *testing.T) {
	w := newWorld(t, llmtest.Script(llmtest.Reply{Text: "other"}))
	ctx := context.Background()
	// A session of another agent, started over another protocol.
	if _, err := w.kernel.Run(ctx, &agent.RunRequest{Agent: "other", Input: llm.TextMessage(llm.RoleUser, "hi"), Origin: "http", NewSessionID: "11111111-2222-4333-8444-555555555555"}); err != nil {
		t.Fatalf("run other agent: %v", err)
	}
	c := w.connect(t, nil)
	c.initialize(ctx)
	tests := []struct {
		name string
		do   func() error
		code int
	}{
		{"load unknown", func() error {
			_, err := c.client.LoadSession(ctx, acp.LoadSessionRequest{SessionId: "nope", Cwd: w.cwd, McpServers: []acp.McpServer{}})
			return err
		}, resourceNotFound},
		{"load other agent's", func() error {
			_, err := c.client.LoadSession(ctx, acp.LoadSessionRequest{SessionId: "11111111-2222-4333-8444-555555555555", Cwd: w.cwd, McpServers: []acp.McpServer{}})
			return err
		}, -32602},
		{"relative cwd", func() error {
			_, err := c.client.NewSession(ctx, acp.NewSessionRequest{Cwd: "project", McpServers: []acp.McpServer{}})
			return err
		}, -32602},
		{"prompt unknown", func() error {
			_, err := c.client.Prompt(ctx, acp.PromptRequest{SessionId: "nope", Prompt: []acp.ContentBlock{acp.TextBlock("x")}})
			return err
		}, resourceNotFound},
		{"logout", func() error {
			_, err := c.client.Logout(ctx, acp.LogoutRequest{})
			return err
		}, -32601},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if re := requestError(t, tt.do()); re.Code != tt.code {
				t.Errorf("code %d (%s), want %d", re.Code, re.Message, tt.code)
			}
		})
	}
}

func TestListSessions(t *testing.T) {
	w := newWorld(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	ctx := context.Background()
	for i := range listPageSize + 2 {
		if _, err := w.kernel.Run(ctx, &agent.RunRequest{Agent: testAgent, Input: llm.TextMessage(llm.RoleUser, "over http"), Origin: "http"}); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if _, err := w.kernel.Run(ctx, &agent.RunRequest{Agent: "other", Input: llm.TextMessage(llm.RoleUser, "not mine"), Origin: "http"}); err != nil {
		t.Fatal(err)
	}
	c := w.connect(t, nil)
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd)
	c.prompt(ctx, id, "from the editor")

	var all []acp.SessionInfo
	var cursor *string
	for pages := 0; ; pages++ {
		resp, err := c.client.ListSessions(ctx, acp.ListSessionsRequest{Cursor: cursor, Cwd: acp.Ptr(w.cwd)})
		if err != nil {
			t.Fatalf("session/list: %v", err)
		}
		all = append(all, resp.Sessions...)
		if resp.NextCursor == nil {
			if pages != 1 {
				t.Errorf("pages = %d, want 2", pages+1)
			}
			break
		}
		cursor = resp.NextCursor
	}
	if len(all) != listPageSize+3 {
		t.Fatalf("listed %d sessions, want %d (every session of the agent, none of another)", len(all), listPageSize+3)
	}
	if all[0].SessionId != id || all[0].Cwd != w.cwd || all[0].Title == nil || *all[0].Title != "from the editor" {
		t.Errorf("newest = %+v, want the editor's session in its cwd", all[0])
	}
	if all[1].Cwd != "/workspaces/coder" {
		t.Errorf("a session started over http reports cwd %q, want the agent workspace", all[1].Cwd)
	}

	// A cwd filter drops sessions known to be elsewhere.
	other := t.TempDir()
	resp, err := c.client.ListSessions(ctx, acp.ListSessionsRequest{Cwd: &other})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range resp.Sessions {
		if s.SessionId == id {
			t.Errorf("session in %s listed for cwd %s", w.cwd, other)
		}
	}
	if _, err := c.client.ListSessions(ctx, acp.ListSessionsRequest{Cursor: acp.Ptr("garbage")}); requestError(t, err).Code != -32602 {
		t.Errorf("bad cursor accepted")
	}
}

func TestCloseSession(t *testing.T) {
	w := newWorld(t, nil)
	c := w.connect(t, nil)
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd, docsServer)
	if _, err := c.client.CloseSession(ctx, acp.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	w.mcp.mu.Lock()
	closed := w.mcp.closed
	w.mcp.mu.Unlock()
	if closed != 1 {
		t.Errorf("mcp sets closed = %d, want 1", closed)
	}
	_, err := c.client.Prompt(ctx, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("x")}})
	if requestError(t, err).Code != resourceNotFound {
		t.Errorf("prompt on a closed session: %v", err)
	}
}

func TestMCPFailureIsReported(t *testing.T) {
	w := newWorld(t, llmtest.Script(llmtest.Reply{Text: "hi"}))
	w.mcp.err = errors.New(`mcp server "docs" failed to connect (agentd keeps retrying): connection refused`)
	c := w.connect(t, nil)
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd, docsServer, acp.McpServer{Acp: &acp.McpServerAcpInline{Type: "acp", Name: "inproc", Id: "x"}})
	c.prompt(ctx, id, "hi")
	var text strings.Builder
	c.ed.mu.Lock()
	for _, n := range c.ed.updates {
		if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
			text.WriteString(m.Content.Text.Text)
		}
	}
	c.ed.mu.Unlock()
	got := text.String()
	for _, want := range []string{`"docs" failed to connect`, `"inproc" uses the ACP transport`, "hi"} {
		if !strings.Contains(got, want) {
			t.Errorf("agent text %q lacks %q", got, want)
		}
	}
	if !strings.HasSuffix(got, "\n\nhi") {
		t.Errorf("the notice should come before the reply: %q", got)
	}
}

func TestWorkspaceToolsWithoutEditorFS(t *testing.T) {
	w := newWorld(t, llmtest.Script(
		llmtest.Reply{ToolCalls: call("file_write", `{"path":"out/x.txt","content":"disk"}`)},
		llmtest.Reply{ToolCalls: call("shell_exec", `{"command":"cat out/x.txt"}`)},
		llmtest.Reply{Text: "ok"},
	))
	c := w.connect(t, nil)
	ctx := context.Background()
	// An editor with neither a file system nor terminals.
	if _, err := c.client.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	id := c.newSession(ctx, w.cwd)
	c.prompt(ctx, id, "write")
	data, err := os.ReadFile(filepath.Join(w.cwd, "out", "x.txt"))
	if err != nil || string(data) != "disk" {
		t.Fatalf("file in the session's cwd = %q, %v; want the built-in to write there", data, err)
	}
	var sawDiff, sawOutput bool
	c.ed.mu.Lock()
	for _, n := range c.ed.updates {
		if u := n.Update.ToolCallUpdate; u != nil {
			for _, ct := range u.Content {
				if ct.Diff != nil && ct.Diff.NewText == "disk" && ct.Diff.OldText == nil {
					sawDiff = true
				}
				if ct.Content != nil && ct.Content.Content.Text != nil && strings.Contains(ct.Content.Content.Text.Text, "disk") {
					sawOutput = true
				}
			}
		}
	}
	c.ed.mu.Unlock()
	if !sawDiff {
		t.Errorf("no diff (new file) was shown for the built-in file_write")
	}
	if !sawOutput {
		t.Errorf("shell_exec did not run in the session's cwd (its output lacks the file)")
	}
}

func TestEditorToolsConfinePaths(t *testing.T) {
	w := newWorld(t, nil)
	ss := &session{id: "s", cwd: w.cwd, always: map[string]bool{}, pending: map[*permission]struct{}{}}
	if err := os.Symlink("/etc", filepath.Join(w.cwd, "etc")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		ok   bool
	}{
		{"notes.txt", true},
		{"dir/../notes.txt", true},
		{filepath.Join(w.cwd, "src/main.go"), true},
		{"../outside.txt", false},
		{"/etc/passwd", false},
		{"etc/passwd", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			ep, _, err := ss.resolve(tt.path)
			if (err == nil) != tt.ok {
				t.Fatalf("resolve(%q) = %q, %v; want ok=%v", tt.path, ep, err, tt.ok)
			}
			if tt.ok && !strings.HasPrefix(ep, w.cwd+string(filepath.Separator)) {
				t.Errorf("resolve(%q) = %q, not under %s", tt.path, ep, w.cwd)
			}
		})
	}
}

// TestUntrustedUserTaintsFirstTurn: with user_trust = "untrusted" the
// editor's own prompt is untrusted data, so the first file_write of a fresh
// session already needs permission; with trusted prompts it does not.
func TestUntrustedUserTaintsFirstTurn(t *testing.T) {
	for _, untrusted := range []bool{false, true} {
		t.Run(fmt.Sprint("untrusted=", untrusted), func(t *testing.T) {
			w := newWorld(t, llmtest.Script(
				llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall(toolFileWrite, `{"path":"u.txt","content":"x"}`)}},
				llmtest.Reply{Text: "done"},
			))
			c := w.connect(t, func(o *Options) { o.UntrustedUser = untrusted })
			c.ed.setAnswer(func(acp.RequestPermissionRequest) string { return optAllowOnce })
			ctx := context.Background()
			c.initialize(ctx)
			id := c.newSession(ctx, w.cwd)
			c.prompt(ctx, id, "write u.txt")
			want := 0
			if untrusted {
				want = 1
			}
			if n := len(c.ed.asked); n != want {
				t.Errorf("permission requests = %d, want %d", n, want)
			}
			if _, ok := c.ed.file(filepath.Join(w.cwd, "u.txt")); !ok {
				t.Error("file not written after the (approved) call")
			}
		})
	}
}

func TestServeEndsWithContext(t *testing.T) {
	w := newWorld(t, llmtest.Script(llmtest.Reply{Text: "slow", Chunks: 2, Delay: time.Minute}))
	toAgentR, toAgentW := io.Pipe()
	toEditorR, toEditorW := io.Pipe()
	defer toAgentW.Close()
	defer toEditorW.Close()
	ed := newFakeEditor(w.cwd)
	client := acp.NewClientSideConnection(ed, toAgentW, toEditorR)
	client.SetLogger(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, toAgentR, toEditorW, Options{Kernel: w.kernel, Sessions: w.db, Agent: testAgent})
	}()
	if _, err := client.Initialize(context.Background(), acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
		t.Fatal(err)
	}
	resp, err := client.NewSession(context.Background(), acp.NewSessionRequest{Cwd: w.cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = client.Prompt(context.Background(), acp.PromptRequest{SessionId: resp.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	}()
	ed.waitUpdate(t, func(u acp.SessionUpdate) bool { return u.AgentMessageChunk != nil })
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}
