package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/telemetry/attrset"
)

// scope is the instrumentation scope of agentd's meters and tracers.
const scope = "github.com/agentd/agentd"

// Attribute keys beyond the GenAI conventions.
const (
	keyStopReason = attribute.Key("agentd.run.stop_reason")
	keyProvider   = attribute.Key("agentd.provider") // the [providers.NAME] a model call used
	keyOrigin     = attribute.Key("agentd.run.origin")
)

// stopError labels runs that ended with an error instead of a stop reason.
const stopError = "error"

// GenAIProviders is optionally implemented by Options.Providers: the
// GenAI semantic-convention name (openai, anthropic, gcp.gemini) of the
// vendor behind a configured provider, for gen_ai.provider.name.
type GenAIProviders interface {
	GenAIProvider(name string) string
}

// observer records the kernel's metrics and spans; nil when neither is on.
type observer struct {
	tracer  trace.Tracer
	capture bool

	runs        metric.Int64Counter
	runDuration metric.Float64Histogram
	active      metric.Int64UpDownCounter
	runSets     *attrset.Cache[runKey]
	agentSets   *attrset.Cache[string]

	opDuration metric.Float64Histogram
	ttfc       metric.Float64Histogram
	tokens     metric.Int64Histogram
	modelSets  *attrset.Cache[modelKey]
}

type runKey struct{ agent, stop string }

// runUsage notes whether a model call of the run reported its token
// usage: the run's span carries the totals only then (the GenAI
// conventions leave an unknown count out; a sum of unreported counts
// is 0, not a count). startRun puts one in the run's context; each
// model call's end finds it there.
type runUsage struct{ known atomic.Bool }

type runUsageKey struct{}

type modelKey struct {
	provider, system, model, errType, tokenType string
}

func newObserver(opts Options) *observer {
	if opts.Meter == nil && opts.Tracer == nil {
		return nil
	}
	o := &observer{capture: opts.CaptureContent}
	if opts.Tracer != nil {
		o.tracer = opts.Tracer.Tracer(scope)
	}
	if opts.Meter == nil {
		return o
	}
	m := opts.Meter.Meter(scope)
	o.runs, _ = m.Int64Counter("agentd.agent.runs",
		metric.WithUnit("{run}"),
		metric.WithDescription("Agent runs (turns) finished, by agent and stop reason (error when the run failed)."))
	o.runDuration, _ = m.Float64Histogram("agentd.agent.run.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of agent runs, model calls and tool calls included."),
		metric.WithExplicitBucketBoundaries(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640))
	o.active, _ = m.Int64UpDownCounter("agentd.agent.runs.active",
		metric.WithUnit("{run}"),
		metric.WithDescription("Agent runs in progress, by agent."))
	o.runSets = attrset.NewCache(func(k runKey) attribute.Set {
		return attribute.NewSet(semconv.GenAIAgentName(k.agent), keyStopReason.String(k.stop))
	})
	o.agentSets = attrset.NewCache(func(a string) attribute.Set { return attribute.NewSet(semconv.GenAIAgentName(a)) })
	// The GenAI client metrics, with the conventions' names and buckets.
	o.opDuration, _ = m.Float64Histogram("gen_ai.client.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration."),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	o.ttfc, _ = m.Float64Histogram("gen_ai.client.operation.time_to_first_chunk",
		metric.WithUnit("s"),
		metric.WithDescription("Time from the model request to the first streamed chunk of text or thinking."),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	o.tokens, _ = m.Int64Histogram("gen_ai.client.token.usage",
		metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used."),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	o.modelSets = attrset.NewCache(func(k modelKey) attribute.Set {
		kv := []attribute.KeyValue{
			semconv.GenAIOperationNameChat,
			semconv.GenAIProviderNameKey.String(k.system),
			semconv.GenAIRequestModel(k.model),
			keyProvider.String(k.provider),
		}
		if k.errType != "" {
			kv = append(kv, semconv.ErrorTypeKey.String(k.errType))
		}
		if k.tokenType != "" {
			kv = append(kv, semconv.GenAITokenTypeKey.String(k.tokenType))
		}
		return attribute.NewSet(kv...)
	})
	return o
}

// startRun opens the run's invoke_agent span and counts it active.
func (o *observer) startRun(ctx context.Context, req *RunRequest) (context.Context, trace.Span) {
	var span trace.Span
	if o.tracer != nil {
		ctx, span = o.tracer.Start(ctx, "invoke_agent "+req.Agent, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(req.Agent), keyOrigin.String(req.Origin)))
		ctx = context.WithValue(ctx, runUsageKey{}, new(runUsage))
	}
	return ctx, span
}

