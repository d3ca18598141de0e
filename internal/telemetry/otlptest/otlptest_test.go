package otlptest

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TestReceiverDecodesExport sends spans through the real OTLP/HTTP
// exporter and checks what the receiver decoded: ids, parents, kinds,
// attributes, and the tree and waterfall drawn from them.
func TestReceiverDecodesExport(t *testing.T) {
	r := New(t)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(r.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := tp.Tracer("test")
	// Children are drawn in start order, whatever order they end in.
	t0 := time.Now()
	ctx, root := tr.Start(ctx, "root <op>", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(t0))
	_, second := tr.Start(ctx, "second", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(t0.Add(time.Millisecond)),
		trace.WithAttributes(attribute.String("agentd.mcp.server", "up"), attribute.Int("n", 7)))
	_, third := tr.Start(ctx, "third", trace.WithTimestamp(t0.Add(2*time.Millisecond)))
	third.End(trace.WithTimestamp(t0.Add(3 * time.Millisecond)))
	second.End(trace.WithTimestamp(t0.Add(4 * time.Millisecond)))
	root.End(trace.WithTimestamp(t0.Add(5 * time.Millisecond)))
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := r.Wait(t, func() error { return nil }, func(s []Span) bool { return len(s) == 3 })
	id := root.SpanContext().TraceID().String()
	byName := map[string]Span{}
	for _, s := range spans {
		if s.TraceID != id {
			t.Errorf("span %q in trace %s, want %s", s.Name, s.TraceID, id)
		}
		byName[s.Name] = s
	}
	if byName["second"].ParentID != root.SpanContext().SpanID().String() || byName["root <op>"].ParentID != "" {
		t.Errorf("parents: %+v", byName)
	}
	if a := byName["second"].Attrs; a["agentd.mcp.server"] != "up" || a["n"] != "7" {
		t.Errorf("attributes: %v", a)
	}
	if d := byName["root <op>"].End.Sub(byName["root <op>"].Start); d != 5*time.Millisecond {
		t.Errorf("root lasted %v, want 5ms", d)
	}
	if got, want := Tree(spans, id), "root <op> [SERVER]\n  second [CLIENT]\n  third [INTERNAL]\n"; got != want {
		t.Errorf("Tree:\n%s\nwant:\n%s", got, want)
	}
	page := Waterfall(spans, id, "a <title>")
	for _, want := range []string{"root &lt;op&gt;", "a &lt;title&gt;", ">second<", " · up<", ">third<", "3 spans · 5ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("Waterfall lacks %q", want)
		}
	}
}
