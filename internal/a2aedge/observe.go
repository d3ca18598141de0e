package a2aedge

import (
	"context"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/telemetry/attrset"
)

// keyTaskState is an A2A task state (completed, failed, input-required, ...).
const keyTaskState = attribute.Key("a2a.task.state")

// taskMetrics counts tasks entering each state; nil when metrics are off.
type taskMetrics struct {
	tasks metric.Int64Counter
	sets  *attrset.Cache[[2]string]
}

func newTaskMetrics(mp metric.MeterProvider) *taskMetrics {
	if mp == nil {
		return nil
	}
	tm := &taskMetrics{}
	tm.tasks, _ = mp.Meter(telemetry.Scope).Int64Counter("agentd.a2a.tasks",
		metric.WithUnit("{task}"),
		metric.WithDescription("A2A tasks entering a state (submitted, working, input-required, completed, failed, canceled, ...), by agent."))
	tm.sets = attrset.NewCache(func(k [2]string) attribute.Set {
		return attribute.NewSet(semconv.GenAIAgentName(k[0]), keyTaskState.String(k[1]))
	})
	return tm
}

// entered counts a task of agent entering state.
func (tm *taskMetrics) entered(ctx context.Context, agent string, state a2a.TaskState) {
	if tm == nil || state == "" {
		return
	}
	tm.tasks.Add(ctx, 1, tm.sets.Get([2]string{agent, stateLabel(state)}).Add...)
}

// stateLabel is a task state as the A2A 0.3 wire spells it
// (TASK_STATE_INPUT_REQUIRED → input-required), the form dashboards show.
func stateLabel(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// streamMetrics counts the A2A streams open; nil when metrics are off.
type streamMetrics struct {
	open metric.Int64UpDownCounter
	sets *attrset.Cache[string]
}

func newStreamMetrics(mp metric.MeterProvider) *streamMetrics {
	if mp == nil {
		return nil
	}
	sm := &streamMetrics{}
	sm.open, _ = mp.Meter(telemetry.Scope).Int64UpDownCounter("agentd.a2a.streams.active",
		metric.WithUnit("{stream}"),
		metric.WithDescription("A2A streaming requests (message/stream, resubscribe) open, by agent."))
	sm.sets = attrset.NewCache(func(a string) attribute.Set { return attribute.NewSet(semconv.GenAIAgentName(a)) })
	return sm
}

// opened counts a stream of agent open until the returned func.
func (sm *streamMetrics) opened(ctx context.Context, agent string) func() {
	if sm == nil {
		return func() {}
	}
	set := sm.sets.Get(agent).Add
	sm.open.Add(ctx, 1, set...)
	return func() { sm.open.Add(ctx, -1, set...) }
}

// streamingMethod reports whether a JSON-RPC method (1.0, 0.3 or the
// seed's) answers with a stream.
func streamingMethod(m string) bool {
	switch m {
	case "SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe", "tasks/sendSubscribe":
		return true
	}
	return false
}

// streamingPath reports whether an HTTP+JSON path answers with a stream.
func streamingPath(p string) bool {
	return strings.HasSuffix(p, ":stream") || strings.HasSuffix(p, ":subscribe")
}

// keyRemoteAgent names the external A2A agent a message went to: its
// configured name, or "_url" for one addressed by URL (a URL is no
// bounded value, and may carry more than a span should).
const keyRemoteAgent = attribute.Key("agentd.a2a.agent")

// startSend starts the client span of a message sent to target; nil
// when tracing is off.
func (c *Client) startSend(ctx context.Context, target string) (context.Context, trace.Span) {
	if c.tracer == nil {
		return ctx, nil
	}
	label := target
	if strings.Contains(target, "://") {
		label = "_url"
	}
	return c.tracer.Start(ctx, "SendMessage "+label, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(keyRemoteAgent.String(label)))
}

// endSend ends a send's span with the state the task reached, or the
// failure.
func endSend(span trace.Span, task *a2a.Task, err error) {
	if span == nil {
		return
	}
	if task != nil && task.Status.State != "" {
		span.SetAttributes(keyTaskState.String(stateLabel(task.Status.State)))
	}
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String("_OTHER"))
		span.SetStatus(codes.Error, "send failed")
	}
	span.End()
}