// endRun closes the run's span and records its metrics. agent is "" when
// the run failed before its agent was found (its name came from a client
// and must not become a label).
func (o *observer) endRun(ctx context.Context, span trace.Span, agent string, start time.Time, res *RunResult, err error) {
	stop := stopError
	if err == nil && res != nil {
		stop = string(res.StopReason)
	}
	if span != nil {
		if res != nil {
			span.SetAttributes(semconv.GenAIConversationID(res.SessionID))
			if ru, _ := ctx.Value(runUsageKey{}).(*runUsage); ru != nil && ru.known.Load() {
				span.SetAttributes(semconv.GenAIUsageInputTokens(res.Usage.InputTokens), semconv.GenAIUsageOutputTokens(res.Usage.OutputTokens))
			}
		}
		span.SetAttributes(keyStopReason.String(stop))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
	if o.runs == nil || agent == "" {
		return
	}
	opts := o.runSets.Get(runKey{agent, stop})
	o.runs.Add(ctx, 1, opts.Add...)
	o.runDuration.Record(ctx, time.Since(start).Seconds(), opts.Record...)
}

// activeRun counts a run of agent in progress until the returned func.
func (o *observer) activeRun(ctx context.Context, agent string) func() {
	if o.active == nil {
		return func() {}
	}
	set := o.agentSets.Get(agent).Add
	o.active.Add(ctx, 1, set...)
	return func() { o.active.Add(ctx, -1, set...) }
}

// modelCall is one model call being observed.
type modelCall struct {
	o     *observer
	span  trace.Span
	start time.Time
	first time.Time
	key   modelKey
}

// startModel opens the call's chat span (GenAI conventions).
func (o *observer) startModel(ctx context.Context, provider, system string, req *llm.Request) (context.Context, *modelCall) {
	mc := &modelCall{o: o, start: time.Now(), key: modelKey{provider: provider, system: system, model: req.Model}}
	if o.tracer != nil {
		attrs := []attribute.KeyValue{
			semconv.GenAIOperationNameChat,
			semconv.GenAIProviderNameKey.String(system),
			semconv.GenAIRequestModel(req.Model),
			keyProvider.String(provider),
		}
		if req.MaxTokens > 0 {
			attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
		}
		if req.Temperature != nil {
			attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
		}
		if o.capture {
			if b, err := json.Marshal(req.Messages); err == nil {
				attrs = append(attrs, semconv.GenAIInputMessagesKey.String(string(b)))
			}
			if req.System != "" {
				attrs = append(attrs, semconv.GenAISystemInstructionsKey.String(req.System))
			}
		}
		ctx, mc.span = o.tracer.Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	return ctx, mc
}

// delta notes the first streamed chunk.
func (mc *modelCall) delta() {
	if mc.first.IsZero() {
		mc.first = time.Now()
	}
}

// end closes the span and records the call's metrics; ctx is the one
// startModel returned.
func (mc *modelCall) end(ctx context.Context, resp *llm.Response, err error) {
	o := mc.o
	errType := ""
	if err != nil {
		errType = modelErrorType(ctx, err)
	}
	if mc.span != nil {
		if resp != nil {
			// Per the GenAI conventions: token counts only when the
			// provider reported them, and the provider's own finish
			// reason, not agentd's normalised stop reason.
			if resp.UsageKnown {
				mc.span.SetAttributes(
					semconv.GenAIUsageInputTokens(resp.Usage.InputTokens),
					semconv.GenAIUsageOutputTokens(resp.Usage.OutputTokens))
				if ru, _ := ctx.Value(runUsageKey{}).(*runUsage); ru != nil {
					ru.known.Store(true)
				}
			}
			if resp.FinishReason != "" {
				mc.span.SetAttributes(semconv.GenAIResponseFinishReasons(resp.FinishReason))
			}
			if o.capture {
				if b, jerr := json.Marshal([]llm.Message{resp.Message}); jerr == nil {
					mc.span.SetAttributes(semconv.GenAIOutputMessagesKey.String(string(b)))
				}
			}
		}
		if !mc.first.IsZero() {
			mc.span.SetAttributes(semconv.GenAIResponseTimeToFirstChunk(mc.first.Sub(mc.start).Seconds()))
		}
		if err != nil {
			mc.span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			mc.span.SetStatus(codes.Error, err.Error())
		}
		mc.span.End()
	}
	if o.opDuration == nil {
		return
	}
	k := mc.key
	k.errType = errType
	o.opDuration.Record(ctx, time.Since(mc.start).Seconds(), o.modelSets.Get(k).Record...)
	if err != nil {
		return
	}
	if !mc.first.IsZero() {
		o.ttfc.Record(ctx, mc.first.Sub(mc.start).Seconds(), o.modelSets.Get(mc.key).Record...)
	}
	if resp != nil && resp.UsageKnown {
		k = mc.key
		k.tokenType = "input"
		o.tokens.Record(ctx, int64(resp.Usage.InputTokens), o.modelSets.Get(k).Record...)
		k.tokenType = "output"
		o.tokens.Record(ctx, int64(resp.Usage.OutputTokens), o.modelSets.Get(k).Record...)
	}
}

// modelErrorType is error.type for a failed model call: a bounded set,
// never the error's text.
func modelErrorType(ctx context.Context, err error) string {
	var se *llm.StatusError
	switch {
	case ctx.Err() != nil:
		return "cancelled"
	case errors.Is(err, llm.ErrAuth):
		return "auth"
	case errors.As(err, &se) && se.Status != 0:
		return statusClass(se.Status)
	}
	return "_OTHER"
}

func statusClass(status int) string {
	switch {
	case status == 429:
		return "429"
	case status >= 500:
		return "5xx"
	case status >= 400:
		return "4xx"
	}
	return "_OTHER"
}
