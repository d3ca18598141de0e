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
