package telemetry

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentd/agentd/internal/config"
)

// newTraced builds a Telemetry with metrics and tracing on, its spans
// recorded synchronously.
func newTraced(t *testing.T, s config.TelemetrySettings) (*Telemetry, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	s.Metrics, s.TracesURL = true, "http://127.0.0.1:1/v1/traces"
	if s.ServiceName == "" {
		s.ServiceName = "agentd"
	}
	tel, err := New(context.Background(), s, Options{SpanProcessor: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	return tel, rec
}

func resourceOf(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Resource().Attributes() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

func targetInfo(t *testing.T, tel *Telemetry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return regexp.MustCompile(`(?m)^target_info\{.*$`).FindString(rec.Body.String())
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestServiceInstanceID: every process gets its own service.instance.id
// (a random UUID), on its spans' resource and on target_info; a
// configured one is used as it is.
func TestServiceInstanceID(t *testing.T) {
	a, recA := newTraced(t, config.TelemetrySettings{})
	b, _ := newTraced(t, config.TelemetrySettings{})
	if !uuidV4.MatchString(a.InstanceID()) || a.InstanceID() == b.InstanceID() {
		t.Fatalf("instance ids %q and %q: want two distinct random UUIDs", a.InstanceID(), b.InstanceID())
	}
	_, span := a.TracerProvider().Tracer(Scope).Start(context.Background(), "x")
	span.End()
	if got := resourceOf(recA.Ended()[0])["service.instance.id"]; got != a.InstanceID() {
		t.Errorf("span resource service.instance.id %q, want %q", got, a.InstanceID())
	}
	if ti := targetInfo(t, a); !strings.Contains(ti, `service_instance_id="`+a.InstanceID()+`"`) {
		t.Errorf("target_info without the instance id: %s", ti)
	}

	named, _ := newTraced(t, config.TelemetrySettings{ResourceAttributes: map[string]string{"service.instance.id": "pod-7"}})
	if named.InstanceID() != "pod-7" || !strings.Contains(targetInfo(t, named), `service_instance_id="pod-7"`) {
		t.Errorf("configured id: %q, %s", named.InstanceID(), targetInfo(t, named))
	}
	if Disabled().InstanceID() == "" {
		t.Error("a daemon with telemetry off has no instance id for its logs")
	}
}

// TestStandardEnvironment: the SDK's own handling of the standard
// variables applies. OTEL_TRACES_SAMPLER picks the sampler unless
// telemetry.sample_ratio is set; OTEL_RESOURCE_ATTRIBUTES reaches the
// resource through resource.WithFromEnv, under the settings' own keys.
func TestStandardEnvironment(t *testing.T) {
	sampled := func(tel *Telemetry, rec *tracetest.SpanRecorder) bool {
		_, span := tel.TracerProvider().Tracer(Scope).Start(context.Background(), "s")
		span.End()
		return len(rec.Ended()) == 1 && rec.Ended()[0].SpanContext().IsSampled()
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		s       config.TelemetrySettings
		sampled bool
	}{
		{"default", nil, config.TelemetrySettings{}, true},
		{"always_off", map[string]string{"OTEL_TRACES_SAMPLER": "always_off"}, config.TelemetrySettings{}, false},
		{"ratio 0", map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"}, config.TelemetrySettings{}, false},
		{"the file's ratio wins", map[string]string{"OTEL_TRACES_SAMPLER": "always_off"}, config.TelemetrySettings{SampleRatio: 1, SampleRatioSet: true}, true},
		{"the file's ratio 0", nil, config.TelemetrySettings{SampleRatio: 0, SampleRatioSet: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tel, rec := newTraced(t, tc.s)
			if got := sampled(tel, rec); got != tc.sampled {
				t.Errorf("sampled = %v, want %v", got, tc.sampled)
			}
		})
	}

	t.Run("resource attributes", func(t *testing.T) {
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "k8s.pod.name=agentd-0,team=env")
		tel, rec := newTraced(t, config.TelemetrySettings{ResourceAttributes: map[string]string{"team": "file"}})
		_, span := tel.TracerProvider().Tracer(Scope).Start(context.Background(), "s")
		span.End()
		res := resourceOf(rec.Ended()[0])
		if res["k8s.pod.name"] != "agentd-0" || res["team"] != "file" || res["telemetry.sdk.language"] != "go" {
			t.Errorf("resource %v: want k8s.pod.name from the environment, team from the settings, the SDK's own attributes", res)
		}
	})
}
