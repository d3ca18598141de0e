package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/telemetry/attrset"
)

// HeaderRequestID names the request id a client may send and every
// answer carries.
const HeaderRequestID = "X-Request-Id"

// ObserveOptions configure Observe.
type ObserveOptions struct {
	// Meter records http.server.request.duration; nil records nothing.
	Meter metric.MeterProvider
	// Tracer starts a server span per request, child of the caller's
	// traceparent; nil starts none (the caller's trace context is still
	// passed on).
	Tracer trace.TracerProvider
	// Route names the route pattern of a request no handler tagged with
	// TagRoute (refused by the middleware before routing, or unmatched);
	// nil leaves it empty.
	Route  func(r *http.Request) string
	Logger *slog.Logger
}

// Observe wraps h, outermost, with what each request needs to be found
// again: a request id (the client's X-Request-Id when it is sane, else a
// new one) in the context, the answer's header and error bodies; the
// caller's W3C trace context and a server span; and the request's
// duration by method, route pattern and status. Route patterns, never
// paths, label the metric, so a session id in a URL cannot blow up the
// series count.
func Observe(h http.Handler, opts ObserveOptions) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var (
		duration metric.Float64Histogram
		sets     *attrset.Cache[routeKey]
		tracer   trace.Tracer
	)
	if opts.Meter != nil {
		m := opts.Meter.Meter(telemetry.Scope)
		duration, _ = m.Float64Histogram("http.server.request.duration",
			metric.WithUnit("s"),
			metric.WithDescription("Duration of HTTP server requests, by method, route pattern and status."),
			metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 300))
		sets = attrset.NewCache(func(k routeKey) attribute.Set {
			return attribute.NewSet(
				semconv.HTTPRequestMethodKey.String(k.method),
				semconv.HTTPRoute(k.route),
				semconv.HTTPResponseStatusCode(k.status))
		})
	}
	if opts.Tracer != nil {
		tracer = opts.Tracer.Tracer(telemetry.Scope)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, id: requestIDFrom(r)}
		w.Header().Set(HeaderRequestID, rec.id)
		ctx := telemetry.WithRequestID(r.Context(), rec.id)
		if tracer != nil || r.Header.Get("Traceparent") != "" {
			ctx = telemetry.Extract(ctx, r.Header)
		}
		method := knownMethod(r.Method)
		var span trace.Span
		if tracer != nil {
			ctx, span = tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(semconv.HTTPRequestMethodKey.String(method), semconv.URLPath(r.URL.Path), semconv.URLScheme(scheme(r))))
		}
		r = r.WithContext(ctx)
		h.ServeHTTP(rec, r)

		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		route := rec.route
		if route == "" && opts.Route != nil {
			route = opts.Route(r)
		}
		if span != nil {
			if route != "" {
				span.SetName(method + " " + route)
				span.SetAttributes(semconv.HTTPRoute(route))
			}
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			span.End()
		}
		if duration != nil {
			duration.Record(ctx, time.Since(start).Seconds(), sets.Get(routeKey{method, route, status}).Record...)
		}
		if log.Enabled(ctx, slog.LevelDebug) {
			log.DebugContext(ctx, "request", "method", r.Method, "route", route, "status", status, "duration", time.Since(start))
		}
	})
}

type routeKey struct {
	method, route string
	status        int
}

// recorder sees the status a handler answers with and the route pattern
// the mux matched; it passes everything else through (Unwrap gives
// http.ResponseController the writer below for flushes and deadlines).
type recorder struct {
	http.ResponseWriter
	id     string
	route  string
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush implements http.Flusher for handlers that assert it.
func (r *recorder) Flush() {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

// Unwrap returns the writer below, for http.ResponseController.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// recorderOf finds Observe's recorder below w, if any.
func recorderOf(w http.ResponseWriter) *recorder {
	for range 8 {
		switch x := w.(type) {
		case *recorder:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// TagRoute tells Observe the route pattern that matched the request w
// answers ("GET /api/agents/{name}" is recorded as /api/agents/{name}).
// The daemon's mux calls it before each handler.
func TagRoute(w http.ResponseWriter, pattern string) {
	if rec, ok := w.(*recorder); ok {
		rec.route = RoutePath(pattern)
	}
}

// RoutePath strips the method and host of a ServeMux pattern, leaving
// the path template that http.route holds.
func RoutePath(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = strings.TrimLeft(pattern[i+1:], " ")
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:]
	}
	return pattern
}

// RequestIDOf returns the request id of the answer w writes, or "".
func RequestIDOf(w http.ResponseWriter) string {
	if rec := recorderOf(w); rec != nil {
		return rec.id
	}
	return ""
}

// requestIDFrom takes the client's X-Request-Id when it is a short token
// of visible ASCII (it is echoed in headers and logs), else makes one.
func requestIDFrom(r *http.Request) string {
	if id := r.Header.Get(HeaderRequestID); id != "" && len(id) <= 128 && printableToken(id) {
		return id
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func printableToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// knownMethod bounds the method label: anything but the standard methods
// is "_OTHER", as the HTTP semantic conventions say.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch,
		http.MethodHead, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
