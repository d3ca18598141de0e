package agent_test

import (
	"context"
	"testing"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/tool"
)

// TestRunsAreListed: the kernel lists a run while it waits inside a tool,
// then as finished with its session, stop reason and tool count; a run
// that fails at the model lists its error, which the audit log never sees.
func TestRunsAreListed(t *testing.T) {
	inTool, release := make(chan struct{}), make(chan struct{})
	slow := fn{name: "slow", origin: tool.OriginBuiltin, call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
		close(inTool)
		<-release
		return tool.Result{Content: "done"}, nil
	}}
	e := newEnv(t, func(r *llmtest.Request) llmtest.Reply {
		switch {
		case r.LastUserText() == "fail":
			return llmtest.Reply{Status: 400, ErrorMessage: "bad model"}
		case r.Messages[len(r.Messages)-1].Role == llm.RoleTool:
			return llmtest.Reply{Text: "finished", Usage: llm.Usage{InputTokens: 70, OutputTokens: 5}}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("slow", `{}`)}, Usage: llm.Usage{InputTokens: 50, OutputTokens: 15}}
	}, []manifest.Manifest{assistant("slow")}, slow)

	done := make(chan *agent.RunResult)
	go func() {
		res, _ := e.k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: user("go"), Origin: "http", Principal: principal.Local})
		done <- res
	}()
	<-inTool
	runs := e.k.Runs()
	if len(runs) != 1 || !runs[0].Running || runs[0].Agent != "assistant" || runs[0].Origin != "http" || runs[0].Principal != "local" || runs[0].SessionID == "" || runs[0].ToolCalls != 1 {
		t.Fatalf("while in the tool: %+v", runs)
	}
	close(release)
	res := <-done
	runs = e.k.Runs()
	if len(runs) != 1 || runs[0].Running || runs[0].Ended == nil || runs[0].StopReason != agent.StopEndTurn || runs[0].SessionID != res.SessionID || runs[0].Iterations != 2 ||
		runs[0].InputTokens != 120 || runs[0].OutputTokens != 20 {
		t.Fatalf("after the run: %+v", runs)
	}

	if _, err := e.k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: user("fail")}); err == nil {
		t.Fatal("the failing run succeeded")
	}
	runs = e.k.Runs()
	if len(runs) != 2 || runs[0].Error == "" || runs[0].Running || runs[1].SessionID != res.SessionID {
		t.Fatalf("after a failed run (newest first): %+v", runs)
	}
}

// TestOnRunTellsStartAndEnd: a watcher hears of each run twice, running
// then ended (with its error when it failed), and may read Runs from the
// callback (no lock is held); once cancelled it hears nothing more.
func TestOnRunTellsStartAndEnd(t *testing.T) {
	e := newEnv(t, func(r *llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "fail" {
			return llmtest.Reply{Status: 400, ErrorMessage: "bad model"}
		}
		return llmtest.Reply{Text: "hi"}
	}, []manifest.Manifest{assistant()})
	var heard []agent.RunInfo
	listed := 0
	stop := e.k.OnRun(func(ri agent.RunInfo) {
		heard = append(heard, ri)
		listed = len(e.k.Runs())
	})
	if _, err := e.k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: user("hello"), Principal: principal.Local}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: user("fail")}); err == nil {
		t.Fatal("the failing run succeeded")
	}
	stop()
	if _, err := e.k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: user("unheard")}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		running, failed bool
	}{{true, false}, {false, false}, {true, false}, {false, true}} {
		if i >= len(heard) {
			t.Fatalf("heard %d notices, want 4: %+v", len(heard), heard)
		}
		ri := heard[i]
		if ri.Running != want.running || (ri.Error != "") != want.failed || ri.ID != heard[i/2*2].ID {
			t.Errorf("notice %d: %+v, want running %v failed %v", i, ri, want.running, want.failed)
		}
	}
	if len(heard) != 4 || heard[0].Principal != "local" || listed != 2 {
		t.Errorf("heard %d notices (want 4), first principal %q, Runs listed %d from the last", len(heard), heard[0].Principal, listed)
	}
}
