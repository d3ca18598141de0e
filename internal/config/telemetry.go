package config

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// Metrics configures GET /metrics, the Prometheus exposition.
type Metrics struct {
	// Enabled serves /metrics and records metrics; default true. Off, the
	// daemon uses no-op instruments and /metrics does not exist.
	Enabled *bool `toml:"enabled" json:"enabled,omitempty"`
	// Public serves /metrics without the API key (a scraper on a trusted
	// network); default false.
	Public bool `toml:"public" json:"public,omitempty"`
}

// Telemetry configures trace export over OTLP/HTTP. The standard OTEL_*
// variables fill whatever the file leaves unset.
type Telemetry struct {
	// Endpoint is the OTLP/HTTP base URL; traces go to Endpoint +
	// "/v1/traces". Env OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string `toml:"endpoint" json:"endpoint,omitempty"`
	// TracesEndpoint is the full URL for traces, used as is. Env
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
	TracesEndpoint string `toml:"traces_endpoint" json:"traces_endpoint,omitempty"`
	// Headers are sent with every export (a collector's API key). Values
	// may reference ${NAME} variables; sensitive ones must. Env
	// OTEL_EXPORTER_OTLP_HEADERS / OTEL_EXPORTER_OTLP_TRACES_HEADERS.
	Headers map[string]string `toml:"headers" json:"headers,omitempty"`
	// ServiceName is service.name; default "agentd". Env OTEL_SERVICE_NAME.
	ServiceName string `toml:"service_name" json:"service_name,omitempty"`
	// ResourceAttributes are added to the resource. Env
	// OTEL_RESOURCE_ATTRIBUTES (key=value,...); the file's keys win.
	ResourceAttributes map[string]string `toml:"resource_attributes" json:"resource_attributes,omitempty"`
	// SampleRatio is the share of new traces recorded (0..1, parent
	// based: a sampled caller's trace is always followed); default 1.
	SampleRatio *float64 `toml:"sample_ratio" json:"sample_ratio,omitempty"`
	// CaptureContent puts prompts, completions and tool arguments on
	// spans; default false, as they may hold personal data.
	CaptureContent bool `toml:"capture_content" json:"capture_content,omitempty"`
}

// The OTel SDK's standard variables this package honours.
const (
	envOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envOTLPHeaders        = "OTEL_EXPORTER_OTLP_HEADERS"
	envOTLPTracesHeaders  = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	envServiceName        = "OTEL_SERVICE_NAME"
	envResourceAttributes = "OTEL_RESOURCE_ATTRIBUTES"
	envSDKDisabled        = "OTEL_SDK_DISABLED"
	// The sampler variables are read by the SDK itself (sdk/trace); this
	// package only checks them, and knows whether they apply.
	envTracesSampler    = "OTEL_TRACES_SAMPLER"
	envTracesSamplerArg = "OTEL_TRACES_SAMPLER_ARG"
	// OTEL_TRACES_EXPORTER "none" turns the variables' tracing off;
	// agentd's one exporter is OTLP over HTTP, so "otlp" is the only
	// other value, and the protocol variables may only say http/protobuf.
	envTracesExporter     = "OTEL_TRACES_EXPORTER"
	envOTLPProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envOTLPTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	otlpHTTPProtobuf      = "http/protobuf"
	tracesExporterOTLP    = "otlp"
	tracesExporterNone    = "none"
)

// samplers are the OTEL_TRACES_SAMPLER values the Go SDK implements;
// which take OTEL_TRACES_SAMPLER_ARG (a ratio).
var samplers = map[string]bool{
	"always_on": false, "always_off": false, "traceidratio": true,
	"parentbased_always_on": false, "parentbased_always_off": false, "parentbased_traceidratio": true,
}

// DefaultServiceName is service.name when neither the file nor
// OTEL_SERVICE_NAME names one.
const DefaultServiceName = "agentd"

// TelemetrySettings is [metrics] and [telemetry] resolved against the
// environment: what the telemetry package needs, and nothing it must
// look up itself.
type TelemetrySettings struct {
	// Metrics is whether metrics are recorded and /metrics served.
	Metrics bool
	// MetricsPublic serves /metrics without the API key.
	MetricsPublic bool
	// TracesURL is the OTLP/HTTP traces URL; "" = tracing off.
	TracesURL string
	// TracesFrom says where TracesURL came from, for logs and doctor:
	// "telemetry.traces_endpoint", "env OTEL_EXPORTER_OTLP_ENDPOINT", ...
	TracesFrom string
	// Headers go with every export; values expanded, so secret.
	Headers map[string]string
	// ServiceName and ResourceAttributes describe the resource.
	ServiceName        string
	ResourceAttributes map[string]string
	// SampleRatio is telemetry.sample_ratio (parent based). Without it
	// (SampleRatioSet false) the SDK's own sampler applies: the one
	// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name, by default
	// parentbased_always_on (the same as a ratio of 1).
	SampleRatio    float64
	SampleRatioSet bool
	// Sampler describes the sampler in force, for logs and doctor.
	Sampler        string
	CaptureContent bool
}

