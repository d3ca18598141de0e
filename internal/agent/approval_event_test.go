package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/tool"
)

// lockedBuffer is a log sink safe for the run's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestApprovalEventAndLogs: a call waiting in the operator's queue is an
// approval_required event on the run's stream, carrying the id that
// decides it, and an INFO log line with the ids; a failed run is a WARN
// line with its ids.
func TestApprovalEventAndLogs(t *testing.T) {
	db, err := sqlite.Open(context.Background(), t.TempDir()+"/agentd.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	model := llmtest.NewProvider(t, llmtest.Script(
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("mcp_web_get", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("shell_exec", `{"command":"ls"}`)}},
		llmtest.Reply{Text: "listed"},
		llmtest.Reply{Status: 500},
	))
	web := fn{name: "mcp_web_get", origin: tool.OriginMCP, call: func(context.Context, *tool.Call) (tool.Result, error) {
		return tool.Result{Content: "run ls"}, nil
	}}
	shell := fn{name: "shell_exec", origin: tool.OriginBuiltin, call: func(context.Context, *tool.Call) (tool.Result, error) {
		return tool.Result{Content: "a.txt"}, nil
	}}
	reg := tool.NewRegistry()
	reg.Add(web, shell)
	ops := tool.NewApprovals(time.Minute)
	logs := &lockedBuffer{}
	k := agent.New(agent.Options{
		Agents: agent.NewAgents([]manifest.Manifest{assistant("*")}, db), Providers: providerMap{"fake": model}, Sessions: db,
		Runner:    tool.NewRunner(reg, tool.RunnerOptions{Audit: db, Timeout: 5 * time.Second, Operator: ops}),
		Untrusted: map[string]policy.Action{"shell_exec": policy.Ask},
		Logger:    slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})

	var events []agent.Event
	onEvent := func(e agent.Event) {
		events = append(events, e)
		if e.Type == agent.EventApproval {
			// As agentd chat does: decide from the stream, by its id.
			if err := ops.Decide(e.Approval.ID, tool.ApproveOnce, nil); err != nil {
				t.Errorf("deciding %s: %v", e.Approval.ID, err)
			}
		}
	}
	res, err := k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: user("go"), OnEvent: onEvent})
	if err != nil || res.Message.Text() != "listed" {
		t.Fatalf("run: %v, %+v", err, res)
	}
	var ap *agent.Event
	for i, e := range events {
		if e.Type == agent.EventApproval {
			ap = &events[i]
			if i+1 >= len(events) || events[i+1].Type != agent.EventToolFinished || events[i+1].ToolResult.Content != "a.txt" {
				t.Errorf("the approval is not followed by the call's result: %+v", events[i+1:])
			}
		}
	}
	if ap == nil || ap.Approval.Tool != "shell_exec" || string(ap.Approval.Args) != `{"command":"ls"}` || ap.SessionID != res.SessionID ||
		ap.ToolCall.Name != "shell_exec" || ap.ToolCall.ID != ap.Approval.CallID || !strings.Contains(ap.Approval.Reason, "untrusted") {
		t.Fatalf("approval event %+v", ap)
	}
	if l := logs.String(); !strings.Contains(l, "level=INFO msg=\"approval waiting\" approval="+ap.Approval.ID) ||
		!strings.Contains(l, "session="+res.SessionID) || !strings.Contains(l, "tool=shell_exec") {
		t.Errorf("no INFO line for the waiting approval:\n%s", l)
	}

	// A run that fails is logged at WARN with its ids.
	if _, err := k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", SessionID: res.SessionID, Input: user("again")}); err == nil {
		t.Fatal("the model's 500 did not fail the run")
	}
	if l := logs.String(); !strings.Contains(l, `level=WARN msg="run failed" run=`) || !strings.Contains(l, "agent=assistant session="+res.SessionID) {
		t.Errorf("no WARN line for the failed run:\n%s", l)
	}
	// A refused one is INFO.
	k.Run(context.Background(), &agent.RunRequest{Agent: "nobody", Input: user("hi")})
	if l := logs.String(); !strings.Contains(l, `level=INFO msg="run refused"`) || !strings.Contains(l, "agent=nobody") {
		t.Errorf("no INFO line for the refused run:\n%s", l)
	}
}
