// Package telemetry owns agentd's OpenTelemetry providers: the meter
// provider behind the Prometheus exposition at GET /metrics (with Go
// runtime and process metrics), the tracer provider exporting spans over
// OTLP/HTTP, and the W3C trace-context helpers the edges use to take and
// pass on traceparent (HTTP headers, MCP _meta).
//
// Nothing here is global: the composition root builds one Telemetry from
// the resolved config and hands its providers to the components it
// constructs. A disabled signal yields a nil provider, which every
// component takes to mean "record nothing", so the hot paths pay no more
// than a nil check.
//
// Metrics are instrumented once, through the OTel metric API, and shown in
// Prometheus text format by OTel's Prometheus exporter (which registers
// into a private client_golang registry, beside client_golang's Go and
// process collectors). That keeps one instrumentation vocabulary for
// metrics and traces, lets the same instruments later go out over OTLP
// without touching the call sites, and gives semantic-convention names
// (gen_ai.client.token.usage → gen_ai_client_token_usage) the translation
// the OTel specification defines instead of names of our own making.
package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/config"
)

// Scope is the instrumentation scope every agentd meter and tracer uses.
const Scope = "github.com/agentd/agentd"

// Options complete the settings with what the config does not hold.
type Options struct {
	// Version is service.version.
	Version string
	Logger  *slog.Logger
	// SpanProcessor, if set, replaces the batching OTLP export (tests use
	// a synchronous one). TracesURL must still be set for tracing to be on.
	SpanProcessor sdktrace.SpanProcessor
}

// Telemetry is the daemon's set of providers.
type Telemetry struct {
	meter    *sdkmetric.MeterProvider // nil when metrics are off
	tracer   *sdktrace.TracerProvider // nil when tracing is off
	registry *prometheus.Registry
	handler  http.Handler
	capture  bool
	log      *slog.Logger
	instance string // service.instance.id
}

// New builds the providers s asks for. Nothing is exported until a span
// ends or /metrics is scraped; an unreachable collector only logs.
func New(ctx context.Context, s config.TelemetrySettings, opts Options) (*Telemetry, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Telemetry{capture: s.CaptureContent, log: log, instance: instanceID(s)}
	res, err := newResource(ctx, s, opts.Version, t.instance)
	if err != nil {
		return nil, err
	}

	if s.Metrics {
		t.registry = prometheus.NewRegistry()
		t.registry.MustRegister(
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		)
		exp, err := otelprom.New(
			otelprom.WithRegisterer(t.registry),
			// Prometheus-style names (units and _total suffixes,
			// underscores), whatever a scraper negotiates, so dashboards
			// and alerts written against them keep working.
			otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
			// One scope: its labels on every series would say nothing.
			otelprom.WithoutScopeInfo(),
		)
		if err != nil {
			return nil, fmt.Errorf("prometheus exporter: %w", err)
		}
		t.meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res))
		t.handler = promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{
			ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelWarn),
			ErrorHandling: promhttp.ContinueOnError,
		})
	}

	if s.TracesURL != "" {
		sp := opts.SpanProcessor
		if sp == nil {
			// The exporter reads the rest of OTEL_EXPORTER_OTLP_* itself
			// (timeout, default 10 s; compression; certificates).
			exp, err := otlptracehttp.New(ctx,
				otlptracehttp.WithEndpointURL(s.TracesURL),
				otlptracehttp.WithHeaders(s.Headers),
			)
			if err != nil {
				return nil, fmt.Errorf("otlp trace exporter for %s: %w", s.TracesFrom, err)
			}
			sp = sdktrace.NewBatchSpanProcessor(exp)
		}
		tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSpanProcessor(sp)}
		if s.SampleRatioSet {
			tpOpts = append(tpOpts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(s.SampleRatio))))
		}
		// Without telemetry.sample_ratio the SDK picks the sampler from
		// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG itself (config
		// has checked them), and the span limits from OTEL_SPAN_*; the
		// batch processor reads OTEL_BSP_*.
		t.tracer = sdktrace.NewTracerProvider(tpOpts...)
		log.Info("exporting traces over OTLP/HTTP", "from", s.TracesFrom, "sampler", s.Sampler, "service.instance.id", t.instance)
	}
	return t, nil
}

// newResource describes this process: the SDK's own reading of
// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (resource.WithFromEnv)
// and its telemetry.sdk.* attributes, then the settings over them (the
// same variables as config resolved them, with the file's keys winning),
// service.version and service.instance.id.
func newResource(ctx context.Context, s config.TelemetrySettings, version, instance string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{
		semconv.ServiceName(s.ServiceName),
		semconv.ServiceInstanceID(instance),
	}
	if version != "" {
		attrs = append(attrs, semconv.ServiceVersion(version))
	}
	for k, v := range s.ResourceAttributes {
		switch k {
		case string(semconv.ServiceNameKey), string(semconv.ServiceInstanceIDKey):
			continue // decided above
		}
		attrs = append(attrs, attribute.String(k, v))
	}
	res, err := resource.New(ctx,
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(attrs...),
	)
	if errors.Is(err, resource.ErrSchemaURLConflict) {
		// The SDK's detectors speak another version of the conventions
		// than ours; the attributes are merged all the same.
		err = nil
	}
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES: config reports it at
		// load, with the variable's name.
		return nil, fmt.Errorf("resource: %w", err)
	}
	return res, nil
}

// instanceID is service.instance.id: the one the settings name
// (telemetry.resource_attributes or OTEL_RESOURCE_ATTRIBUTES), else a
// random UUID, new at each start, as the conventions recommend: replicas
// on one host, or one pod's restarts, are told apart.
func instanceID(s config.TelemetrySettings) string {
	if id := s.ResourceAttributes[string(semconv.ServiceInstanceIDKey)]; id != "" {
		return id
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Disabled returns a Telemetry with every signal off. It still has an
// instance id, for the logs.
func Disabled() *Telemetry {
	return &Telemetry{log: slog.New(slog.DiscardHandler), instance: instanceID(config.TelemetrySettings{})}
}

// InstanceID is service.instance.id, which every span and metric carry
// in their resource (target_info on /metrics); the daemon's logger adds
// it to every record.
func (t *Telemetry) InstanceID() string {
	if t == nil {
		return ""
	}
	return t.instance
}

// MeterProvider returns the meter provider, or nil when metrics are off.
func (t *Telemetry) MeterProvider() metric.MeterProvider {
	if t == nil || t.meter == nil {
		return nil
	}
	return t.meter
}

// TracerProvider returns the tracer provider, or nil when tracing is off.
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if t == nil || t.tracer == nil {
		return nil
	}
	return t.tracer
}

// CaptureContent reports whether prompts, completions and tool arguments
// may go on spans.
func (t *Telemetry) CaptureContent() bool { return t != nil && t.capture && t.tracer != nil }

// MetricsHandler serves the Prometheus exposition; nil when metrics are
// off.
func (t *Telemetry) MetricsHandler() http.Handler {
	if t == nil {
		return nil
	}
	return t.handler
}

// ForceFlush exports the spans ended so far.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t == nil || t.tracer == nil {
		return nil
	}
	return t.tracer.ForceFlush(ctx)
}

// Shutdown flushes and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tracer != nil {
		if err := t.tracer.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down tracing: %w", err))
		}
	}
	if t.meter != nil {
		if err := t.meter.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}