// MetricsEnabled reports whether [metrics] enabled is true (the default).
func (c *Config) MetricsEnabled() bool { return c.Metrics.Enabled == nil || *c.Metrics.Enabled }

// TelemetrySettings resolves [metrics] and [telemetry] with the standard
// OTEL_* variables filling what the file leaves unset. Load has checked
// both; an error here is a header variable unset since.
func (c *Config) TelemetrySettings() (TelemetrySettings, error) {
	t := c.Telemetry
	s := TelemetrySettings{
		Metrics:        c.MetricsEnabled(),
		MetricsPublic:  c.Metrics.Public,
		ServiceName:    t.ServiceName,
		SampleRatio:    1,
		CaptureContent: t.CaptureContent,
	}
	s.Sampler = "parentbased_always_on"
	if t.SampleRatio != nil {
		s.SampleRatio, s.SampleRatioSet = *t.SampleRatio, true
		s.Sampler = fmt.Sprintf("parentbased_traceidratio %g (telemetry.sample_ratio)", s.SampleRatio)
	} else if v, ok := c.lookup(envTracesSampler); ok && strings.TrimSpace(v) != "" {
		s.Sampler = strings.TrimSpace(v)
		if a, ok := c.lookup(envTracesSamplerArg); ok && samplers[s.Sampler] {
			s.Sampler += " " + strings.TrimSpace(a)
		}
		s.Sampler += " (env " + envTracesSampler + ")"
	}
	s.TracesURL, s.TracesFrom = c.tracesURL()
	if s.ServiceName == "" {
		s.ServiceName, _ = c.lookup(envServiceName)
	}
	if s.ServiceName == "" {
		s.ServiceName = DefaultServiceName
	}
	s.ResourceAttributes = map[string]string{}
	if v, ok := c.lookup(envResourceAttributes); ok {
		attrs, _ := parseKeyValues(v)
		for k, v := range attrs {
			s.ResourceAttributes[k] = v
		}
	}
	for k, v := range t.ResourceAttributes {
		s.ResourceAttributes[k] = v
	}
	if s.TracesURL == "" {
		return s, nil
	}
	headers, err := c.ExpandHeaders(t.Headers)
	if err != nil {
		return s, fmt.Errorf("telemetry.headers: %w", err)
	}
	if headers == nil {
		headers = map[string]string{}
	}
	for _, env := range []string{envOTLPHeaders, envOTLPTracesHeaders} {
		v, ok := c.lookup(env)
		if !ok {
			continue
		}
		kv, _ := parseKeyValues(v)
		for k, v := range kv {
			if _, set := t.Headers[k]; !set {
				headers[k] = v
			}
		}
	}
	s.Headers = headers
	return s, nil
}

// tracesURL picks the traces endpoint: the file's traces_endpoint, its
// endpoint + /v1/traces, then the same two variables; OTEL_SDK_DISABLED
// turns the variables (not the file) off.
func (c *Config) tracesURL() (u, from string) {
	t := c.Telemetry
	switch {
	case t.TracesEndpoint != "":
		return t.TracesEndpoint, "telemetry.traces_endpoint"
	case t.Endpoint != "":
		return joinTracesPath(t.Endpoint), "telemetry.endpoint"
	}
	if v, _ := c.lookup(envSDKDisabled); strings.EqualFold(strings.TrimSpace(v), "true") {
		return "", ""
	}
	if v, _ := c.lookup(envTracesExporter); strings.TrimSpace(v) == tracesExporterNone {
		return "", ""
	}
	if v, ok := c.lookup(envOTLPTracesEndpoint); ok && v != "" {
		return v, "env " + envOTLPTracesEndpoint
	}
	if v, ok := c.lookup(envOTLPEndpoint); ok && v != "" {
		return joinTracesPath(v), "env " + envOTLPEndpoint
	}
	return "", ""
}

// joinTracesPath appends the signal path to a base endpoint, as the OTLP
// exporter specification says for OTEL_EXPORTER_OTLP_ENDPOINT.
func joinTracesPath(base string) string {
	return strings.TrimRight(base, "/") + "/v1/traces"
}

// parseKeyValues parses the W3C-baggage-like lists of
// OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS:
// "k1=v1,k2=v2", values percent-encoded.
func parseKeyValues(s string) (map[string]string, error) {
	out := map[string]string{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", firstPart(k))
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %q is not percent-encoded correctly", k)
		}
		out[k] = dv
	}
	return out, nil
}

