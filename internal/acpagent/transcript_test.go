package acpagent

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// The transcript tests drive the agent with the SDK's client side over
// pipes and compare every JSON-RPC message, both ways, with a golden file.

// docsServer is an editor MCP server; the fake client manager gives it
// one upstream tool, mcp_docs_lookup.
var docsServer = acp.McpServer{Http: &acp.McpServerHttpInline{Type: "http", Name: "docs", Url: "http://127.0.0.1:9/mcp", Headers: []acp.HttpHeader{}}}

func TestTranscriptTurn(t *testing.T) {
	w := newWorld(t, llmtest.Script(
		llmtest.Reply{Thinking: "The user says hello.", Text: "Hello! What shall we build?", Chunks: 2},
	))
	c := w.connect(t, nil)
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd, acp.McpServer{Stdio: &acp.McpServerStdio{
		Name: "docs server", Command: "docs-mcp", Args: []string{"--stdio"},
		Env: []acp.EnvVariable{{Name: "DOCS_TOKEN", Value: "s3cret"}},
	}})
	if got := c.prompt(ctx, id, "hello"); got.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stop reason = %q, want end_turn", got.StopReason)
	}
	if _, err := c.client.ListSessions(ctx, acp.ListSessionsRequest{}); err != nil {
		t.Fatalf("session/list: %v", err)
	}
	c.stop()
	checkGolden(t, "turn", c.tr.normalized(t, w.cwd))

	if len(w.mcp.got) != 1 || len(w.mcp.got[0]) != 1 {
		t.Fatalf("editor mcp servers = %+v, want one", w.mcp.got)
	}
	es := w.mcp.got[0][0]
	if es.Config.Name != "docs_server" || es.Config.Transport.Dir != w.cwd || es.Values["DOCS_TOKEN"] != "s3cret" {
		t.Errorf("editor server = %+v", es)
	}
	if w.mcp.closed != 1 {
		t.Errorf("mcp sets closed = %d, want 1 after the editor left", w.mcp.closed)
	}
}

func TestTranscriptPermissions(t *testing.T) {
	w := newWorld(t, llmtest.Script(
		// Turn 1: an upstream result taints the run, so file_write asks.
		llmtest.Reply{ToolCalls: call("mcp_docs_lookup", `{"q":"notes"}`)},
		llmtest.Reply{ToolCalls: call("file_write", `{"path":"notes.txt","content":"new notes\n"}`)},
		llmtest.Reply{Text: "Updated notes.txt."},
		// Turn 2: "always" was chosen: no question.
		llmtest.Reply{ToolCalls: call("file_write", `{"path":"notes.txt","content":"more\n","append":true}`)},
		llmtest.Reply{Text: "Appended."},
		// Turn 3: shell_exec asks and is rejected.
		llmtest.Reply{ToolCalls: call("shell_exec", `{"command":"rm -rf build"}`)},
		llmtest.Reply{Text: "You rejected the command."},
	))
	c := w.connect(t, nil)
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd, docsServer)
	notes := filepath.Join(w.cwd, "notes.txt")
	c.ed.setFile(notes, "old notes\n")

	c.ed.setAnswer(func(acp.RequestPermissionRequest) string { return optAllowAlways })
	c.prompt(ctx, id, "update the notes")
	c.prompt(ctx, id, "add a line")
	c.ed.setAnswer(func(acp.RequestPermissionRequest) string { return optReject })
	c.prompt(ctx, id, "clean the build")
	c.stop()
	checkGolden(t, "permissions", c.tr.normalized(t, w.cwd))

	if got, _ := c.ed.file(notes); got != "new notes\nmore\n" {
		t.Errorf("editor buffer = %q, want the write then the append", got)
	}
	if n := len(c.ed.asked); n != 2 {
		t.Errorf("permission requests = %d, want 2 (file_write once, shell_exec once)", n)
	}
}

func TestTranscriptCancel(t *testing.T) {
	w := newWorld(t, llmtest.Script(
		llmtest.Reply{Text: "one two three", Chunks: 3, Delay: time.Minute},
		llmtest.Reply{Text: "Still here."},
	))
	c := w.connect(t, nil)
	ctx := context.Background()
	c.initialize(ctx)
	id := c.newSession(ctx, w.cwd)

	type answer struct {
		resp acp.PromptResponse
		err  error
		at   time.Time
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := c.client.Prompt(ctx, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock("count")}})
		done <- answer{resp, err, time.Now()}
	}()
	c.ed.waitUpdate(t, func(u acp.SessionUpdate) bool { return u.AgentMessageChunk != nil })
	sent := time.Now()
	if err := c.client.Cancel(ctx, acp.CancelNotification{SessionId: id}); err != nil {
		t.Fatalf("session/cancel: %v", err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("prompt: %v", a.err)
	}
	if a.resp.StopReason != acp.StopReasonCancelled {
		t.Errorf("stop reason = %q, want cancelled", a.resp.StopReason)
	}
	if d := a.at.Sub(sent); d > 200*time.Millisecond {
		t.Errorf("cancelled turn answered after %v, want within 200ms", d)
	}
	if got := c.prompt(ctx, id, "still there?"); got.StopReason != acp.StopReasonEndTurn {
		t.Errorf("turn after cancel: stop reason = %q", got.StopReason)
	}
	c.stop()
	checkGolden(t, "cancel", c.tr.normalized(t, w.cwd))
}

func TestTranscriptLoad(t *testing.T) {
	w := newWorld(t, llmtest.Script(
		llmtest.Reply{Thinking: "Look it up.", ToolCalls: call("mcp_docs_lookup", `{"q":"notes"}`)},
		llmtest.Reply{Text: "Notes live in notes.txt."},
		llmtest.Reply{Text: "As I said: notes.txt."},
	))
	ctx := context.Background()
	first := w.connect(t, nil)
	first.initialize(ctx)
	id := first.newSession(ctx, w.cwd, docsServer)
	first.prompt(ctx, id, "where are the notes?")
	first.stop()

	// A new connection (the editor restarted) opens the stored session.
	c := w.connect(t, nil)
	c.initialize(ctx)
	if _, err := c.client.LoadSession(ctx, acp.LoadSessionRequest{SessionId: id, Cwd: w.cwd, McpServers: []acp.McpServer{docsServer}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	c.prompt(ctx, id, "where again?")
	c.stop()
	checkGolden(t, "load", c.tr.normalized(t, w.cwd))

	last := w.model.Last()
	if n := len(last.Messages); n != 5 {
		t.Errorf("model saw %d messages on the loaded session's turn, want 5 (the whole history)", n)
	}
}
