package mcpserver

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// TestParentOf: an MCP request's span parent is the trace context of its
// _meta (stdio, or an HTTP request in another trace), else its HTTP
// request's; when both name one trace the HTTP request's span wins.
func TestParentOf(t *testing.T) {
	const (
		metaTP  = "00-11111111111111111111111111111111-aaaaaaaaaaaaaaaa-01"
		httpTP  = "00-22222222222222222222222222222222-bbbbbbbbbbbbbbbb-01"
		childTP = "00-11111111111111111111111111111111-cccccccccccccccc-01"
	)
	req := func(meta, header string) mcp.Request {
		r := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x"}}
		if meta != "" {
			r.Params.Meta = mcp.Meta{"traceparent": meta}
		}
		if header != "" {
			r.Extra = &mcp.RequestExtra{Header: http.Header{"Traceparent": {header}}}
		}
		return r
	}
	tests := []struct {
		name, meta, header, wantSpan string
	}{
		{"meta only (stdio)", metaTP, "", "aaaaaaaaaaaaaaaa"},
		{"header only", "", httpTP, "bbbbbbbbbbbbbbbb"},
		{"other traces: meta wins", metaTP, httpTP, "aaaaaaaaaaaaaaaa"},
		{"same trace: the HTTP span wins", metaTP, childTP, "cccccccccccccccc"},
		{"neither", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := trace.SpanContextFromContext(parentOf(context.Background(), req(tt.meta, tt.header)))
			got := ""
			if sc.IsValid() {
				got = sc.SpanID().String()
			}
			if got != tt.wantSpan {
				t.Errorf("parent span %q, want %q", got, tt.wantSpan)
			}
		})
	}
	// Requests without params have a typed nil: no panic.
	if sc := trace.SpanContextFromContext(parentOf(context.Background(), &mcp.ListToolsRequest{})); sc.IsValid() {
		t.Error("a span context from nothing")
	}
}
