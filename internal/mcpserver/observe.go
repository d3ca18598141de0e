package mcpserver

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/telemetry/attrset"
)

// keyEndpoint names the endpoint a request came to: "main" (/mcp) or
// "gateway:NAME".
const keyEndpoint = attribute.Key("agentd.mcp.endpoint")

// knownMethods bound the mcp.method.name label: a client may send any
// string as a method.
var knownMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true,
	"tools/list": true, "tools/call": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "logging/setLevel": true,
	"notifications/initialized": true, "notifications/cancelled": true, "notifications/progress": true,
	"notifications/roots/list_changed": true, "subscriptions/listen": true,
}

// observer records mcp.server.operation.duration and a server span per
// request; nil when neither is on.
type observer struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	sets     *attrset.Cache[opKey]
}

type opKey struct{ endpoint, method, tool, errType string }

func newObserver(opts Options) *observer {
	if opts.Meter == nil && opts.Tracer == nil {
		return nil
	}
	o := &observer{}
	if opts.Tracer != nil {
		o.tracer = opts.Tracer.Tracer(telemetry.Scope)
	}
	if opts.Meter != nil {
		m := opts.Meter.Meter(telemetry.Scope)
		o.duration, _ = m.Float64Histogram("mcp.server.operation.duration",
			metric.WithUnit("s"),
			metric.WithDescription("Duration of MCP requests served, by endpoint, method, tool and error type."),
			metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300))
		o.sets = attrset.NewCache(func(k opKey) attribute.Set {
			kv := []attribute.KeyValue{keyEndpoint.String(k.endpoint), semconv.McpMethodNameKey.String(k.method)}
			if k.tool != "" {
				kv = append(kv, semconv.GenAIToolName(k.tool))
			}
			if k.errType != "" {
				kv = append(kv, semconv.ErrorTypeKey.String(k.errType))
			}
			return attribute.NewSet(kv...)
		})
	}
	return o
}

// observe is the receiving middleware of endpoint e. A request's span is
// the child of the trace context in its params._meta (MCP's own carrier)
// or, without one, of the HTTP request it came in (whose server span the
// HTTP handler put in the headers the SDK hands over).
func (s *Server) observe(e *endpoint) mcp.Middleware {
	o := s.obs
	endpointName := "main"
	if e.name != "" {
		endpointName = "gateway:" + e.name
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if o == nil {
				return next(ctx, method, req)
			}
			start := time.Now()
			// The label is bounded; the method itself goes on unchanged
			// (subscriptions/listen and future methods must reach the SDK).
			label := method
			if !knownMethods[label] {
				label = "_OTHER"
			}
			toolName := ""
			if label == "tools/call" {
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
					toolName = p.Name
				}
				e.mu.Lock()
				_, served := e.served[toolName]
				e.mu.Unlock()
				if !served {
					toolName = "_unknown"
				}
			}
			ctx = parentOf(ctx, req)
			var span trace.Span
			if o.tracer != nil {
				name := label
				if toolName != "" {
					name += " " + toolName
				}
				attrs := []attribute.KeyValue{semconv.McpMethodNameKey.String(label), keyEndpoint.String(endpointName)}
				if toolName != "" {
					attrs = append(attrs, semconv.GenAIToolName(toolName))
				}
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
					attrs = append(attrs, semconv.McpSessionID(ss.ID()))
				}
				ctx, span = o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
			}
			res, err := next(ctx, method, req)
			errType := opErrorType(res, err)
			if span != nil {
				if errType != "" {
					span.SetAttributes(semconv.ErrorTypeKey.String(errType))
					span.SetStatus(codes.Error, errType)
				}
				span.End()
			}
			if o.duration != nil {
				o.duration.Record(ctx, time.Since(start).Seconds(),
					o.sets.Get(opKey{endpointName, label, toolName, errType}).Record...)
			}
			return res, err
		}
	}
}

// parentOf returns ctx with the trace context req carries: its _meta
// first, else the headers of its HTTP request.
//
// When both name the same trace, the HTTP request's span is the parent:
// it is itself a child of the caller's, so the trace keeps every hop.
func parentOf(ctx context.Context, req mcp.Request) context.Context {
	fromHTTP := ctx
	if extra := req.GetExtra(); extra != nil && extra.Header != nil && extra.Header.Get("Traceparent") != "" {
		fromHTTP = telemetry.Extract(ctx, extra.Header)
	}
	if meta := metaOf(req.GetParams()); meta != nil {
		if _, ok := meta["traceparent"]; ok {
			fromMeta := telemetry.ExtractMeta(ctx, meta)
			if !telemetry.SameTrace(fromMeta, fromHTTP) {
				return fromMeta
			}
		}
	}
	return fromHTTP
}

// metaOf returns p's _meta; nil for absent params (the SDK hands a typed
// nil pointer, whose GetMeta would panic).
func metaOf(p mcp.Params) map[string]any {
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// opErrorType is error.type of a served request: "" when it succeeded,
// tool_error for a tool result flagged isError, the JSON-RPC code of an
// error answer.
func opErrorType(res mcp.Result, err error) string {
	var rpcErr *jsonrpc.Error
	switch {
	case err != nil && errors.As(err, &rpcErr):
		return strconv.FormatInt(rpcErr.Code, 10)
	case err != nil:
		return "_OTHER"
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
		return "tool_error"
	}
	return ""
}
