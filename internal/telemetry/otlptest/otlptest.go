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
