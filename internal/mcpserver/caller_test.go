//lint:file-ignore SA1019 sampling and logging are relayed on purpose

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/mcpclient"
)

// askingServer is an upstream whose tools and prompt ask their client for
// something while they run: ask and sample as requests of the server's
// own (initialize-era links only), ask_input and the prompt ask_prompt as
// input requests in results (2026-07-28), log as a log message.
func askingServer(t *testing.T, stateless bool) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"}}
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema})
		if err != nil {
			return nil, nil, err
		}
		return textResult(fmt.Sprintf("%s %v", res.Action, res.Content["name"])), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, nil, err
		}
		return textResult("model said " + res.Content.(*mcp.TextContent).Text), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return textResult("roots " + strings.Join(uris, " ")), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Data: "upstream says hello"})
		return textResult("logged"), nil, nil
	})
	answered := func(ans mcp.InputResponseMap) (string, bool) {
		e, ok := ans["name"].(*mcp.ElicitResult)
		if !ok {
			return "", false
		}
		return fmt.Sprintf("%s %v", e.Action, e.Content["name"]), true
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "ask_input"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if s, ok := answered(req.Params.InputResponses); ok {
			return textResult(s + " state=" + req.Params.RequestState), nil, nil
		}
		if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
			return textResult("no input asked"), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema}}, RequestState: "s1"}, nil, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "ask_prompt"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if s, ok := answered(req.Params.InputResponses); ok {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: s}}}}, nil
		}
		return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "Your name?", RequestedSchema: schema}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// downstreamClient is a client of a gateway: it answers elicitation with
// the name "ann" and sampling with "hello" when it offers them, and keeps
// the log messages it gets.
type downstreamClient struct {
	cs   *mcp.ClientSession
	mu   sync.Mutex
	logs []string
	asks int
}

func (d *downstreamClient) logged() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.logs)
}

// connectDownstream connects to url speaking era ("2025-11-25" or
// "2026-07-28"), offering elicitation and sampling when offer is set.
func connectDownstream(t *testing.T, url, era string, offer bool) *downstreamClient {
	t.Helper()
	d := &downstreamClient{}
	opts := &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			d.mu.Lock()
			d.logs = append(d.logs, fmt.Sprint(req.Params.Data))
			d.mu.Unlock()
		},
	}
	if offer {
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			d.mu.Lock()
			d.asks++
			d.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ann"}}, nil
		}
		opts.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hello"}}, nil
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, opts)
	c.AddRoots(&mcp.Root{URI: "file:///downstream", Name: "workspace"})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != era {
		t.Fatalf("the downstream speaks %s, want %s", got, era)
	}
	if era < statelessVersion {
		if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
	}
	d.cs = cs
	return d
}

func (d *downstreamClient) call(t *testing.T, name string) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}
	// 2026-07-28 asks for log messages per request.
	p.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
	return d.cs.CallTool(ctx, p)
}

