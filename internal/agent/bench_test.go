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

// newTurnBench returns an environment whose instant in-process model
// answers a user message with a call of the tool "noop", and the tool's
// result with text; the tool answers at once. Everything a turn then costs
// is agentd's own (session and message persistence in a real SQLite file,
// the tool pipeline with its audit write, event emission).
func newTurnBench(b *testing.B) *env {
	noop := fn{name: "noop", origin: tool.OriginBuiltin, call: func(context.Context, *tool.Call) (tool.Result, error) {
		return tool.Result{Content: "done"}, nil
	}}
	h := func(r *llmtest.Request) llmtest.Reply {
		if r.Messages[len(r.Messages)-1].Role == llm.RoleTool {
			return llmtest.Reply{Text: "finished"}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c", Name: "noop", Arguments: []byte(`{}`)}}}
	}
	return newEnvTB(b, h, []manifest.Manifest{assistant("*")}, noop)
}

// turn runs one new-session turn and fails b unless it took the expected
// two model calls.
func turn(b *testing.B, e *env) {
	res, err := e.k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: user("go"), OnEvent: func(agent.Event) {}})
	if err != nil || res.Iterations != 2 {
		b.Errorf("run: %v %+v", err, res)
	}
}

// BenchmarkTurnWithToolCall measures the latency of one turn with one tool
// round trip on an otherwise idle daemon.
func BenchmarkTurnWithToolCall(b *testing.B) {
	e := newTurnBench(b)
	for b.Loop() {
		turn(b, e)
	}
}

// BenchmarkTurnWithToolCallParallel measures throughput: 16 turns per
// GOMAXPROCS in flight at once (each in its own session), as when an edge
// serves many clients. Their writes compete for the one SQLite writer.
func BenchmarkTurnWithToolCallParallel(b *testing.B) {
	e := newTurnBench(b)
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			turn(b, e)
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}
