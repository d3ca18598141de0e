package tool

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/telemetry/attrset"
)

// scope is the instrumentation scope of agentd's meters and tracers
// (telemetry.Scope; the core does not import the SDK-holding package).
const scope = "github.com/agentd/agentd"

// Attribute keys of tool calls beyond the GenAI conventions.
const (
	keyDecision = attribute.Key("agentd.tool.decision") // allow, deny, approved, rejected
	keyOutcome  = attribute.Key("agentd.tool.outcome")  // ok, error, denied, cancelled
)

// unknownTool labels calls of tools that do not exist: the name is the
// model's invention, and labels must come from a bounded set.
const unknownTool = "_unknown"

// observer records the runner's metrics and spans. It exists only when
// one of them is on, so a runner without telemetry pays one nil check.
type observer struct {
	tracer   trace.Tracer // nil = no spans
	calls    metric.Int64Counter
	duration metric.Float64Histogram
	sets     *attrset.Cache[callKey]
	capture  bool
}

type callKey struct{ tool, decision, outcome string }

func newObserver(opts RunnerOptions) *observer {
	if opts.Meter == nil && opts.Tracer == nil {
		return nil
	}
	o := &observer{capture: opts.CaptureContent}
	if opts.Tracer != nil {
		o.tracer = opts.Tracer.Tracer(scope)
	}
	if opts.Meter != nil {
		m := opts.Meter.Meter(scope)
		o.calls, _ = m.Int64Counter("agentd.tool.calls",
			metric.WithUnit("{call}"),
			metric.WithDescription("Tool calls through the runner, by tool, policy decision and outcome."))
		o.duration, _ = m.Float64Histogram("agentd.tool.call.duration",
			metric.WithUnit("s"),
			metric.WithDescription("Duration of tool calls through the runner, approval included."),
			metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300))
		o.sets = attrset.NewCache(func(k callKey) attribute.Set {
			return attribute.NewSet(semconv.GenAIToolName(k.tool), keyDecision.String(k.decision), keyOutcome.String(k.outcome))
		})
	}
	return o
}

// start opens the call's execute_tool span.
func (o *observer) start(ctx context.Context, s *Scope, call llm.ToolCall) (context.Context, trace.Span) {
	if o.tracer == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(call.Name),
		semconv.GenAIToolCallID(call.ID),
		semconv.GenAIAgentName(s.p.Agent),
	}
	if o.capture {
		attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(string(call.Arguments)))
	}
	return o.tracer.Start(ctx, "execute_tool "+call.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// end closes the span with the decision and outcome and records the
// call's metrics.
func (o *observer) end(ctx context.Context, span trace.Span, call llm.ToolCall, out Outcome) {
	outcome := out.outcome()
	if span != nil {
		span.SetAttributes(keyDecision.String(out.Decision), keyOutcome.String(outcome))
		if outcome == "error" {
			span.SetStatus(codes.Error, firstLine(out.Result.Content, 200))
		}
		span.End()
	}
	if o.calls == nil {
		return
	}
	name := call.Name
	if out.unknown {
		name = unknownTool
	}
	opts := o.sets.Get(callKey{name, out.Decision, outcome})
	o.calls.Add(ctx, 1, opts.Add...)
	o.duration.Record(ctx, out.Duration.Seconds(), opts.Record...)
}
