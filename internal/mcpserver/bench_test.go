package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/tool"
)

// BenchmarkToolCall compares a built-in tool called through /mcp (router,
// size cap, the runner pipeline with its SQLite audit record) with the same
// tool on a bare go-sdk server, both over Streamable HTTP on loopback with
// one client. The target is agentd within 1.5x of bare.
func BenchmarkToolCall(b *testing.B) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		b.Run("bare/"+era, func(b *testing.B) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
			srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: echoTool{}.Spec().InputSchema},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					var a struct{ Text string }
					if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
						return nil, err
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
				})
			stateless := era >= statelessVersion
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
			ts := httptest.NewServer(h)
			defer ts.Close()
			benchCalls(b, ts.URL, era)
		})
		b.Run("agentd/"+era, func(b *testing.B) {
			h := newHarness(b, harnessOptions{cfg: config.MCPServe{ExposeTools: true}, tools: []tool.Tool{plainEcho{}}, asyncAudit: true})
			ts := h.httpServer(b)
			benchCalls(b, ts.URL+"/mcp", era)
		})
	}
}

// BenchmarkToolCallTelemetry is the gateway path of BenchmarkToolCall
// (agentd, 2026-07-28) with telemetry off, with metrics on (the SDK meter
// with a reader, as /metrics has), and with tracing on and every span
// sampled (an in-memory exporter): what observability costs a call.
func BenchmarkToolCallTelemetry(b *testing.B) {
	for _, mode := range []string{"off", "metrics", "traces"} {
		b.Run(mode, func(b *testing.B) {
			o := harnessOptions{cfg: config.MCPServe{ExposeTools: true}, tools: []tool.Tool{plainEcho{}}}
			switch mode {
			case "metrics":
				o.meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			case "traces":
				o.tracer = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
			}
			h := newHarness(b, o)
			benchCalls(b, h.httpServer(b).URL+"/mcp", "2026-07-28")
		})
	}
}

func benchCalls(b *testing.B, url, era string) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	done := cpuPerOp(b)
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
	done()
}

// cpuPerOp reports the process's CPU time (user + system: client,
// daemon and upstream alike, all in this process) per operation from now
// to the returned func's call, as cpu-ns/op. On a shared machine the wall
// time per op mostly measures the neighbours; the CPU a call costs does
// not.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// plainEcho is echoTool without progress, like most built-ins.
type plainEcho struct{ echoTool }

func (plainEcho) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c.Args, &a); err != nil {
		return tool.Result{Content: "bad args", IsError: true}, nil
	}
	return tool.Result{Content: a.Text}, nil
}

// BenchmarkGateway calls an upstream tool through /mcp/gateway/up (the
// whole pipeline: policy, loop guard, timeout, an audit record through the
// daemon's asynchronous batching writer into SQLite) for
// each client era, the upstream being a go-sdk server on loopback HTTP
// reached through the real MCP client manager. Profile it with
// -cpuprofile to see where a gateway call's time goes. The upstream speaks
// 2025-11-25, so a 2026-07-28 client's call is a parked call (see
// mcpclient's parked.go) on an upstream session of its own: that row
// measures the bridge, not the stateless fast case.
func BenchmarkGateway(b *testing.B) {
	// audit=durable is the daemon's writer: each answer waits for the
	// group commit of its audit record. audit=queued is the writer before
	// it (answers did not wait; a kill -9 could lose records): the ratio
	// is what durability costs a gateway call.
	for _, audit := range []string{"durable", "queued"} {
		b.Run("audit="+audit, func(b *testing.B) { benchGateway(b, audit == "queued") })
	}
}

func benchGateway(b *testing.B, queuedAudit bool) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer up.Close()
	m := mcpclient.NewManager(mcpclient.Options{})
	defer m.Close()
	h := newHarness(b, harnessOptions{cfg: config.MCPServe{Gateways: []string{"up"}}, upstreams: m, asyncAudit: true, queuedAudit: queuedAudit})
	h.tools.AddSource(m)
	m.OnToolsChanged(h.tools.Changed)
	m.Start(context.Background(), []config.MCPServer{{
		Name: "up", AllowPrivate: true,
		Transport: config.MCPTransport{Type: mcpclient.TransportHTTP, URL: up.URL},
	}})
	ts := h.httpServer(b)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, ok := h.tools.Lookup("mcp_up_echo"); ok {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the upstream's tools did not arrive")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(era+"/c=1", func(b *testing.B) {
			benchCalls(b, ts.URL+"/mcp/gateway/up", era)
		})
		b.Run(era+"/c=16", func(b *testing.B) {
			c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			b.SetParallelism(8) // 2 cores × 8 = 16 clients
			b.ReportAllocs()
			defer cpuPerOp(b)()
			b.RunParallel(func(pb *testing.PB) {
				cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp/gateway/up"}, &mcp.ClientSessionOptions{ProtocolVersion: era})
				if err != nil {
					b.Error(err)
					return
				}
				defer cs.Close()
				params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
				for pb.Next() {
					res, err := cs.CallTool(context.Background(), params)
					if err != nil || res.IsError {
						b.Errorf("%v %+v", err, res)
						return
					}
				}
			})
		})
	}
}
