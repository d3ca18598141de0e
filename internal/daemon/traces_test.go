package daemon

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each
// ExportTraceServiceRequest (protobuf) and keeps the spans.
type otlpReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []span
	resource map[string]string
}

// span is an exported span, flattened.
type span struct {
	traceID, spanID, parentID string
	name                      string
	kind                      tracepb.Span_SpanKind
	attrs                     map[string]string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
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
					r.spans = append(r.spans, span{
						traceID: hex.EncodeToString(sp.TraceId), spanID: hex.EncodeToString(sp.SpanId),
						parentID: hex.EncodeToString(sp.ParentSpanId), name: sp.Name, kind: sp.Kind,
						attrs: attrMap(sp.Attributes),
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

// waitSpans flushes the daemon's spans until want reports all it needs
// are there: a server span ends after its answer was sent, so the client
// can be faster than the last End.
func (r *otlpReceiver) waitSpans(t *testing.T, h *harness, want func([]span) bool) []span {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := h.d.Telemetry.ForceFlush(context.Background()); err != nil {
			t.Fatalf("flush: %v", err)
		}
		r.mu.Lock()
		got := append([]span(nil), r.spans...)
		r.mu.Unlock()
		if want(got) {
			return got
		}
		if time.Now().After(deadline) {
			for _, s := range got {
				t.Logf("span %s %s parent %s %q %v", s.traceID, s.spanID, s.parentID, s.name, s.attrs)
			}
			t.Fatal("the expected spans never arrived")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// traceparentRT sends a fixed traceparent header, as an instrumented
// client would.
type traceparentRT struct {
	tp   string
	next http.RoundTripper
}

func (t *traceparentRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Traceparent", t.tp)
	return t.next.RoundTrip(r)
}

// TestTraceAcrossMCPAgentModelUpstream: one tools/call on /mcp from a
// client in trace T (traceparent in its HTTP headers and in _meta) is one
// trace in an OTLP/HTTP collector: POST /mcp → tools/call → invoke_agent
// → chat (×2) and execute_tool → tools/call to the upstream, whose
// server saw the client span's traceparent in _meta; the model API saw
// its chat span's in its headers; no span holds the tool arguments.
func TestTraceAcrossMCPAgentModelUpstream(t *testing.T) {
	rcv := newOTLPReceiver(t)
	h := newHarness(t, fmt.Sprintf("\n[telemetry]\nendpoint = %q\nservice_name = \"agentd-test\"\n", rcv.URL), nil)
	ctx := context.Background()

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const remoteParent = "00f067aa0ba902b7"
	tp := "00-" + traceID + "-" + remoteParent + "-01"
	hc := &http.Client{Transport: &traceparentRT{tp, &bearerRT{h.key, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	runOverMCP(t, ctx, cs, mcp.Meta{"traceparent": tp})

	byName := func(spans []span, prefix string) []span {
		var out []span
		for _, s := range spans {
			if strings.HasPrefix(s.name, prefix) && s.traceID == traceID {
				out = append(out, s)
			}
		}
		return out
	}
	spans := rcv.waitSpans(t, h, func(s []span) bool {
		return len(byName(s, "tools/call echo")) == 1 && len(byName(s, "chat m")) == 2 && len(byName(s, "POST /mcp")) >= 3
	})

	one := func(prefix string) span {
		t.Helper()
		got := byName(spans, prefix)
		if len(got) != 1 {
			t.Fatalf("%d spans %q in trace %s, want 1", len(got), prefix, traceID)
		}
		return got[0]
	}
	mcpCall := one("tools/call agentd_agent_worker")
	run := one("invoke_agent worker")
	echo := one("execute_tool mcp_up_echo")
	upstream := one("tools/call echo")
	denied := one("execute_tool " + inventedTool)

	// The HTTP server span of the POST that carried the call is the MCP
	// span's parent, and a child of the client's span.
	var post span
	for _, s := range byName(spans, "POST /mcp") {
		if s.spanID == mcpCall.parentID {
			post = s
		}
	}
	if post.spanID == "" {
		t.Fatalf("the tools/call span's parent %s is no POST /mcp span", mcpCall.parentID)
	}
	checks := []struct {
		what          string
		child, parent string
	}{
		{"POST /mcp ← client", post.parentID, remoteParent},
		{"invoke_agent ← tools/call", run.parentID, mcpCall.spanID},
		{"execute_tool echo ← invoke_agent", echo.parentID, run.spanID},
		{"execute_tool denied ← invoke_agent", denied.parentID, run.spanID},
		{"upstream tools/call ← execute_tool", upstream.parentID, echo.spanID},
	}
	for _, chat := range byName(spans, "chat m") {
		checks = append(checks, struct{ what, child, parent string }{"chat ← invoke_agent", chat.parentID, run.spanID})
	}
	for _, c := range checks {
		if c.child != c.parent {
			t.Errorf("%s: parent %s, want %s", c.what, c.child, c.parent)
		}
	}

	logTree(t, spans, traceID)

	// Kinds and the conventions' attributes.
	if post.kind != tracepb.Span_SPAN_KIND_SERVER || post.attrs["http.route"] != "/mcp" || post.attrs["http.response.status_code"] != "200" {
		t.Errorf("POST /mcp span: %v %v", post.kind, post.attrs)
	}
	if mcpCall.kind != tracepb.Span_SPAN_KIND_SERVER || mcpCall.attrs["mcp.method.name"] != "tools/call" {
		t.Errorf("mcp span: %v %v", mcpCall.kind, mcpCall.attrs)
	}
	if run.attrs["gen_ai.operation.name"] != "invoke_agent" || run.attrs["gen_ai.agent.name"] != "worker" || run.attrs["agentd.run.stop_reason"] != "end_turn" {
		t.Errorf("invoke_agent span: %v", run.attrs)
	}
	chat := byName(spans, "chat m")[0]
	if chat.kind != tracepb.Span_SPAN_KIND_CLIENT || chat.attrs["gen_ai.provider.name"] != "openai" || chat.attrs["gen_ai.request.model"] != "m" || chat.attrs["gen_ai.usage.input_tokens"] == "" {
		t.Errorf("chat span: %v %v", chat.kind, chat.attrs)
	}
	if echo.attrs["agentd.tool.decision"] != "allow" || echo.attrs["agentd.tool.outcome"] != "ok" || echo.attrs["gen_ai.tool.name"] != "mcp_up_echo" {
		t.Errorf("execute_tool span: %v", echo.attrs)
	}
	if denied.attrs["agentd.tool.decision"] != "deny" || denied.attrs["agentd.tool.outcome"] != "denied" {
		t.Errorf("denied execute_tool span: %v", denied.attrs)
	}
	if upstream.kind != tracepb.Span_SPAN_KIND_CLIENT || upstream.attrs["agentd.mcp.server"] != "up" {
		t.Errorf("upstream span: %v %v", upstream.kind, upstream.attrs)
	}
	if rcv.resource["service.name"] != "agentd-test" {
		t.Errorf("resource: %v", rcv.resource)
	}
	// Content capture is off: neither the prompt nor the tool arguments
	// are on any span.
	for _, s := range spans {
		for k, v := range s.attrs {
			if strings.Contains(v, secretArg) || strings.Contains(v, "k-test") {
				t.Errorf("span %q attribute %s holds %q", s.name, k, v)
			}
		}
	}

	// The upstream MCP server saw the client span's context in _meta; the
	// echo's answer (which says so) went to the model in its second call.
	wantTP := "traceparent=00-" + traceID + "-" + upstream.spanID + "-01"
	reqs := h.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if !strings.Contains(fmt.Sprint(reqs[1].Messages), wantTP) {
		t.Errorf("the upstream did not see %s in _meta; the model got %v", wantTP, reqs[1].Messages)
	}
	// The model API saw each chat span's context in its headers.
	chats := byName(spans, "chat m")
	for i, r := range reqs {
		got := r.Header.Get("Traceparent")
		ok := false
		for _, c := range chats {
			ok = ok || got == "00-"+traceID+"-"+c.spanID+"-01"
		}
		if !ok {
			t.Errorf("model request %d: traceparent %q is no chat span's", i+1, got)
		}
	}
}

// logTree logs the spans of trace id as an indented tree (go test -v),
// the picture docs/observability.md shows.
func logTree(t *testing.T, spans []span, id string) {
	children := map[string][]span{}
	ids := map[string]bool{}
	for _, s := range spans {
		if s.traceID == id {
			ids[s.spanID] = true
		}
	}
	var roots []span
	for _, s := range spans {
		if s.traceID != id {
			continue
		}
		if ids[s.parentID] {
			children[s.parentID] = append(children[s.parentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var walk func(s span, depth int)
	walk = func(s span, depth int) {
		fmt.Fprintf(&b, "%s%s [%s]\n", strings.Repeat("  ", depth), s.name, strings.TrimPrefix(s.kind.String(), "SPAN_KIND_"))
		for _, c := range children[s.spanID] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	t.Logf("trace %s:\n%s", id, b.String())
}

// TestTraceAcrossA2A: an A2A message/send with a traceparent header is
// one trace: POST /a2a/agents/{name} → invoke_agent (the run outlives the
// request, but stays in its trace) → chat and execute_tool.
func TestTraceAcrossA2A(t *testing.T) {
	rcv := newOTLPReceiver(t)
	h := newHarness(t, fmt.Sprintf("\n[telemetry]\nendpoint = %q\n", rcv.URL), nil)
	const traceID = "5bf92f3577b34da6a3ce929d0e0e4737"
	msg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{
		"message": map[string]any{"kind": "message", "role": "user", "messageId": "m1", "parts": []any{map[string]any{"kind": "text", "text": "hi"}}},
	}}
	resp, body := h.do("POST", "/a2a/agents/worker", "", msg, http.Header{"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"}})
	if resp.StatusCode != 200 || !strings.Contains(string(body), "completed") {
		t.Fatalf("a2a: %d %s", resp.StatusCode, body)
	}
	find := func(spans []span, name string) (span, bool) {
		for _, s := range spans {
			if s.traceID == traceID && s.name == name {
				return s, true
			}
		}
		return span{}, false
	}
	spans := rcv.waitSpans(t, h, func(s []span) bool {
		_, post := find(s, "POST /a2a/agents/{name}")
		_, echo := find(s, "tools/call echo")
		return post && echo
	})
	logTree(t, spans, traceID)
	post, _ := find(spans, "POST /a2a/agents/{name}")
	run, ok := find(spans, "invoke_agent worker")
	if !ok || run.parentID != post.spanID {
		t.Fatalf("invoke_agent %+v is no child of the A2A request's span %s", run, post.spanID)
	}
	if echo, _ := find(spans, "execute_tool mcp_up_echo"); echo.parentID != run.spanID {
		t.Errorf("execute_tool's parent %s, want the run %s", echo.parentID, run.spanID)
	}
}
