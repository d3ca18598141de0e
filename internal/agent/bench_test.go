package agent_test

import (
	"context"
	"testing"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/tool"
)

// BenchmarkTurnWithToolCall measures the loop's own cost of one turn with
// one tool round trip: an instant in-process model answers with a tool
// call, then with text; the tool answers at once. Everything measured is
// agentd (session and message persistence in a real SQLite file, the tool
// pipeline with its audit write, event emission).
func BenchmarkTurnWithToolCall(b *testing.B) {
	noop := fn{name: "noop", origin: tool.OriginBuiltin, call: func(context.Context, *tool.Call) (tool.Result, error) {
		return tool.Result{Content: "done"}, nil
	}}
	h := func(r *llmtest.Request) llmtest.Reply {
		if r.Messages[len(r.Messages)-1].Role == llm.RoleTool {
			return llmtest.Reply{Text: "finished"}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c", Name: "noop", Arguments: []byte(`{}`)}}}
	}
	e := newEnvTB(b, h, []manifest.Manifest{assistant("*")}, noop)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		res, err := e.k.Run(ctx, &agent.RunRequest{Agent: "assistant", Input: user("go"), OnEvent: func(agent.Event) {}})
		if err != nil || res.Iterations != 2 {
			b.Fatalf("run: %v %+v", err, res)
		}
	}
}
