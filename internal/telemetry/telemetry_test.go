package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/config"
)

const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestDisabled: signals that are off give nil providers and no handler.
func TestDisabled(t *testing.T) {
	for _, tel := range []*Telemetry{Disabled(), nil} {
		if tel.MeterProvider() != nil || tel.TracerProvider() != nil || tel.MetricsHandler() != nil || tel.CaptureContent() {
			t.Errorf("%v: a signal is on", tel)
		}
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}
	tel, err := New(context.Background(), config.TelemetrySettings{ServiceName: "x", SampleRatio: 1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tel.MeterProvider() != nil || tel.TracerProvider() != nil {
		t.Error("providers without metrics or a traces URL")
	}
}

// TestMetricsHandler: the exposition has the runtime collectors and the
// resource, and the instruments recorded through the provider.
func TestMetricsHandler(t *testing.T) {
	tel, err := New(context.Background(), config.TelemetrySettings{
		Metrics: true, ServiceName: "svc", ResourceAttributes: map[string]string{"team": "a"}, SampleRatio: 1,
	}, Options{Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(context.Background())
	c, _ := tel.MeterProvider().Meter(Scope).Int64Counter("agentd.test.things")
	c.Add(context.Background(), 3)
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{"agentd_test_things_total 3", "go_goroutines", "process_cpu_seconds_total",
		`target_info{service_instance_id="` + tel.InstanceID() + `",service_name="svc",service_version="1.2.3",team="a"`} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

// TestPropagation: traceparent round-trips through headers and MCP _meta.
func TestPropagation(t *testing.T) {
	h := http.Header{"Traceparent": {tp}}
	ctx := Extract(context.Background(), h)
	if !HasRemote(ctx) {
		t.Fatal("no span context from the header")
	}
	meta := map[string]any{"progressToken": 1}
	InjectMeta(ctx, meta)
	if meta["traceparent"] != tp {
		t.Fatalf("_meta = %v", meta)
	}
	back := ExtractMeta(context.Background(), meta)
	if !SameTrace(ctx, back) {
		t.Error("_meta did not carry the trace")
	}
	if ExtractMeta(context.Background(), nil) == nil || HasRemote(ExtractMeta(context.Background(), map[string]any{"traceparent": 7})) {
		t.Error("a non-string traceparent was taken")
	}
	empty := map[string]any{}
	InjectMeta(context.Background(), empty)
	if len(empty) != 0 {
		t.Errorf("injected without a span: %v", empty)
	}
}

type captureRT struct{ req *http.Request }

func (c *captureRT) RoundTrip(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
}

// TestTransport: a request in a trace goes out with traceparent on a
// copy; one without goes out as it is.
func TestTransport(t *testing.T) {
	next := &captureRT{}
	rt := Transport(next)
	req := httptest.NewRequest("GET", "http://model.example/v1", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if next.req != req {
		t.Error("a request without trace context was copied")
	}
	ctx := Extract(context.Background(), http.Header{"Traceparent": {tp}})
	req = httptest.NewRequest("GET", "http://model.example/v1", nil).WithContext(ctx)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if next.req == req || next.req.Header.Get("Traceparent") != tp || req.Header.Get("Traceparent") != "" {
		t.Errorf("sent %q; the caller's request was changed: %v", next.req.Header.Get("Traceparent"), req.Header)
	}
}

// TestLogHandler: records logged with a request's context carry its
// request id and, for a sampled span, the trace and span ids.
func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "x")
	ctx := WithRequestID(Extract(context.Background(), http.Header{"Traceparent": {tp}}), "r1")
	log.InfoContext(ctx, "hello")
	log.Info("no context")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var first, second map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[1]), &second)
	sc := trace.SpanContextFromContext(ctx)
	if first["request_id"] != "r1" || first["trace_id"] != sc.TraceID().String() || first["span_id"] != sc.SpanID().String() || first["component"] != "x" {
		t.Errorf("record = %v", first)
	}
	if _, ok := second["request_id"]; ok {
		t.Errorf("record without context = %v", second)
	}
}
