package agent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/llm/openai"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/tool"
)

// TestGenAISpanAttributes: the chat and invoke_agent spans follow the
// GenAI semantic conventions over a real OpenAI-compatible stream: the
// finish reasons are the provider's own words ("tool_calls", "stop"; not
// agentd's "tool_use", "end_turn"), and token usage is on the spans when
// the server reported it and absent (not 0) when it did not.
func TestGenAISpanAttributes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noUsage bool
	}{{"usage reported", false}, {"no usage reported", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewOpenAIServer(t, llmtest.Script(
				llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("echo", `{}`)}, Usage: llm.Usage{InputTokens: 40, OutputTokens: 12}, NoUsage: tc.noUsage},
				llmtest.Reply{Text: "done", Usage: llm.Usage{InputTokens: 60, OutputTokens: 3}, NoUsage: tc.noUsage},
			))
			p, err := openai.New(openai.Options{BaseURL: srv.URL, APIKey: "k"})
			if err != nil {
				t.Fatal(err)
			}
			db, err := sqlite.Open(context.Background(), t.TempDir()+"/agentd.db", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			reg := tool.NewRegistry()
			reg.Add(fn{name: "echo", call: func(context.Context, *tool.Call) (tool.Result, error) { return tool.Result{Content: "ok"}, nil }})
			k := agent.New(agent.Options{
				Agents:    agent.NewAgents([]manifest.Manifest{{Name: "assistant", Provider: "oai", Model: "m", Tools: []string{"echo"}}}, db),
				Providers: providerMap{"oai": p},
				Runner:    tool.NewRunner(reg, tool.RunnerOptions{Audit: db, Timeout: 5 * time.Second}),
				Sessions:  db,
				Tracer:    tp,
			})
			if _, err := k.Run(context.Background(), &agent.RunRequest{Agent: "assistant", Input: llm.TextMessage(llm.RoleUser, "go")}); err != nil {
				t.Fatal(err)
			}
			var chats []sdktrace.ReadOnlySpan
			var run sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				switch s.Name() {
				case "chat m":
					chats = append(chats, s)
				case "invoke_agent assistant":
					run = s
				}
			}
			if len(chats) != 2 || run == nil {
				t.Fatalf("%d chat spans and invoke_agent %v, want 2 and one", len(chats), run != nil)
			}
			for i, want := range []struct {
				finish  string
				in, out int64
			}{{"tool_calls", 40, 12}, {"stop", 60, 3}} {
				a := attrs(chats[i].Attributes())
				if got := a["gen_ai.response.finish_reasons"]; got != `["`+want.finish+`"]` {
					t.Errorf("chat %d: finish_reasons %s, want [%q] (the provider's word)", i+1, got, want.finish)
				}
				checkUsage(t, "chat", a, tc.noUsage, want.in, want.out)
			}
			checkUsage(t, "invoke_agent", attrs(run.Attributes()), tc.noUsage, 100, 15)
		})
	}
}

func checkUsage(t *testing.T, span string, a map[string]string, absent bool, in, out int64) {
	t.Helper()
	gotIn, hasIn := a["gen_ai.usage.input_tokens"]
	gotOut, hasOut := a["gen_ai.usage.output_tokens"]
	if absent {
		if hasIn || hasOut {
			t.Errorf("%s: usage %s/%s recorded though the provider reported none", span, gotIn, gotOut)
		}
		return
	}
	if gotIn != jsonNum(in) || gotOut != jsonNum(out) {
		t.Errorf("%s: usage %s/%s, want %d/%d", span, gotIn, gotOut, in, out)
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }

// attrs renders attributes as strings, slices as JSON.
func attrs(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		if kv.Value.Type() == attribute.STRINGSLICE {
			b, _ := json.Marshal(kv.Value.AsStringSlice())
			out[string(kv.Key)] = string(b)
			continue
		}
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}
