package bridge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/tool"
)

// fixture is agentd's A2A edge, with the proxy agents' runner, over a
// real kernel, a real sqlite store and a scripted model, on a loopback
// httptest server.
type fixture struct {
	t      testing.TB
	srv    *httptest.Server
	s      *a2aedge.Server
	k      *agent.Kernel
	db     *sqlite.DB
	tasks  *a2aedge.TaskStore
	client *a2aedge.Client
}

type fixtureOptions struct {
	external []a2aedge.ExternalAgent
	// agents are added to alpha and beta; mcp serves the proxy agents
	// and is a tool source.
	agents []manifest.Manifest
	mcp    mcpSource
	// fastWindow overrides how long a blocking send waits for its run.
	fastWindow time.Duration
}

// mcpSource is an MCP client manager as the fixture uses it.
type mcpSource interface {
	MCPServers
	tool.Source
}

type providers struct{ p llm.Provider }

func (p providers) Provider(string) (llm.Provider, error) { return p.p, nil }

// fixtureTool answers out; untrusted marks its results untrusted.
type fixtureTool struct {
	name      string
	untrusted bool
	out       string
}

func (t fixtureTool) Spec() tool.Spec {
	return tool.Spec{Name: t.name, Description: "test tool", InputSchema: json.RawMessage(`{"type":"object"}`), Origin: tool.OriginBuiltin, Untrusted: t.untrusted}
}

func (t fixtureTool) Call(context.Context, *tool.Call) (tool.Result, error) {
	return tool.Result{Content: t.out}, nil
}

func newFixture(t testing.TB, h llmtest.Handler, o fixtureOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agentd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db}
	reg := tool.NewRegistry()
	reg.Add(fixtureTool{name: "untrusted_fetch", untrusted: true, out: "page content"}, fixtureTool{name: "danger", out: "done something dangerous"})
	if o.mcp != nil {
		reg.AddSource(o.mcp)
	}
	expose := manifest.Exposure{A2A: true}
	agents := append([]manifest.Manifest{
		{Name: "alpha", Description: "Alpha answers questions.", Provider: "fake", Model: "m", Expose: expose,
			Tools:  []string{"untrusted_fetch", "danger", "a2a_*"},
			Skills: []manifest.Skill{{ID: "qa", Name: "Q&A", Description: "answers", Tags: []string{"qa"}, Examples: []string{"why?"}}}},
		{Name: "beta", Description: "Beta.", Provider: "fake", Model: "m", Expose: expose},
		{Name: "hidden", Provider: "fake", Model: "m"},
	}, o.agents...)
	f.k = agent.New(agent.Options{
		Agents:    agent.NewAgents(agents, db),
		Providers: providers{llmtest.NewProvider(t, h)},
		Runner:    tool.NewRunner(reg, tool.RunnerOptions{Audit: db}),
		Sessions:  db,
		Untrusted: map[string]policy.Action{"danger": policy.Ask},
	})
	f.tasks, err = a2aedge.OpenTaskStore(ctx, db, a2aedge.TaskStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.client = a2aedge.NewClient(a2aedge.ClientOptions{External: o.external, RetryInterval: 50 * time.Millisecond,
		Guard:        func(allow bool) *netguard.Policy { return &netguard.Policy{AllowPrivate: allow} },
		LookupSecret: func(n string) (string, bool) { v, ok := os.LookupEnv(n); return v, ok }})
	reg.AddSource(f.client)
	f.s = a2aedge.New(a2aedge.Options{Kernel: f.k, Tasks: f.tasks, Sessions: db, DefaultAgent: "alpha", Version: "test",
		Client: f.client, ModelFree: NewProxy(ProxyOptions{Kernel: f.k, MCP: o.mcp}), FastWindow: o.fastWindow})
	mux := http.NewServeMux()
	f.s.Register(mux)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		f.srv.Close()
		f.s.Close()
		f.client.Close()
		f.tasks.Close()
		db.Close()
	})
	f.client.Start()
	return f
}

// endpoint is agent name's A2A URL.
func (f *fixture) endpoint(name string) string { return f.srv.URL + "/a2a/agents/" + name }

// a2aClient connects an a2a-go client to agent name through its card.
func (f *fixture) a2aClient(name string) *a2aclient.Client {
	f.t.Helper()
	ctx := context.Background()
	card, err := agentcard.DefaultResolver.Resolve(ctx, f.endpoint(name))
	if err != nil {
		f.t.Fatal(err)
	}
	if card.Name != name {
		f.t.Fatalf("card name %q, want %q", card.Name, name)
	}
	cl, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		f.t.Fatal(err)
	}
	return cl
}

func (f *fixture) post(path, body string) (int, []byte) {
	f.t.Helper()
	return f.do(http.Post(f.srv.URL+path, "application/json", strings.NewReader(body)))
}

func (f *fixture) get(path string) (int, []byte) {
	f.t.Helper()
	return f.do(http.Get(f.srv.URL + path))
}

func (f *fixture) do(resp *http.Response, err error) (int, []byte) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// waitTask polls the store until task id is in state want.
func (f *fixture) waitTask(id a2a.TaskID, want a2a.TaskState) *a2a.Task {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := f.tasks.Get(context.Background(), id)
		if err == nil && st.Task.Status.State == want {
			return st.Task
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("task %s: state %v (err %v), want %s", id, st, err, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
