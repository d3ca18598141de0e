package acpagent

import (
	"context"
	"errors"

	acp "github.com/coder/acp-go-sdk"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/telemetry"
)

// Attributes of the ACP request spans. ACP has no semantic conventions
// of its own yet; these mirror MCP's (mcp.method.name, mcp.session.id).
const (
	keyMethod     = attribute.Key("acp.method.name")
	keySession    = attribute.Key("acp.session.id")
	keyStopReason = attribute.Key("acp.stop_reason")
)

// startRequest returns ctx in the trace of the request's _meta
// (traceparent, tracestate: the root keys ACP reserves for W3C trace
// context, as MCP does), so that a traced editor's prompt continues into
// the run, the model calls and the tools; and, with tracing on, a server
// span for the request, child of that context. With tracing off the
// editor's context still goes on unchanged to the model APIs and MCP
// servers the run calls. end must be called with the request's error.
func (s *server) startRequest(ctx context.Context, method string, meta map[string]any, id acp.SessionId) (context.Context, *reqSpan) {
	if meta != nil {
		if _, ok := meta["traceparent"]; ok {
			ctx = telemetry.ExtractMeta(ctx, meta)
		}
	}
	if s.tracer == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{keyMethod.String(method), semconv.GenAIAgentName(s.opts.Agent)}
	if id != "" {
		attrs = append(attrs, keySession.String(string(id)))
	}
	ctx, span := s.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return ctx, &reqSpan{span}
}

// reqSpan is an ACP request's span; nil when tracing is off.
type reqSpan struct{ span trace.Span }

// end ends the span with the request's outcome: the session it opened,
// the stop reason of a prompt, or the JSON-RPC error code it answered.
func (r *reqSpan) end(id acp.SessionId, stop acp.StopReason, err error) {
	if r == nil {
		return
	}
	if id != "" {
		r.span.SetAttributes(keySession.String(string(id)))
	}
	if stop != "" {
		r.span.SetAttributes(keyStopReason.String(string(stop)))
	}
	if err != nil {
		errType := "_OTHER"
		var re *acp.RequestError
		if errors.As(err, &re) {
			errType = rpcCodeName(re.Code)
		}
		r.span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		r.span.SetStatus(codes.Error, errType)
	}
	r.span.End()
}

// rpcCodeName is error.type for a JSON-RPC error code: the code itself,
// a bounded set.
func rpcCodeName(code int) string {
	switch code {
	case -32700:
		return "parse_error"
	case -32600:
		return "invalid_request"
	case -32601:
		return "method_not_found"
	case -32602:
		return "invalid_params"
	case -32603:
		return "internal_error"
	case -32000:
		return "auth_required"
	case resourceNotFound:
		return "resource_not_found"
	case -32800:
		return "cancelled"
	}
	return "_OTHER"
}
