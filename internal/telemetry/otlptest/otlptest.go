// Package otlptest is an in-process OTLP/HTTP trace receiver for tests:
// a loopback server that decodes each ExportTraceServiceRequest
// (protobuf), as a collector would, and keeps the spans, so a test can
// point agentd's exporter at it and assert on what left the process.
package otlptest

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is an exported span, flattened.
type Span struct {
	TraceID, SpanID, ParentID string // hex; ParentID "" for a root
	Name                      string
	Kind                      tracepb.Span_SpanKind
	Attrs                     map[string]string
	Start, End                time.Time
}

// Receiver is an OTLP/HTTP trace endpoint on loopback; its URL is the
// value for [telemetry] endpoint (it serves /v1/traces).
type Receiver struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []Span
	resource map[string]string
}

// New starts a receiver, closed when t ends. A request that is not a
// protobuf export to /v1/traces fails t.
func New(t testing.TB) *Receiver {
	r := &Receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("otlp receiver: %s %s %s", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(req.Body)
		var msg coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &msg); err != nil {
			t.Errorf("otlp receiver: decode: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			r.resource = attrMap(rs.GetResource().GetAttributes())
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					r.spans = append(r.spans, Span{
						TraceID: hex.EncodeToString(sp.TraceId), SpanID: hex.EncodeToString(sp.SpanId),
						ParentID: hex.EncodeToString(sp.ParentSpanId), Name: sp.Name, Kind: sp.Kind,
						Attrs: attrMap(sp.Attributes),
						Start: time.Unix(0, int64(sp.StartTimeUnixNano)), End: time.Unix(0, int64(sp.EndTimeUnixNano)),
					})
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// Spans returns a copy of the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Resource returns the attributes of the last export's resource.
func (r *Receiver) Resource() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resource
}

// Wait calls flush (the exporter's ForceFlush) until want reports the
// spans received are all it needs, and returns them; it fails t after
// 10 seconds, logging what did arrive. A server span ends after its
// answer was sent, so a client can be faster than the last End.
func (r *Receiver) Wait(t testing.TB, flush func() error, want func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := flush(); err != nil {
			t.Fatalf("flush: %v", err)
		}
		got := r.Spans()
		if want(got) {
			return got
		}
		if time.Now().After(deadline) {
			for _, s := range got {
				t.Logf("span %s %s parent %s %q %v", s.TraceID, s.SpanID, s.ParentID, s.Name, s.Attrs)
			}
			t.Fatal("the expected spans never arrived")
		}
		// Exports are asynchronous HTTP requests that ForceFlush has
		// already waited for; what is missing has not ended yet, and
		// nothing signals that it has.
		time.Sleep(20 * time.Millisecond)
	}
}

// Tree renders the spans of trace id as an indented tree, children in
// the order they started: the picture a trace viewer draws.
func Tree(spans []Span, id string) string {
	children := map[string][]Span{}
	ids := map[string]bool{}
	for _, s := range spans {
		if s.TraceID == id {
			ids[s.SpanID] = true
		}
	}
	var roots []Span
	for _, s := range spans {
		if s.TraceID != id {
			continue
		}
		if ids[s.ParentID] {
			children[s.ParentID] = append(children[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		fmt.Fprintf(&b, "%s%s [%s]\n", strings.Repeat("  ", depth), s.Name, strings.TrimPrefix(s.Kind.String(), "SPAN_KIND_"))
		for _, c := range sortByStart(children[s.SpanID]) {
			walk(c, depth+1)
		}
	}
	for _, r := range sortByStart(roots) {
		walk(r, 0)
	}
	return b.String()
}

func sortByStart(ss []Span) []Span {
	out := append([]Span(nil), ss...)
	slices.SortStableFunc(out, func(a, b Span) int { return a.Start.Compare(b.Start) })
	return out
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			out[kv.Key] = v.GetStringValue()
		default:
			out[kv.Key] = strings.Trim(fmt.Sprint(v.GetValue()), "&{}")
			if i, ok := v.GetValue().(*commonpb.AnyValue_IntValue); ok {
				out[kv.Key] = fmt.Sprint(i.IntValue)
			}
		}
	}
	return out
}

// Waterfall renders the spans of trace id as a self-contained HTML page:
// one row a span, indented under its parent, with a bar where it ran on
// the trace's time line, as trace viewers (Jaeger, Tempo) draw them. The
// docs' picture of a trace is a screenshot of it, made from a real run.
func Waterfall(spans []Span, id, title string) string {
	type row struct {
		s     Span
		depth int
	}
	var rows []row
	children := map[string][]Span{}
	ids := map[string]bool{}
	for _, s := range spans {
		if s.TraceID == id {
			ids[s.SpanID] = true
		}
	}
	var roots []Span
	var t0, t1 time.Time
	for _, s := range spans {
		if s.TraceID != id {
			continue
		}
		if t0.IsZero() || s.Start.Before(t0) {
			t0 = s.Start
		}
		if s.End.After(t1) {
			t1 = s.End
		}
		if ids[s.ParentID] {
			children[s.ParentID] = append(children[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		rows = append(rows, row{s, depth})
		for _, c := range sortByStart(children[s.SpanID]) {
			walk(c, depth+1)
		}
	}
	for _, r := range sortByStart(roots) {
		walk(r, 0)
	}
	total := t1.Sub(t0)
	if total <= 0 {
		total = time.Millisecond
	}
	const (
		labelW, barW, rowH = 430, 560, 26
		width              = labelW + barW + 110
	)
	colors := map[tracepb.Span_SpanKind]string{
		tracepb.Span_SPAN_KIND_SERVER:   "#4f7cd6",
		tracepb.Span_SPAN_KIND_CLIENT:   "#2f9e6e",
		tracepb.Span_SPAN_KIND_INTERNAL: "#c98a1b",
	}
	height := (len(rows)+1)*rowH + 12
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html><head><meta charset="utf-8"><title>%s</title>
<style>body{margin:0;background:#fff;font:13px -apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#222}
h1{font-size:15px;margin:12px 16px 4px}p{margin:0 16px 8px;color:#555}text{font:12px -apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}</style></head>
<body><h1>%s</h1><p>trace %s · %d spans · %s · <span style="color:%s">■</span> server <span style="color:%s">■</span> client <span style="color:%s">■</span> internal</p>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">`,
		htmlEscape(title), htmlEscape(title), id, len(rows), total.Round(time.Microsecond*10),
		colors[tracepb.Span_SPAN_KIND_SERVER], colors[tracepb.Span_SPAN_KIND_CLIENT], colors[tracepb.Span_SPAN_KIND_INTERNAL], width, height)
	// The time axis.
	for i := 0; i <= 4; i++ {
		x := labelW + barW*i/4
		fmt.Fprintf(&b, `<line x1="%d" y1="0" x2="%d" y2="%d" stroke="#e4e4e4"/><text x="%d" y="14" fill="#888" text-anchor="middle">%s</text>`,
			x, x, height, x, (total * time.Duration(i) / 4).Round(time.Microsecond*10))
	}
	for i, r := range rows {
		y := (i+1)*rowH + 6
		if i%2 == 0 {
			fmt.Fprintf(&b, `<rect x="0" y="%d" width="%d" height="%d" fill="#f7f8fa"/>`, y-4, width, rowH)
		}
		// Which upstream a client span went to, as viewers show it.
		where := ""
		if srv := r.s.Attrs["agentd.mcp.server"]; srv != "" {
			where = " · " + srv
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s<tspan fill="#888">%s</tspan></text>`, 12+r.depth*16, y+13, htmlEscape(r.s.Name), htmlEscape(where))
		x := labelW + int(float64(barW)*float64(r.s.Start.Sub(t0))/float64(total))
		w := max(int(float64(barW)*float64(r.s.End.Sub(r.s.Start))/float64(total)), 2)
		color := colors[r.s.Kind]
		if color == "" {
			color = "#888"
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="14" rx="2" fill="%s"/>`, x, y+2, w, color)
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">%s</text>`, x+w+6, y+13, r.s.End.Sub(r.s.Start).Round(time.Microsecond*10))
	}
	b.WriteString("</svg></body></html>\n")
	return b.String()
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
