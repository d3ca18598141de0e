package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// TestPrincipalOnRuns: a run is refused to a principal that may not run
// the agent; a run's session and audit records carry its principal; and
// another principal cannot continue (or even see) that session, while an
// admin can.
func TestPrincipalOnRuns(t *testing.T) {
	listFiles := fn{name: "file_list", origin: tool.OriginBuiltin, call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
		return tool.Result{Content: "a.txt"}, nil
	}}
	e := newEnv(t, llmtest.Script(
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_list", `{"path":"."}`)}},
		llmtest.Reply{Text: "two files"},
		llmtest.Reply{Text: "admin continues"},
	), []manifest.Manifest{assistant("file_*")}, listFiles)
	ctx := context.Background()
	bot := &principal.Principal{Name: "ci-bot", Agents: []string{"assistant"}}
	partner := &principal.Principal{Name: "partner", Agents: []string{"reviewer"}}
	other := &principal.Principal{Name: "other", Agents: []string{"*"}}
	admin := &principal.Principal{Name: "ops", Admin: true, Agents: []string{"*"}}

	if _, err := e.k.Run(ctx, &agent.RunRequest{Agent: "assistant", Input: user("hi"), Principal: partner}); !errors.Is(err, agent.ErrForbidden) {
		t.Fatalf("partner ran assistant: %v", err)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Fatalf("a refused run reached the model %d times", n)
	}

	res, err := e.k.Run(ctx, &agent.RunRequest{Agent: "assistant", Input: user("list"), Principal: bot})
	if err != nil || res.Message.Text() != "two files" {
		t.Fatalf("ci-bot run: %+v, %v", res, err)
	}
	sess, _, err := e.k.Session(ctx, res.SessionID)
	if err != nil || sess.Principal != "ci-bot" {
		t.Fatalf("session principal %q, %v", sess.Principal, err)
	}
	audit, _ := e.db.QueryAudit(ctx, store.AuditFilter{SessionID: res.SessionID})
	if len(audit) != 1 || audit[0].Principal != "ci-bot" {
		t.Fatalf("audit %+v", audit)
	}

	_, err = e.k.Run(ctx, &agent.RunRequest{Agent: "assistant", SessionID: res.SessionID, Input: user("mine now"), Principal: other})
	if !errors.Is(err, agent.ErrSessionNotFound) {
		t.Fatalf("another principal continued ci-bot's session: %v", err)
	}
	res2, err := e.k.Run(ctx, &agent.RunRequest{Agent: "assistant", SessionID: res.SessionID, Input: user("go on"), Principal: admin})
	if err != nil || res2.Message.Text() != "admin continues" {
		t.Fatalf("admin continuing: %+v, %v", res2, err)
	}
}