// firstPart shortens what an error quotes from a variable that may hold
// a secret: a key name only, never a value.
func firstPart(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// checkTelemetry validates [metrics], [telemetry], log_format and the
// OTEL_* variables that would apply.
func checkTelemetry(r *report, src *source, c *Config) {
	var root fieldPath
	if c.LogFormat != "" {
		checkOneOf(r, src, root.key("log_format"), c.LogFormat, "text", "json")
	}
	tp := root.key("telemetry")
	t := c.Telemetry
	if t.Endpoint != "" {
		checkURL(r, src, tp.key("endpoint"), t.Endpoint)
	}
	if t.TracesEndpoint != "" {
		checkURL(r, src, tp.key("traces_endpoint"), t.TracesEndpoint)
	}
	if t.SampleRatio != nil {
		if v := *t.SampleRatio; math.IsNaN(v) || v < 0 || v > 1 {
			r.add(src, tp.key("sample_ratio"), "must be a number from 0 to 1")
		}
	}
	if t.ServiceName != "" && strings.TrimSpace(t.ServiceName) == "" {
		r.add(src, tp.key("service_name"), "must not be blank")
	}
	for _, name := range sortedStringKeys(t.Headers) {
		hp := tp.key("headers").key(name)
		v := t.Headers[name]
		if !validHeaderName(name) {
			r.add(src, hp, "is not a valid HTTP header name")
			continue
		}
		if _, err := expandRefs(v, nil); err != nil {
			r.add(src, hp, "%v", err)
			continue
		}
		if sensitiveHeader(name) && !strings.Contains(v, "${") {
			r.add(src, hp, "literal secrets are not allowed; reference an environment variable, e.g. \"Bearer ${OTLP_TOKEN}\"")
		}
	}
	for _, k := range sortedStringKeys(t.ResourceAttributes) {
		if strings.TrimSpace(k) == "" {
			r.add(src, tp.key("resource_attributes"), "a key must not be blank")
		}
	}

	// The variables are checked only where they apply, and named: a bad
	// one would otherwise fail the first export, minutes later, in a log.
	u, from := c.tracesURL()
	if env, ok := strings.CutPrefix(from, "env "); ok {
		if problem := urlProblem(u); problem != "" {
			r.add(src, tp.key("endpoint"), "unset, so the environment variable %s applies, but it %s: fix or unset %s, or set telemetry.endpoint", env, problem, env)
		}
	}
	if u != "" {
		for _, env := range []string{envOTLPHeaders, envOTLPTracesHeaders} {
			if v, ok := c.lookup(env); ok {
				if _, err := parseKeyValues(v); err != nil {
					r.add(src, tp.key("headers"), "the environment variable %s is not a list of key=value pairs: %v", env, err)
				}
			}
		}
	}
	if v, ok := c.lookup(envResourceAttributes); ok {
		if _, err := parseKeyValues(v); err != nil {
			r.add(src, tp.key("resource_attributes"), "the environment variable %s is not a list of key=value pairs: %v", envResourceAttributes, err)
		}
	}
	if from != "" {
		if v, ok := c.lookup(envTracesExporter); ok && strings.TrimSpace(v) != "" && strings.TrimSpace(v) != tracesExporterOTLP {
			r.add(src, tp.key("endpoint"), "the environment variable %s is %q: agentd exports traces with OTLP only (set it to otlp or none, or unset it)", envTracesExporter, firstPart(v))
		}
		for _, env := range []string{envOTLPProtocol, envOTLPTracesProtocol} {
			if v, ok := c.lookup(env); ok && strings.TrimSpace(v) != "" && strings.TrimSpace(v) != otlpHTTPProtobuf {
				r.add(src, tp.key("endpoint"), "the environment variable %s is %q: agentd speaks OTLP over HTTP (http/protobuf) only; point the endpoint at the collector's HTTP port (4318) and set %s=http/protobuf or unset it", env, firstPart(v), env)
			}
		}
	}
	// The SDK reads the sampler variables itself and, on a value it does
	// not know, falls back to its default without a word: check them here.
	if v, ok := c.lookup(envTracesSampler); ok && t.SampleRatio == nil && strings.TrimSpace(v) != "" {
		name := strings.TrimSpace(v)
		takesArg, known := samplers[name]
		switch {
		case !known:
			r.add(src, tp.key("sample_ratio"), "unset, so the environment variable %s applies, but %q is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio", envTracesSampler, firstPart(name))
		case takesArg:
			if a, ok := c.lookup(envTracesSamplerArg); ok {
				if f, err := strconv.ParseFloat(strings.TrimSpace(a), 64); err != nil || math.IsNaN(f) || f < 0 || f > 1 {
					r.add(src, tp.key("sample_ratio"), "unset, so %s=%s applies, but %s %q is not a number from 0 to 1", envTracesSampler, name, envTracesSamplerArg, firstPart(a))
				}
			}
		}
	}
}

// urlProblem says what is wrong with an endpoint URL, or "".
func urlProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "is not an http:// or https:// URL with a host"
	case u.User != nil:
		return "contains credentials (user:password@); send them as a header"
	}
	return ""
}
