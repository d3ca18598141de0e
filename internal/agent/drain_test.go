package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/tool"
)

// TestDrainAndFailRuns checks the kernel's side of a graceful stop: a
// run ended by FailRuns(ErrShuttingDown) returns that error (its edge
// reports it failed, not canceled), its history stays valid for the next
// turn, and once draining, new runs are refused while delegated ones are
// not counted as new.
func TestDrainAndFailRuns(t *testing.T) {
	started := make(chan struct{})
	slow := fn{name: "slow", origin: tool.OriginBuiltin, call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
		close(started)
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}}
	e := newEnv(t, llmtest.Script(
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("slow", `{}`)}},
		llmtest.Reply{Text: "after the restart"},
	), []manifest.Manifest{assistant("*")}, slow)
	type out struct {
		res *agent.RunResult
		err error
	}
	done := make(chan out)
	events := &collect{}
	go func() {
		r, err := e.k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: user("go"), OnEvent: events.add})
		done <- out{r, err}
	}()
	<-started
	if n := e.k.Active(); n != 1 {
		t.Fatalf("Active = %d with one run under way", n)
	}
	e.k.Drain()
	if n := e.k.FailRuns(agent.ErrShuttingDown); n != 1 {
		t.Errorf("FailRuns ended %d runs, want 1", n)
	}
	o := <-done
	if !errors.Is(o.err, agent.ErrShuttingDown) || o.res.StopReason == agent.StopCancelled {
		t.Fatalf("a run failed by a stopping kernel: %+v, %v; want ErrShuttingDown, not cancelled", o.res, o.err)
	}
	if types := events.types(); types[len(types)-1] != string(agent.EventError) {
		t.Errorf("events %v, want the error last", types)
	}
	if n := e.k.Active(); n != 0 {
		t.Errorf("Active = %d after the run ended", n)
	}

	// Draining: a new run is refused before it touches anything.
	_, err := e.k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", SessionID: o.res.SessionID, Input: user("again")})
	if !errors.Is(err, agent.ErrShuttingDown) {
		t.Fatalf("a new run while draining: %v, want ErrShuttingDown", err)
	}
	if len(e.model.Requests()) != 1 {
		t.Errorf("the refused run called the model")
	}

	// The same session on a kernel that is not stopping (the next
	// replica, or this one restarted): the history is valid.
	e2 := newEnv(t, llmtest.Script(llmtest.Reply{Text: "after the restart"}), []manifest.Manifest{assistant("*")})
	e2.k = agent.New(agent.Options{Agents: agent.NewAgents([]manifest.Manifest{assistant("*")}, e.db),
		Providers: providerMap{"fake": e2.model}, Runner: tool.NewRunner(e2.reg, tool.RunnerOptions{}), Sessions: e.db})
	res, _ := run(t, e2, agent.RunRequest{SessionID: o.res.SessionID, Input: user("again")})
	if res.Message.Text() != "after the restart" {
		t.Fatalf("next turn: %q", res.Message.Text())
	}
	msgs := e2.model.Requests()[0].Messages
	if msgs[2].Role != llm.RoleTool || len(msgs[2].ToolResults) != 1 {
		t.Fatalf("history after the stop: %+v", msgs)
	}
}
