package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/auditlog"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/tool"
)

// harness is a kernel over a real SQLite store and a scripted model, with
// the MCP server on top.
type harness struct {
	db       *sqlite.DB
	kernel   *agent.Kernel
	tools    *tool.Registry
	provider *llmtest.Provider
	srv      *Server
}

type harnessOptions struct {
	model     llmtest.Handler
	agents    []manifest.Manifest
	cfg       config.MCPServe
	tools     []tool.Tool
	maxBytes  int64
	upstreams Upstreams
	upName    func(tool.Tool) (string, string, bool)
	untrusted map[string]policy.Action
	logger    *slog.Logger
	origin    string
	meter     metric.MeterProvider
	tracer    trace.TracerProvider
	replicas  *Replicas
	// sessionTimeout is Options.SessionTimeout (0: the default).
	sessionTimeout time.Duration
	// asyncAudit puts the daemon's batching audit writer between the
	// runner and the store, durable (group commit) as the daemon's is;
	// benchmarks set it so that they measure the daemon's call path.
	asyncAudit bool
	// queuedAudit makes that writer the one the daemon had before group
	// commit (appends return before their commit), for the benchmark's
	// before/after.
	queuedAudit bool
}

type providers map[string]llm.Provider

func (p providers) Provider(name string) (llm.Provider, error) {
	if pr, ok := p[name]; ok {
		return pr, nil
	}
	return nil, agent.ErrNoModel
}

func defaultAgents() []manifest.Manifest {
	return []manifest.Manifest{
		{Name: "helper-bot", Description: "Answers questions.", Provider: "fake", Model: "m1", Tools: []string{"echo"}, Expose: manifest.Exposure{MCP: true}},
		{Name: "hidden", Description: "Not exposed.", Provider: "fake", Model: "m1"},
	}
}

func newHarness(t testing.TB, o harnessOptions) *harness {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agentd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if o.agents == nil {
		o.agents = defaultAgents()
	}
	reg := tool.NewRegistry()
	reg.Add(o.tools...)
	var audit store.AuditStore = db
	if o.asyncAudit {
		w := auditlog.New(db, &auditlog.Options{Durable: !o.queuedAudit})
		t.Cleanup(func() { w.Close() }) // before db.Close: cleanups run last-in first-out
		audit = w
	}
	runner := tool.NewRunner(reg, tool.RunnerOptions{Audit: audit, Meter: o.meter, Tracer: o.tracer})
	prov := llmtest.NewProvider(t, o.model)
	k := agent.New(agent.Options{
		Agents:    agent.NewAgents(o.agents, db),
		Providers: providers{"fake": prov},
		Runner:    runner,
		Sessions:  db,
		Untrusted: o.untrusted,
		Meter:     o.meter,
		Tracer:    o.tracer,
	})
	reg.Add(k.Tools()...)
	srv, err := New(ctx, Options{
		Kernel: k, Tools: reg, Sessions: db, Config: o.cfg, MaxMessageBytes: o.maxBytes,
		Workspace: t.TempDir(), Upstreams: o.upstreams, UpstreamName: o.upName, Version: "test",
		Logger: o.logger, ConfigOrigin: o.origin, Meter: o.meter, Tracer: o.tracer, Replicas: o.replicas,
		SessionTimeout: o.sessionTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &harness{db: db, kernel: k, tools: reg, provider: prov, srv: srv}
}

// httpServer serves the harness on a loopback test server.
func (h *harness) httpServer(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	h.srv.Mount(mux)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// stdioClient connects an SDK client to ServeStdio through pipes.
func (h *harness) stdioClient(t *testing.T, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := h.srv.ServeStdio(ctx, inR, outW); err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		outW.Close()
	})
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		cancel()
		wg.Wait()
	})
	return cs
}

func httpClient(t *testing.T, url string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// echoTool is a built-in-like tool for expose_tools tests.
type echoTool struct{}

func (echoTool) Spec() tool.Spec {
	return tool.Spec{Name: "echo", Description: "Echo the text.", Origin: tool.OriginBuiltin, ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}
}

func (echoTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c.Args, &a); err != nil {
		return tool.Result{Content: "bad args", IsError: true}, nil
	}
	c.Progress("echoing", 1, 2)
	return tool.Result{Content: a.Text, Structured: json.RawMessage(`{"echoed":` + string(mustJSON(a.Text)) + `}`)}, nil
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var s string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		s += tc.Text
	}
	return s
}

// fakeUpstream stands for a tool of an upstream MCP server.
type fakeUpstream struct {
	name, server, text string
}

func (f fakeUpstream) Spec() tool.Spec {
	server := f.server
	if server == "" {
		server = "web"
	}
	return tool.Spec{Name: f.name, Description: "Upstream tool.", Origin: tool.OriginMCP, Server: server,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (f fakeUpstream) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	return tool.Result{Content: f.text}, nil
}

// shellTool stands for shell_exec: a tool the untrusted policy guards.
type shellTool struct{}

func (shellTool) Spec() tool.Spec {
	return tool.Spec{Name: "shell_exec", Description: "Run a command.", Origin: tool.OriginBuiltin,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)}
}

func (shellTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	return tool.Result{Content: "ran"}, nil
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

// waitFor polls cond for up to 10 s: used only for effects that happen on
// other goroutines with no event to wait on (a run noticing cancellation).
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func auditFilter(agentName string) store.AuditFilter { return store.AuditFilter{Agent: agentName} }

func runRequest(agentName, text string) *agent.RunRequest {
	return &agent.RunRequest{Agent: agentName, Input: llm.TextMessage(llm.RoleUser, text), Origin: "test"}
}

func itoa(i int) string { return strconv.Itoa(i) }