// TestGatewayRelaysToCaller serves an initialize-era upstream (gateway
// "legacy") and a 2026-07-28 one ("modern") through the real MCP client
// manager, and checks, for downstream clients of both eras, that what the
// upstream asks of its client during a call reaches the client that made
// it, or is refused with a reason when it cannot.
func TestGatewayRelaysToCaller(t *testing.T) {
	// The upstreams first: cleanups run in reverse, and an upstream's
	// Close waits for the manager's connections to end.
	legacyURL, modernURL := askingServer(t, false), askingServer(t, true)
	m := mcpclient.NewManager(mcpclient.Options{})
	t.Cleanup(func() { m.Close() })
	h := newHarness(t, harnessOptions{cfg: config.MCPServe{Gateways: []string{"legacy", "modern"}}, upstreams: m})
	h.tools.AddSource(m)
	m.OnToolsChanged(h.tools.Changed)
	m.Start(context.Background(), []config.MCPServer{
		{Name: "legacy", AllowPrivate: true, Transport: config.MCPTransport{Type: mcpclient.TransportHTTP, URL: legacyURL}},
		{Name: "modern", AllowPrivate: true, Transport: config.MCPTransport{Type: mcpclient.TransportHTTP, URL: modernURL}},
	})
	base := h.httpServer(t).URL + "/mcp/gateway/"
	for _, gw := range []string{"legacy", "modern"} {
		probe := httpClient(t, base+gw, nil)
		waitFor(t, func() bool { return slices.Contains(toolNames(t, probe), "ask_input") })
	}
	for _, st := range m.Status() {
		want := map[string]string{"legacy": "2025-11-25", "modern": "2026-07-28"}[st.Name]
		if st.ProtocolVersion != want {
			t.Fatalf("the link to %s speaks %s, want %s", st.Name, st.ProtocolVersion, want)
		}
	}
	const oldEra, newEra = "2025-11-25", "2026-07-28"

	calls := []struct {
		name    string
		gateway string
		era     string
		offer   bool
		tool    string
		want    string // the result text, or a part of the tool error
		isErr   bool
	}{
		{"session asks a session", "legacy", oldEra, true, "ask", "accept ann", false},
		{"session samples a session", "legacy", oldEra, true, "sample", "model said hello", false},
		{"session asks a client that offers nothing", "legacy", oldEra, false, "ask", "elicitation/create is not supported by the calling client: the calling client does not offer it", true},
		// A session's roots are asked through the SDK's session.
		{"session lists a session's roots", "legacy", oldEra, false, "roots", "roots file:///downstream", false},
		{"session lists the roots of a session that offers more", "legacy", oldEra, true, "roots", "roots file:///downstream", false},
		// The gateway parks the call and asks in a result (mcpclient's
		// parked calls); the go-sdk client answers and calls again.
		{"session asks a 2026-07-28 client in results", "legacy", newEra, true, "ask", "accept ann", false},
		{"session samples a 2026-07-28 client in results", "legacy", newEra, true, "sample", "model said hello", false},
		// Its own session shows the upstream exactly the client's
		// capabilities, so the upstream's SDK refuses to ask.
		{"a 2026-07-28 client without elicitation is not asked", "legacy", newEra, false, "ask", "client does not support elicitation", true},
		{"input requests answered by a session", "modern", oldEra, true, "ask_input", "accept ann state=s1", false},
		{"input requests passed to a 2026-07-28 client", "modern", newEra, true, "ask_input", "accept ann state=s1", false},
		{"the client's capabilities reach the upstream", "modern", newEra, false, "ask_input", "no input asked", false},
		{"a session's capabilities reach the upstream", "modern", oldEra, false, "ask_input", "no input asked", false},
	}
	for _, tt := range calls {
		t.Run(tt.name, func(t *testing.T) {
			d := connectDownstream(t, base+tt.gateway, tt.era, tt.offer)
			res, err := d.call(t, tt.tool)
			if err != nil || res.IsError != tt.isErr || !strings.Contains(textOf(t, res), tt.want) {
				t.Fatalf("result %+v (%q), err %v; want %q (error %v)", res, textOf(t, res), err, tt.want, tt.isErr)
			}
		})
	}

	// The same asks without a log level in _meta: the stateless fast
	// path (fastcall.go) serves these calls, and must hand the upstream
	// the client's capabilities as the SDK's path does.
	for _, tt := range []struct {
		name  string
		offer bool
		want  string
		isErr bool
	}{
		{"fast path: session asks a 2026-07-28 client in results", true, "accept ann", false},
		{"fast path: a 2026-07-28 client without elicitation is not asked", false, "client does not support elicitation", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := connectDownstream(t, base+"legacy", newEra, tt.offer)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := d.cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			if err != nil || res.IsError != tt.isErr || !strings.Contains(textOf(t, res), tt.want) {
				t.Fatalf("result %+v (%q), err %v; want %q (error %v)", res, textOf(t, res), err, tt.want, tt.isErr)
			}
		})
	}

	for _, gw := range []string{"legacy", "modern"} {
		for _, era := range []string{oldEra, newEra} {
			t.Run("log messages from "+gw+" to "+era, func(t *testing.T) {
				d := connectDownstream(t, base+gw, era, false)
				if res, err := d.call(t, "log"); err != nil || textOf(t, res) != "logged" {
					t.Fatalf("log: %+v, %v", res, err)
				}
				// The downstream SDK hands notifications to its handler
				// on a goroutine of its own: wait for it.
				waitFor(t, func() bool { return slices.Equal(d.logged(), []string{"upstream says hello"}) })
			})
		}
	}

	for _, era := range []string{oldEra, newEra} {
		t.Run("prompt asks a "+era+" client", func(t *testing.T) {
			d := connectDownstream(t, base+"modern", era, true)
			res, err := d.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "ask_prompt"})
			if err != nil || len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != "accept ann" {
				t.Fatalf("prompt: %+v, %v", res, err)
			}
		})
	}

	t.Run("the upstream's own error passes unchanged", func(t *testing.T) {
		// (A 2026-07-28 go-sdk client reads this error's HTTP 400 as a
		// transport failure, from the SDK's own servers too.)
		d := connectDownstream(t, base+"modern", oldEra, false)
		_, err := d.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "test://doc"})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeResourceNotFound || rpcErr.Message != "Resource not found" || string(rpcErr.Data) != `{"uri":"test://doc"}` {
			t.Fatalf("read: %v, want the upstream's resource-not-found with its data", err)
		}
	})
}
