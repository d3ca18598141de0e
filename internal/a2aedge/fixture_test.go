package a2aedge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/tool"
)

// fixture is an A2A server over a real kernel, a real sqlite store and a
// scripted model, on a loopback httptest server.
type fixture struct {
	t      testing.TB
	srv    *httptest.Server
	s      *Server
	db     *sqlite.DB
	tasks  *TaskStore
	prov   *llmtest.Provider
	reg    *tool.Registry
	client *Client
	pusher *Pusher
	danger atomic.Int32 // calls of the "danger" tool
}

type fixtureOptions struct {
	bearer   bool
	maxTasks int
	external []ExternalAgent
	tools    []tool.Tool
	dbPath   string
	// pushStore keeps push configs in the database, as the daemon does.
	pushStore bool
	// agents are added to testAgents.
	agents []manifest.Manifest
	// modelFree runs the tasks of mcp_proxy agents.
	modelFree ModelFree
	// guard replaces the client's SSRF policy (a proxy, a resolver).
	guard func(allowPrivate bool) *netguard.Policy
	// principals are bearer keys and whom they stand for: requests must
	// then carry one (401 otherwise), and reach the server as that
	// principal, as the daemon's admission layer hands them over.
	principals map[string]*principal.Principal
}

type providers struct{ p llm.Provider }

func (p providers) Provider(string) (llm.Provider, error) { return p.p, nil }

// testAgents: alpha (the default, with a skill), beta, and hidden (not
// exposed over A2A).
func testAgents() []manifest.Manifest {
	expose := manifest.Exposure{A2A: true}
	return []manifest.Manifest{
		{Name: "alpha", Description: "Alpha answers questions.", Provider: "fake", Model: "m", Expose: expose,
			Tools:  []string{"untrusted_fetch", "danger", "a2a_*"},
			Skills: []manifest.Skill{{ID: "qa", Name: "Q&A", Description: "answers", Tags: []string{"qa"}, Examples: []string{"why?"}}}},
		{Name: "beta", Description: "Beta.", Provider: "fake", Model: "m", Expose: expose},
		{Name: "hidden", Provider: "fake", Model: "m"},
	}
}

func newFixture(t testing.TB, h llmtest.Handler, o fixtureOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	path := o.dbPath
	if path == "" {
		path = filepath.Join(t.TempDir(), "agentd.db")
	}
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db, reg: tool.NewRegistry()}
	f.prov = llmtest.NewProvider(t, h)
	f.reg.Add(fakeTool{name: "untrusted_fetch", untrusted: true, out: "page content"})
	f.reg.Add(fakeTool{name: "danger", out: "done something dangerous", calls: &f.danger})
	f.reg.Add(o.tools...)
	k := agent.New(agent.Options{
		Agents:    agent.NewAgents(append(testAgents(), o.agents...), db),
		Providers: providers{f.prov},
		Runner:    tool.NewRunner(f.reg, tool.RunnerOptions{Audit: db}),
		Sessions:  db,
		Untrusted: map[string]policy.Action{"danger": policy.Ask},
	})
	f.tasks, err = OpenTaskStore(ctx, db, TaskStoreOptions{MaxTasks: o.maxTasks})
	if err != nil {
		t.Fatal(err)
	}
	guard := func(allow bool) *netguard.Policy { return &netguard.Policy{AllowPrivate: allow} }
	popts := PusherOptions{Policy: guard(true), Backoff: 10 * time.Millisecond}
	if o.pushStore {
		popts.Store = db
	}
	f.pusher = NewPusher(popts)
	clientGuard := guard
	if o.guard != nil {
		clientGuard = o.guard
	}
	f.client = NewClient(ClientOptions{External: o.external, Guard: clientGuard, RetryInterval: 50 * time.Millisecond,
		LookupSecret: func(n string) (string, bool) { v, ok := os.LookupEnv(n); return v, ok }})
	f.reg.AddSource(f.client)
	f.s = New(Options{Kernel: k, Tasks: f.tasks, Sessions: db, DefaultAgent: "alpha", BearerAuth: o.bearer,
		Version: "test", Push: f.pusher, Client: f.client, ModelFree: o.modelFree})
	mux := http.NewServeMux()
	f.s.Register(mux)
	var handler http.Handler = mux
	if o.principals != nil {
		handler = asPrincipal(o.principals, mux)
	}
	f.srv = httptest.NewServer(handler)
	t.Cleanup(func() {
		f.srv.Close()
		f.s.Close()
		f.client.Close()
		f.pusher.Close()
		f.tasks.Close()
		db.Close()
	})
	f.client.Start()
	return f
}

// asPrincipal serves requests whose bearer key names a principal as that
// principal, and refuses the others; cards stay public.
func asPrincipal(keys map[string]*principal.Principal, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := keys[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			if strings.Contains(r.URL.Path, "/.well-known/") {
				h.ServeHTTP(w, r)
				return
			}
			http.Error(w, `{"error":{"code":"unauthorized"}}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), p)))
	})
}

// endpoint is agent name's A2A URL.
func (f *fixture) endpoint(name string) string { return f.srv.URL + "/a2a/agents/" + name }

// a2aClient connects an a2a-go client to agent name through its card.
func (f *fixture) a2aClient(name string) *a2aclient.Client {
	f.t.Helper()
	card, cl, err := f.client.connect(context.Background(), f.endpoint(name), Reach{AllowPrivate: true}, "")
	if err != nil {
		f.t.Fatal(err)
	}
	if card.Name != name {
		f.t.Fatalf("card name %q, want %q", card.Name, name)
	}
	return cl
}

func (f *fixture) post(path, body string) (int, []byte) {
	f.t.Helper()
	resp, err := http.Post(f.srv.URL+path, "application/json", stringsReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, readAll(f.t, resp.Body)
}

func (f *fixture) get(path string) (int, []byte) {
	f.t.Helper()
	resp, err := http.Get(f.srv.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, readAll(f.t, resp.Body)
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
			state := a2a.TaskStateUnspecified
			if err == nil {
				state = st.Task.Status.State
			}
			f.t.Fatalf("task %s: state %s (err %v), want %s", id, state, err, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fakeTool answers out; untrusted marks its results untrusted.
type fakeTool struct {
	name      string
	untrusted bool
	out       string
	calls     *atomic.Int32
	block     chan struct{}
}

func (t fakeTool) Spec() tool.Spec {
	return tool.Spec{Name: t.name, Description: "test tool", InputSchema: json.RawMessage(`{"type":"object"}`), Origin: tool.OriginBuiltin, Untrusted: t.untrusted}
}

func (t fakeTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	if t.calls != nil {
		t.calls.Add(1)
	}
	if t.block != nil {
		select {
		case <-t.block:
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}
	return tool.Result{Content: t.out}, nil
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)
	portRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// normalize replaces what changes between runs (ids, times, ports) with
// placeholders numbered by first appearance, so transcripts compare.
func normalize(b []byte) string {
	seen := map[string]string{}
	s := uuidRE.ReplaceAllStringFunc(string(b), func(m string) string {
		if r, ok := seen[m]; ok {
			return r
		}
		r := "<id" + itoa(len(seen)+1) + ">"
		seen[m] = r
		return r
	})
	s = timeRE.ReplaceAllString(s, `"<time>"`)
	return portRE.ReplaceAllString(s, "127.0.0.1:<port>")
}

func itoa(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func readAll(t testing.TB, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
