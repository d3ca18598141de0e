package daemon

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/agentd/agentd/internal/telemetry/otlptest"
)

// span is an exported span as the in-process OTLP receiver decoded it.
type span = otlptest.Span

// newOTLPReceiver starts an OTLP/HTTP receiver for the daemon's spans.
func newOTLPReceiver(t *testing.T) *otlptest.Receiver { return otlptest.New(t) }

// waitSpans flushes the daemon's spans until want reports all it needs
// are there.
func waitSpans(t *testing.T, rcv *otlptest.Receiver, h *harness, want func([]span) bool) []span {
	t.Helper()
	return rcv.Wait(t, func() error { return h.d.Telemetry.ForceFlush(context.Background()) }, want)
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
			if strings.HasPrefix(s.Name, prefix) && s.TraceID == traceID {
				out = append(out, s)
			}
		}
		return out
	}
	spans := waitSpans(t, rcv, h, func(s []span) bool {
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
		if s.SpanID == mcpCall.ParentID {
			post = s
		}
	}
	if post.SpanID == "" {
		t.Fatalf("the tools/call span's parent %s is no POST /mcp span", mcpCall.ParentID)
	}
	checks := []struct {
		what          string
		child, parent string
	}{
		{"POST /mcp ← client", post.ParentID, remoteParent},
		{"invoke_agent ← tools/call", run.ParentID, mcpCall.SpanID},
		{"execute_tool echo ← invoke_agent", echo.ParentID, run.SpanID},
		{"execute_tool denied ← invoke_agent", denied.ParentID, run.SpanID},
		{"upstream tools/call ← execute_tool", upstream.ParentID, echo.SpanID},
	}
	for _, chat := range byName(spans, "chat m") {
		checks = append(checks, struct{ what, child, parent string }{"chat ← invoke_agent", chat.ParentID, run.SpanID})
	}
	for _, c := range checks {
		if c.child != c.parent {
			t.Errorf("%s: parent %s, want %s", c.what, c.child, c.parent)
		}
	}

	logTree(t, spans, traceID)

	// Kinds and the conventions' attributes.
	if post.Kind != tracepb.Span_SPAN_KIND_SERVER || post.Attrs["http.route"] != "/mcp" || post.Attrs["http.response.status_code"] != "200" {
		t.Errorf("POST /mcp span: %v %v", post.Kind, post.Attrs)
	}
	if mcpCall.Kind != tracepb.Span_SPAN_KIND_SERVER || mcpCall.Attrs["mcp.method.name"] != "tools/call" {
		t.Errorf("mcp span: %v %v", mcpCall.Kind, mcpCall.Attrs)
	}
	if run.Attrs["gen_ai.operation.name"] != "invoke_agent" || run.Attrs["gen_ai.agent.name"] != "worker" || run.Attrs["agentd.run.stop_reason"] != "end_turn" {
		t.Errorf("invoke_agent span: %v", run.Attrs)
	}
	chat := byName(spans, "chat m")[0]
	if chat.Kind != tracepb.Span_SPAN_KIND_CLIENT || chat.Attrs["gen_ai.provider.name"] != "openai" || chat.Attrs["gen_ai.request.model"] != "m" || chat.Attrs["gen_ai.usage.input_tokens"] == "" {
		t.Errorf("chat span: %v %v", chat.Kind, chat.Attrs)
	}
	if echo.Attrs["agentd.tool.decision"] != "allow" || echo.Attrs["agentd.tool.outcome"] != "ok" || echo.Attrs["gen_ai.tool.name"] != "mcp_up_echo" {
		t.Errorf("execute_tool span: %v", echo.Attrs)
	}
	if denied.Attrs["agentd.tool.decision"] != "deny" || denied.Attrs["agentd.tool.outcome"] != "denied" {
		t.Errorf("denied execute_tool span: %v", denied.Attrs)
	}
	if upstream.Kind != tracepb.Span_SPAN_KIND_CLIENT || upstream.Attrs["agentd.mcp.server"] != "up" {
		t.Errorf("upstream span: %v %v", upstream.Kind, upstream.Attrs)
	}
	if rcv.Resource()["service.name"] != "agentd-test" {
		t.Errorf("resource: %v", rcv.Resource())
	}
	// Content capture is off: neither the prompt nor the tool arguments
	// are on any span.
	for _, s := range spans {
		for k, v := range s.Attrs {
			if strings.Contains(v, secretArg) || strings.Contains(v, "k-test") {
				t.Errorf("span %q attribute %s holds %q", s.Name, k, v)
			}
		}
	}

	// The upstream MCP server saw the client span's context in _meta; the
	// echo's answer (which says so) went to the model in its second call.
	wantTP := "traceparent=00-" + traceID + "-" + upstream.SpanID + "-01"
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
			ok = ok || got == "00-"+traceID+"-"+c.SpanID+"-01"
		}
		if !ok {
			t.Errorf("model request %d: traceparent %q is no chat span's", i+1, got)
		}
	}
}

// logTree logs the spans of trace id as an indented tree (go test -v),
// the picture docs/observability.md shows.
func logTree(t *testing.T, spans []span, id string) {
	t.Logf("trace %s:\n%s", id, otlptest.Tree(spans, id))
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
			if s.TraceID == traceID && s.Name == name {
				return s, true
			}
		}
		return span{}, false
	}
	spans := waitSpans(t, rcv, h, func(s []span) bool {
		_, post := find(s, "POST /a2a/agents/{name}")
		_, echo := find(s, "tools/call echo")
		return post && echo
	})
	logTree(t, spans, traceID)
	post, _ := find(spans, "POST /a2a/agents/{name}")
	run, ok := find(spans, "invoke_agent worker")
	if !ok || run.ParentID != post.SpanID {
		t.Fatalf("invoke_agent %+v is no child of the A2A request's span %s", run, post.SpanID)
	}
	if echo, _ := find(spans, "execute_tool mcp_up_echo"); echo.ParentID != run.SpanID {
		t.Errorf("execute_tool's parent %s, want the run %s", echo.ParentID, run.SpanID)
	}
}
