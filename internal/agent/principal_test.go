package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// TestAgentSendKeepsThePrincipal: a run an agent starts with agent_send is
// the principal's too: it is stored under its name, and an agent outside
// its rights is refused, so delegation does not widen what it may run.
func TestAgentSendKeepsThePrincipal(t *testing.T) {
	e := newEnv(t, func(r *llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == llm.RoleTool:
			return llmtest.Reply{Text: "delegated: " + last.ToolResults[0].Content}
		case strings.Contains(r.System, "I delegate"):
			target := strings.TrimPrefix(last.Text(), "to ")
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("agent_send", fmt.Sprintf(`{"agent":%q,"message":"hi"}`, target))}}
		}
		return llmtest.Reply{Text: "helper here"}
	}, []manifest.Manifest{
		{Name: "boss", Provider: "fake", Model: "m", SystemPrompt: "I delegate", Tools: []string{"agent_*"}},
		{Name: "helper", Provider: "fake", Model: "m"},
		{Name: "secret", Provider: "fake", Model: "m"},
	})
	ctx := context.Background()
	bot := &principal.Principal{Name: "ci-bot", Agents: []string{"boss", "helper"}}
	res, err := e.k.Run(ctx, &agent.RunRequest{Agent: "boss", Input: user("to helper"), Principal: bot})
	if err != nil || !strings.Contains(res.Message.Text(), "helper here") {
		t.Fatalf("delegation within rights: %v, %v", res, err)
	}
	sessions, _ := e.db.ListSessions(ctx, store.SessionFilter{Agent: "helper"})
	if len(sessions) != 1 || sessions[0].Principal != "ci-bot" {
		t.Fatalf("the delegated session: %+v, want one of ci-bot", sessions)
	}
	res, err = e.k.Run(ctx, &agent.RunRequest{Agent: "boss", Input: user("to secret"), Principal: bot})
	if err != nil || !strings.Contains(res.Message.Text(), "may not run agent \"secret\"") {
		t.Fatalf("delegation outside rights: %v, %v", res.Message.Text(), err)
	}
	if s, _ := e.db.ListSessions(ctx, store.SessionFilter{Agent: "secret"}); len(s) != 0 {
		t.Fatalf("secret ran for ci-bot: %+v", s)
	}
}
