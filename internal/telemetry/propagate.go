package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// propagator is W3C Trace Context: traceparent and tracestate. It is a
// stateless value, not a registered global.
var propagator propagation.TraceContext

// Extract returns ctx with the remote span context of h's traceparent,
// if it carries a valid one.
func Extract(ctx context.Context, h http.Header) context.Context {
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject writes ctx's span context into h as traceparent (and
// tracestate); nothing when ctx has none.
func Inject(ctx context.Context, h http.Header) {
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// Meta is an MCP request's params._meta as a propagation carrier: MCP
// carries W3C trace context there, under the same keys as the HTTP
// headers ("traceparent", "tracestate").
type Meta map[string]any

// Get implements propagation.TextMapCarrier.
func (m Meta) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set implements propagation.TextMapCarrier.
func (m Meta) Set(key, value string) { m[key] = value }

// Keys implements propagation.TextMapCarrier.
func (m Meta) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ExtractMeta returns ctx with the remote span context of an MCP
// request's _meta, if it carries a valid traceparent.
func ExtractMeta(ctx context.Context, meta map[string]any) context.Context {
	if meta == nil {
		return ctx
	}
	return propagator.Extract(ctx, Meta(meta))
}

// InjectMeta writes ctx's span context into an MCP request's _meta;
// nothing when ctx has none. meta must not be nil.
func InjectMeta(ctx context.Context, meta map[string]any) {
	propagator.Inject(ctx, Meta(meta))
}

// HasRemote reports whether ctx carries a valid span context.
func HasRemote(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid()
}

// SameTrace reports whether a and b carry span contexts of one trace.
func SameTrace(a, b context.Context) bool {
	sa, sb := trace.SpanContextFromContext(a), trace.SpanContextFromContext(b)
	return sa.IsValid() && sb.IsValid() && sa.TraceID() == sb.TraceID()
}

// Transport passes the trace context of each request's ctx on in its
// headers, so the next hop (a model API, an A2A agent) continues the
// trace. A request whose ctx has no span context goes out untouched and
// uncopied.
func Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{next: next}
}

type transport struct{ next http.RoundTripper }

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !trace.SpanContextFromContext(r.Context()).IsValid() {
		return t.next.RoundTrip(r)
	}
	// A RoundTripper must not modify its request.
	r = r.Clone(r.Context())
	Inject(r.Context(), r.Header)
	return t.next.RoundTrip(r)
}
