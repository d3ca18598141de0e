package mcpclient

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/telemetry/attrset"
	"github.com/agentd/agentd/internal/tool"
)

// keyServer names the upstream server (its [[mcp_servers]] name).
const keyServer = attribute.Key("agentd.mcp.server")

var states = []string{StateConnecting, StateConnected, StateFailed, StateDisabled}

// observer records upstream calls (mcp.client.operation.duration, a
// client span per call) and the servers' state and reconnects.
type observer struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	sets     *attrset.Cache[callKey]
}

type callKey struct{ server, tool, errType string }

func newObserver(m *Manager) *observer {
	opts := m.opts
	if opts.Meter == nil && opts.Tracer == nil {
		return nil
	}
	o := &observer{}
	if opts.Tracer != nil {
		o.tracer = opts.Tracer.Tracer(telemetry.Scope)
	}
	if opts.Meter == nil {
		return o
	}
	mt := opts.Meter.Meter(telemetry.Scope)
	o.duration, _ = mt.Float64Histogram("mcp.client.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of tools/call requests to upstream MCP servers, by server, tool and error type."),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300))
	o.sets = attrset.NewCache(func(k callKey) attribute.Set {
		kv := []attribute.KeyValue{semconv.McpMethodNameToolsCall, keyServer.String(k.server), semconv.GenAIToolName(k.tool)}
		if k.errType != "" {
			kv = append(kv, semconv.ErrorTypeKey.String(k.errType))
		}
		return attribute.NewSet(kv...)
	})
	// No unit: "1" would make the Prometheus name end in _ratio.
	state, _ := mt.Int64ObservableGauge("agentd.mcp.upstream.state",
		metric.WithDescription("1 for each upstream MCP server's current connection state (connecting, connected, failed, disabled), 0 for the others."))
	reconnects, _ := mt.Int64ObservableCounter("agentd.mcp.upstream.reconnects",
		metric.WithUnit("{reconnect}"),
		metric.WithDescription("Sessions re-established with an upstream MCP server after a drop."))
	// The manager outlives the meter provider's last collection; the
	// registration is never undone.
	_, _ = mt.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		for _, s := range m.serversInOrder() {
			s.mu.Lock()
			cur, n := s.state, s.reconnects
			s.mu.Unlock()
			for _, st := range states {
				v := int64(0)
				if st == cur {
					v = 1
				}
				obs.ObserveInt64(state, v, metric.WithAttributes(keyServer.String(s.name), attribute.String("state", st)))
			}
			obs.ObserveInt64(reconnects, int64(n), metric.WithAttributes(keyServer.String(s.name)))
		}
		return nil
	}, state, reconnects)
	return o
}

// observedCall runs call with a client span (child of the runner's
// execute_tool span; its context goes upstream in _meta) and records
// its duration.
func (o *observer) observedCall(ctx context.Context, t *mcpTool, c *tool.Call) (tool.Result, error) {
	start := time.Now()
	var span trace.Span
	if o.tracer != nil {
		ctx, span = o.tracer.Start(ctx, "tools/call "+t.upstream, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(semconv.McpMethodNameToolsCall, semconv.GenAIToolName(t.upstream), keyServer.String(t.srv.name),
				semconv.GenAIOperationNameExecuteTool))
	}
	res, err := t.call(ctx, c)
	errType := callErrorType(ctx, res, err)
	if span != nil {
		if errType != "" {
			span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			span.SetStatus(codes.Error, errType)
		}
		span.End()
	}
	if o.duration != nil {
		o.duration.Record(ctx, time.Since(start).Seconds(),
			o.sets.Get(callKey{t.srv.name, t.upstream, errType}).Record...)
	}
	return res, err
}

// callErrorType is error.type of a call: "" when it succeeded, else a
// bounded word, never the error's text.
func callErrorType(ctx context.Context, res tool.Result, err error) string {
	switch {
	case err == nil && res.IsError:
		return "tool_error"
	case err == nil:
		return ""
	case ctx.Err() != nil:
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, tool.ErrDisconnected):
		return "disconnected"
	case errors.Is(err, ErrResultTooLarge):
		return "too_large"
	}
	return "_OTHER"
}
