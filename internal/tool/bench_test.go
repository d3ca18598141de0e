package tool

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentd/agentd/internal/policy"
)

// BenchmarkScopeCall measures one call through the runner pipeline of a
// tool that does nothing, so what is left is the pipeline: with
// telemetry off (nil providers, the default cost), with metrics on (the
// SDK meter with a reader, as /metrics has), and with tracing on and
// every span sampled (spans go to an in-memory exporter).
func BenchmarkScopeCall(b *testing.B) {
	cases := []struct {
		name string
		opts func() RunnerOptions
	}{
		{"off", func() RunnerOptions { return RunnerOptions{} }},
		{"metrics", func() RunnerOptions {
			return RunnerOptions{Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))}
		}},
		{"traces", func() RunnerOptions {
			sp := sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())
			return RunnerOptions{Tracer: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp))}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			reg := NewRegistry()
			reg.Add(newTool("echo", OriginBuiltin))
			r := NewRunner(reg, c.opts())
			ctx := context.Background()
			calls := []string{`{"n":1}`, `{"n":2}`} // alternate: the loop guard refuses repeats
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s := r.Scope(ScopeParams{Agent: "a", SessionID: "s", Rules: &policy.Rules{Capabilities: []string{"*"}}})
				out := s.Call(ctx, call("echo", calls[i%2]), nil)
				if out.Result.IsError {
					b.Fatal(out.Result.Content)
				}
				i++
			}
		})
	}
}
