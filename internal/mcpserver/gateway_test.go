package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// upstreamServer is an upstream MCP server on a loopback test server, with
// tools that answer with several content blocks, with a tool error and
// with a JSON-RPC error, a resource and a prompt.
func upstreamServer(t testing.TB) (*httptest.Server, *mcp.Server) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "say-hi", InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Who string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "hi " + a.Who},
				&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}, IsError: true}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "reject", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such thing"}
		})
	srv.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "the doc"}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who"}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "greet " + req.Params.Arguments["who"]}}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts, srv
}

// TestGateway serves an upstream through the real MCP client manager, as
// the daemon does.
func TestGateway(t *testing.T) {
	ts, upstream := upstreamServer(t)
	h := gatewayHarness(t, ts.URL, harnessOptions{
		cfg:   config.MCPServe{Gateways: []string{"up"}},
		tools: []tool.Tool{fakeUpstream{name: "mcp_up_plain", server: "up", text: "plain text"}},
	})

	srv := h.httpServer(t)
	gw := httpClient(t, srv.URL+"/mcp/gateway/up", nil)
	ctx := context.Background()
	want := []string{"fail", "plain", "reject", "say-hi"}
	waitFor(t, func() bool {
		names := toolNames(t, gw)
		slices.Sort(names)
		return slices.Equal(names, want)
	})

	// The upstream's content blocks pass unchanged, not rendered as text.
	res, err := gw.CallTool(ctx, &mcp.CallToolParams{Name: "say-hi", Arguments: map[string]any{"who": "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 {
		t.Fatalf("content %d blocks, want the upstream's 2", len(res.Content))
	}
	if txt, ok := res.Content[0].(*mcp.TextContent); !ok || txt.Text != "hi bob" {
		t.Errorf("first block %#v, want the upstream text unwrapped", res.Content[0])
	}
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Errorf("second block %#v, want the image", res.Content[1])
	}
	// A tool error stays a tool error, a JSON-RPC error a JSON-RPC error.
	res, err = gw.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}})
	if err != nil || !res.IsError || textOf(t, res) != "it broke" {
		t.Fatalf("fail: %v %+v", err, res)
	}
	var rpcErr *jsonrpc.Error
	if _, err = gw.CallTool(ctx, &mcp.CallToolParams{Name: "reject", Arguments: map[string]any{}}); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "no such thing") {
		t.Fatalf("reject: %v, want the upstream's -32602", err)
	}
	// A tool of another source is served as the text it renders.
	res, err = gw.CallTool(ctx, &mcp.CallToolParams{Name: "plain", Arguments: map[string]any{}})
	if err != nil || textOf(t, res) != "plain text" {
		t.Fatalf("plain: %v %+v", err, res)
	}

	rl, err := gw.ListResources(ctx, nil)
	if err != nil || len(rl.Resources) != 1 || rl.Resources[0].URI != "test://doc" {
		t.Fatalf("resources: %v %+v", err, rl)
	}
	rr, err := gw.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://doc"})
	if err != nil || rr.Contents[0].Text != "the doc" {
		t.Fatalf("read: %v %+v", err, rr)
	}
	gp, err := gw.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "ann"}})
	if err != nil || gp.Messages[0].Content.(*mcp.TextContent).Text != "greet ann" {
		t.Fatalf("prompt: %v %+v", err, gp)
	}

	// Calls were audited under the gateway's name.
	recs, err := h.db.QueryAudit(ctx, auditFilter("gateway:up"))
	if err != nil || len(recs) != 4 {
		t.Fatalf("audit: %d records, %v; want 4", len(recs), err)
	}
	// The main endpoint does not serve upstream tools without expose_tools.
	main := httpClient(t, srv.URL+"/mcp", nil)
	if names := toolNames(t, main); slices.Contains(names, "say-hi") || slices.Contains(names, "mcp_up_say_hi") {
		t.Fatalf("main endpoint tools %v", names)
	}
	resp, err := http.Post(srv.URL+"/mcp/gateway/nope", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown gateway: %d", resp.StatusCode)
	}

	// A tool the upstream adds (tools/list_changed) is served at once.
	upstream.AddTool(&mcp.Tool{Name: "later", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
		})
	waitFor(t, func() bool { return slices.Contains(toolNames(t, gw), "later") })
}
