package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/tool"
)

// TestFastPathMatchesSDK sends the same stateless requests to the fast
// path and to the SDK's path (fastcall.go) and requires the same answer:
// HTTP status and JSON-RPC response. It also requires that the calls the
// fast path should take do take it (an application/json answer; the SDK
// streams) and that the others do not.
func TestFastPathMatchesSDK(t *testing.T) {
	ts, _ := upstreamServer(t)
	h := gatewayHarness(t, ts.URL, harnessOptions{
		cfg:   config.MCPServe{Gateways: []string{"up"}, ExposeTools: true},
		tools: []tool.Tool{fakeUpstream{name: "mcp_up_plain", server: "up", text: "plain text"}, echoTool{}},
	})
	srv := h.httpServer(t)
	gw := httpClient(t, srv.URL+"/mcp/gateway/up", nil)
	waitFor(t, func() bool { return slices.Contains(toolNames(t, gw), "say-hi") })
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	call := func(id, name, args string, extra ...string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + meta + strings.Join(extra, "") + `}}`
	}
	for _, c := range []struct {
		name, path, tool, body string
		fast                   bool
	}{
		{"content blocks", "/mcp/gateway/up", "say-hi", call(`1`, "say-hi", `{"who":"bob"}`), true},
		{"tool error", "/mcp/gateway/up", "fail", call(`"two"`, "fail", `{}`), true},
		{"upstream JSON-RPC error", "/mcp/gateway/up", "reject", call(`3`, "reject", `{}`), true},
		{"tool of another source", "/mcp/gateway/up", "plain", call(`4`, "plain", `{}`), true},
		{"registry tool", "/mcp", "echo", call(`5`, "echo", `{"text":"hello"}`), true},
		{"registry tool, arguments not an object", "/mcp", "echo", call(`6`, "echo", `"text"`), true},
		{"unknown tool", "/mcp/gateway/up", "nope", call(`7`, "nope", `{}`), false},
		{"progress token", "/mcp/gateway/up", "say-hi", strings.Replace(call(`8`, "say-hi", `{"who":"al"}`), `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1), false},
		{"log level", "/mcp/gateway/up", "say-hi", strings.Replace(call(`9`, "say-hi", `{"who":"al"}`), `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"debug",`, 1), false},
		{"no capabilities", "/mcp", "echo", strings.Replace(call(`10`, "echo", `{"text":"x"}`), `"io.modelcontextprotocol/clientCapabilities":{},`, ``, 1), false},
		{"header version differs from _meta", "/mcp", "echo", strings.Replace(call(`11`, "echo", `{"text":"x"}`), `protocolVersion":"2026-07-28"`, `protocolVersion":"2025-11-25"`, 1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h.srv.sdkOnly.Store(false)
			fastStatus, fastCT, fastMsg := postStateless(t, srv.URL+c.path, c.tool, c.body)
			h.srv.sdkOnly.Store(true)
			sdkStatus, sdkCT, sdkMsg := postStateless(t, srv.URL+c.path, c.tool, c.body)
			h.srv.sdkOnly.Store(false)
			if took := fastCT == "application/json" && sdkCT != "application/json"; took != c.fast && fastStatus == http.StatusOK {
				t.Errorf("fast path taken: %v (content types %q and %q), want %v", took, fastCT, sdkCT, c.fast)
			}
			if fastStatus != sdkStatus {
				t.Errorf("status %d, the SDK's %d", fastStatus, sdkStatus)
			}
			if !reflect.DeepEqual(fastMsg, sdkMsg) {
				t.Errorf("answer\n %v\nthe SDK's\n %v", fastMsg, sdkMsg)
			}
		})
	}
}

// postStateless POSTs a 2026-07-28 request and returns the status, the
// content type and the JSON-RPC message answered, from a JSON body or
// the stream's last message event.
func postStateless(t *testing.T, url, toolName, body string) (int, string, any) {
	t.Helper()
	return post(t, url, body, map[string]string{headerProtocolVersion: statelessVersion, "Mcp-Method": "tools/call", "Mcp-Name": toolName})
}

// post POSTs body with headers and returns the status, the content type
// and the JSON-RPC message answered, from a JSON body or the stream's
// last message event.
func post(t *testing.T, url, body string, headers map[string]string) (int, string, any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	data := raw
	if ct == "text/event-stream" {
		data = nil
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
			}
		}
	}
	var msg any
	if err := json.Unmarshal(data, &msg); err != nil {
		return resp.StatusCode, ct, string(raw)
	}
	return resp.StatusCode, ct, msg
}

// TestSessionCallCancels: a client that gives up on a gateway call of its
// session (notifications/cancelled, its POST dropped) cancels the
// upstream's call, on the SDK's path and on the session fast path.
func TestSessionCallCancels(t *testing.T) {
	for _, sdkOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("sdkOnly=%v", sdkOnly), func(t *testing.T) { testSessionCallCancels(t, sdkOnly) })
	}
}

func testSessionCallCancels(t *testing.T, sdkOnly bool) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(ts.Close)
	h := gatewayHarness(t, ts.URL, harnessOptions{cfg: config.MCPServe{Gateways: []string{"up"}}})
	h.srv.sdkOnly.Store(sdkOnly)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.httpServer(t).URL + "/mcp/gateway/up"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	waitFor(t, func() bool { return slices.Contains(toolNames(t, cs), "block") })

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
		errc <- err
	}()
	<-started
	if fast := onFastPath(h.srv.gateways["up"]); fast == sdkOnly {
		t.Fatalf("the call runs on the session fast path: %v, with sdkOnly %v", fast, sdkOnly)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("call: %v, want cancelled", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream's call was not cancelled")
	}
}

// onFastPath reports whether a request in flight on e's sessions runs on
// the session fast path.
func onFastPath(e *endpoint) bool {
	e.flights.mu.Lock()
	defer e.flights.mu.Unlock()
	for _, fl := range e.flights.m {
		if fl.cancel != nil {
			return true
		}
	}
	return false
}

// FuzzFastPathMatchesSDK: whatever a stateless tools/call body says, the
// fast path answers it as the SDK does, or leaves it to the SDK.
func FuzzFastPathMatchesSDK(f *testing.F) {
	h := newHarness(f, harnessOptions{cfg: config.MCPServe{ExposeTools: true}, tools: []tool.Tool{echoTool{}}})
	url := h.httpServer(f).URL + "/mcp"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"echo","arguments":{},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":"\u0041","method":"tools/call","params":{"name":"echo","arguments":null,` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"NAME":"echo","arguments":{"text":"x"},` + meta + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":"text",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo",` + meta + `}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","name":"echo","arguments":{},` + meta + `}}`,
	} {
		f.Add(body, "echo")
	}
	f.Fuzz(func(t *testing.T, body, name string) {
		for _, c := range []byte(name) {
			if c < 0x20 || c > 0x7e {
				return // not a header value the client sends
			}
		}
		h.srv.sdkOnly.Store(false)
		fastStatus, fastCT, fastMsg := postStateless(t, url, name, body)
		h.srv.sdkOnly.Store(true)
		sdkStatus, _, sdkMsg := postStateless(t, url, name, body)
		h.srv.sdkOnly.Store(false)
		if fastCT != "application/json" {
			return
		}
		if fastStatus != sdkStatus || !reflect.DeepEqual(fastMsg, sdkMsg) {
			t.Errorf("body %s:\nfast %d %v\nSDK  %d %v", body, fastStatus, fastMsg, sdkStatus, sdkMsg)
		}
	})
}

// gatewayHarness is a harness whose MCP client manager connects to the
// Streamable HTTP server at url as the upstream "up".
func gatewayHarness(t testing.TB, url string, o harnessOptions) *harness {
	t.Helper()
	m := mcpclient.NewManager(mcpclient.Options{})
	t.Cleanup(func() { m.Close() })
	o.upstreams = m
	h := newHarness(t, o)
	h.tools.AddSource(m)
	m.OnToolsChanged(h.tools.Changed)
	m.Start(context.Background(), []config.MCPServer{{
		Name: "up", AllowPrivate: true,
		Transport: config.MCPTransport{Type: mcpclient.TransportHTTP, URL: url},
	}})
	return h
}

// TestMetaCache: a _meta seen before is the same decoded map, equal to a
// fresh decoding; what does not decode is refused and not kept; the
// cache stays bounded.
func TestMetaCache(t *testing.T) {
	var c metaCache
	raw := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`)
	e, ok := c.decode(raw)
	if !ok {
		t.Fatal("a valid _meta did not decode")
	}
	var fresh mcp.Meta
	if err := json.Unmarshal(raw, &fresh); err != nil || !reflect.DeepEqual(e.meta, fresh) {
		t.Fatalf("decoded %v, encoding/json gives %v (%v)", e.meta, fresh, err)
	}
	if want := (&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: fresh}}).ClientCapabilities(); want == nil || !reflect.DeepEqual(e.caps, want) {
		t.Fatalf("capabilities %+v, the SDK reads %+v", e.caps, want)
	}
	again, _ := c.decode(bytes.Clone(raw))
	if reflect.ValueOf(again.meta).Pointer() != reflect.ValueOf(e.meta).Pointer() || again.caps != e.caps {
		t.Error("the same _meta was decoded again instead of reused")
	}
	if _, ok := c.decode([]byte(`{"a":`)); ok {
		t.Error("a truncated _meta decoded")
	}
	for i := range 3 * metaCacheSize {
		if _, ok := c.decode(fmt.Appendf(nil, `{"n":%d}`, i)); !ok {
			t.Fatal("a valid _meta did not decode")
		}
	}
	if n := len(c.m); n > metaCacheSize {
		t.Errorf("the cache holds %d entries, more than %d", n, metaCacheSize)
	}
}
