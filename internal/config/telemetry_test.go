package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadEnv loads body as HOME/config.toml with env as the environment.
func loadEnv(t *testing.T, body string, env map[string]string) (*Config, error) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(LoadOptions{Path: path, Home: home, LookupEnv: fakeEnv(env)})
}

// TestTelemetryValidation: every bad [metrics]/[telemetry] value and
// log_format is reported at its file:line, and a bad OTEL_* variable is
// named where it would apply.
func TestTelemetryValidation(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		env   map[string]string
		line  int
		field string
		want  string
	}{
		{"log format", "log_format = \"xml\"\n", nil, 1, "log_format", `"xml" is not one of text, json`},
		{"endpoint not a url", "[telemetry]\nendpoint = \"collector:4318\"\n", nil, 2, "telemetry.endpoint", "must be an http:// or https:// URL"},
		{"endpoint with credentials", "[telemetry]\ntraces_endpoint = \"https://u:p@c.example/v1/traces\"\n", nil, 2, "telemetry.traces_endpoint", "must not contain credentials"},
		{"ratio", "[telemetry]\nsample_ratio = 1.5\n", nil, 2, "telemetry.sample_ratio", "from 0 to 1"},
		{"literal secret header", "[telemetry]\nendpoint = \"http://127.0.0.1:4318\"\nheaders = { Authorization = \"Bearer abc\" }\n", nil, 3, "telemetry.headers.Authorization", "literal secrets are not allowed"},
		{"bad env endpoint", "", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, 0, "telemetry.endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT applies, but it is not an http:// or https:// URL"},
		{"bad env headers", "", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, 0, "telemetry.headers", "OTEL_EXPORTER_OTLP_HEADERS is not a list of key=value pairs"},
		{"metrics type", "[metrics]\npublic = \"yes\"\n", nil, 2, "metrics.public", "expected true or false"},
		{"grpc protocol", "", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, 0, "telemetry.endpoint", "OTEL_EXPORTER_OTLP_PROTOCOL is \"grpc\": agentd speaks OTLP over HTTP (http/protobuf) only"},
		{"other exporter", "", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "zipkin"}, 0, "telemetry.endpoint", "OTEL_TRACES_EXPORTER is \"zipkin\": agentd exports traces with OTLP only"},
		{"bad env sampler", "", map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}, 0, "telemetry.sample_ratio", `OTEL_TRACES_SAMPLER applies, but "sometimes" is not one of always_on`},
		{"bad env sampler arg", "", map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, 0, "telemetry.sample_ratio", `OTEL_TRACES_SAMPLER_ARG "2" is not a number from 0 to 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadEnv(t, tt.body, tt.env)
			if err == nil {
				t.Fatal("Load accepted it")
			}
			e := findError(err, tt.line, tt.field)
			if e == nil || !strings.Contains(e.Msg, tt.want) {
				t.Fatalf("want %d:%s %q, got:\n%v", tt.line, tt.field, tt.want, err)
			}
			if tt.line > 0 && !strings.Contains(err.Error(), "config.toml:") {
				t.Errorf("error has no file:line: %v", err)
			}
		})
	}
}

// TestTelemetrySettings: the file's keys win, the OTEL_* variables fill
// the rest, OTEL_SDK_DISABLED turns the variables off, and header
// references are expanded only when resolving.
func TestTelemetrySettings(t *testing.T) {
	t.Run("off by default, metrics on", func(t *testing.T) {
		cfg, err := loadEnv(t, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := cfg.TelemetrySettings()
		if err != nil {
			t.Fatal(err)
		}
		if s.TracesURL != "" || !s.Metrics || s.MetricsPublic || s.ServiceName != "agentd" || s.SampleRatio != 1 || s.SampleRatioSet || s.Sampler != "parentbased_always_on" {
			t.Fatalf("defaults = %+v", s)
		}
	})
	t.Run("sampler from the environment", func(t *testing.T) {
		cfg, err := loadEnv(t, "", map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := cfg.TelemetrySettings()
		if s.SampleRatioSet || s.Sampler != "parentbased_traceidratio 0.1 (env OTEL_TRACES_SAMPLER)" {
			t.Errorf("the SDK's sampler does not apply: %+v", s)
		}
	})
	t.Run("env", func(t *testing.T) {
		cfg, err := loadEnv(t, "", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/",
			"OTEL_SERVICE_NAME":           "edge-1",
			"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment.name=prod,team=a%20b",
			"OTEL_EXPORTER_OTLP_HEADERS":  "x-api-key=k1",
		})
		if err != nil {
			t.Fatal(err)
		}
		s, err := cfg.TelemetrySettings()
		if err != nil {
			t.Fatal(err)
		}
		if s.TracesURL != "http://127.0.0.1:4318/v1/traces" || s.TracesFrom != "env OTEL_EXPORTER_OTLP_ENDPOINT" {
			t.Errorf("traces = %q from %q", s.TracesURL, s.TracesFrom)
		}
		if s.ServiceName != "edge-1" || s.ResourceAttributes["team"] != "a b" || s.ResourceAttributes["deployment.environment.name"] != "prod" {
			t.Errorf("resource = %q %v", s.ServiceName, s.ResourceAttributes)
		}
		if s.Headers["x-api-key"] != "k1" {
			t.Errorf("headers = %v", s.Headers)
		}
	})
	t.Run("file wins", func(t *testing.T) {
		cfg, err := loadEnv(t, `[metrics]
enabled = false
public = true

[telemetry]
traces_endpoint = "https://otel.example/custom"
headers = { Authorization = "Bearer ${OTLP_TOKEN}" }
service_name = "mine"
resource_attributes = { team = "file" }
sample_ratio = 0.25
capture_content = true
`, map[string]string{
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://ignored:4318/v1/traces",
			"OTEL_SERVICE_NAME":                  "ignored",
			"OTEL_RESOURCE_ATTRIBUTES":           "team=env,region=eu",
			"OTEL_EXPORTER_OTLP_HEADERS":         "Authorization=ignored,x-extra=1",
			"OTEL_TRACES_SAMPLER":                "always_off",
			"OTLP_TOKEN":                         "t0k",
		})
		if err != nil {
			t.Fatal(err)
		}
		s, err := cfg.TelemetrySettings()
		if err != nil {
			t.Fatal(err)
		}
		if s.Metrics || !s.MetricsPublic || s.TracesURL != "https://otel.example/custom" || s.ServiceName != "mine" || s.SampleRatio != 0.25 || !s.SampleRatioSet || !s.CaptureContent {
			t.Errorf("settings = %+v", s)
		}
		if s.ResourceAttributes["team"] != "file" || s.ResourceAttributes["region"] != "eu" {
			t.Errorf("resource = %v", s.ResourceAttributes)
		}
		if s.Headers["Authorization"] != "Bearer t0k" || s.Headers["x-extra"] != "1" {
			t.Errorf("headers = %v", s.Headers)
		}
	})
	t.Run("traces exporter none", func(t *testing.T) {
		cfg, err := loadEnv(t, "", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"})
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := cfg.TelemetrySettings(); s.TracesURL != "" {
			t.Errorf("traces on despite OTEL_TRACES_EXPORTER=none: %q", s.TracesURL)
		}
	})
	t.Run("sdk disabled", func(t *testing.T) {
		cfg, err := loadEnv(t, "", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"})
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := cfg.TelemetrySettings(); s.TracesURL != "" {
			t.Errorf("traces on despite OTEL_SDK_DISABLED: %q", s.TracesURL)
		}
	})
}
