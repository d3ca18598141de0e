package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/jsonrpcwire"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// TestReplicatedSessionsAcrossServers: two servers sharing session keys
// (replicas, here without a database): a session initialized on one is
// served by the other, only to the principal that opened it, and a
// server with other keys knows nothing of it.
func TestReplicatedSessionsAcrossServers(t *testing.T) {
	keys := &Replicas{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}}
	model := llmtest.Always(llmtest.Reply{Text: "hi"})
	users := map[string]*principal.Principal{
		"alice": {Name: "alice", Agents: []string{"*"}},
		"bob":   {Name: "bob", Agents: []string{"*"}},
	}
	// The daemon's auth middleware, reduced: the bearer token names the
	// principal.
	serve := func(h *harness) *httptest.Server {
		mux := http.NewServeMux()
		h.srv.Mount(mux)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]; p != nil {
				r = r.WithContext(principal.NewContext(r.Context(), p))
			}
			mux.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		return ts
	}
	a := serve(newHarness(t, harnessOptions{model: model, replicas: keys}))
	b := serve(newHarness(t, harnessOptions{model: model, replicas: keys}))
	other := serve(newHarness(t, harnessOptions{model: model, replicas: &Replicas{Keys: [][]byte{[]byte(strings.Repeat("x", 32))}}}))

	post := func(base, user, sid, body string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+user)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	code, hdr, body := post(a.URL, "alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	if code != http.StatusOK || !strings.HasPrefix(sid, sealPrefix) {
		t.Fatalf("initialize on A: %d %q %s", code, sid, body)
	}
	if code, _, _ := post(b.URL, "alice", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized on B: %d", code)
	}
	code, _, body = post(b.URL, "alice", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if code != http.StatusOK || !strings.Contains(body, "agentd_agent_helper_bot") {
		t.Fatalf("tools/list on B: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, base, user string
		want             int
	}{
		{"another principal on the replica holding it", b.URL, "bob", http.StatusForbidden},
		{"another principal on a replica restoring it", a.URL, "bob", http.StatusForbidden},
		{"a replica with other keys", other.URL, "alice", http.StatusNotFound},
	} {
		if code, _, body := post(tc.base, tc.user, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
}

// TestElicitationAnsweredOnAnotherReplica: an agent call on replica A
// asks the client's approval (elicitation); the client's answer, a POST
// of its own, reaches replica B, which relays it through the cluster to
// A, whose run goes on with the answer: the tool runs when approved and
// not when refused.
func TestElicitationAnsweredOnAnotherReplica(t *testing.T) {
	for _, tc := range []struct {
		name    string
		approve bool
		want    string // in the tool result the model saw
	}{
		{"approved", true, "ran ls"},
		{"refused", false, "denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hub := newMemHub()
			ran := &commands{}
			a, b := askingReplica(t, hub, ran, "ls"), askingReplica(t, hub, ran, "ls")
			// The load balancer: the client's answers (POSTs holding a
			// JSON-RPC response) go to B, everything else to A.
			var toB atomic.Int32
			client := routedClient(func(body []byte) (string, func()) {
				if isAnswer(body) {
					toB.Add(1)
					return b.URL, nil
				}
				return a.URL, nil
			})
			var asked atomic.Int32
			cs := elicitingClient(t, a.URL, client, func(string) bool {
				asked.Add(1)
				return tc.approve
			})
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agentd_agent_helper_bot", Arguments: map[string]any{"message": "list the files"}})
			if ctx.Err() != nil {
				t.Fatalf("the agent call never finished: the answer to its elicitation, posted to replica B (%d posts), did not reach replica A", toB.Load())
			}
			if err != nil || res.IsError {
				t.Fatalf("agent call: %v %+v", err, res)
			}
			if asked.Load() != 1 || toB.Load() != 1 {
				t.Fatalf("%d elicitations, %d answers posted to B; want 1 and 1", asked.Load(), toB.Load())
			}
			if got := textOf(t, res); !strings.Contains(got, tc.want) {
				t.Errorf("agent answered %q, want it to hold %q", got, tc.want)
			}
			if want := map[bool][]string{true: {"ls"}, false: nil}[tc.approve]; !slices.Equal(ran.list(), want) {
				t.Errorf("shell_exec ran %q, want %q", ran.list(), want)
			}
		})
	}
}

// TestConcurrentElicitationsOnTwoReplicas: two calls of one session, one
// on replica A and one on B, ask the client at the same time. Each
// replica numbers its own requests, so without ids unique per replica
// both questions would be id 1, and the answer to A's question, reaching
// B, would be taken by B's. Here the client approves A's question only
// and posts both answers to B, the approval first: only A's command runs.
func TestConcurrentElicitationsOnTwoReplicas(t *testing.T) {
	hub := newMemHub()
	ran := &commands{}
	a, b := askingReplica(t, hub, ran, "on-a"), askingReplica(t, hub, ran, "on-b")
	approved := make(chan struct{})
	client := routedClient(func(body []byte) (string, func()) {
		switch {
		case isAnswer(body) && bytes.Contains(body, []byte(`"approve":true`)):
			return b.URL, func() { close(approved) }
		case isAnswer(body):
			select {
			case <-approved:
			case <-time.After(10 * time.Second):
			}
			return b.URL, nil
		case bytes.Contains(body, []byte("on replica B")):
			return b.URL, nil
		}
		return a.URL, nil
	})
	var n atomic.Int32
	bothAsked := make(chan struct{})
	cs := elicitingClient(t, a.URL, client, func(question string) bool {
		if n.Add(1) == 2 {
			close(bothAsked)
		}
		select {
		case <-bothAsked:
		case <-time.After(10 * time.Second):
			t.Error("the second elicitation never came")
		}
		return strings.Contains(question, "on-a")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	answers := make([]string, 2)
	for i, msg := range []string{"on replica A", "on replica B"} {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agentd_agent_helper_bot", Arguments: map[string]any{"message": msg}})
			if err != nil || res.IsError {
				t.Errorf("agent call %s: %v %+v", msg, err, res)
				return
			}
			answers[i] = textOf(t, res)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the agent calls did not finish: an answer was lost (answers %q)", answers)
	}
	if !strings.Contains(answers[0], "ran on-a") || !strings.Contains(answers[1], "denied") {
		t.Errorf("answers %q: want A's command run and B's denied", answers)
	}
	if !slices.Equal(ran.list(), []string{"on-a"}) {
		t.Errorf("shell_exec ran %q, want only on-a", ran.list())
	}
	// B's own answer was delivered on B; only A's crossed the cluster.
	if n := hub.count(topicResponse); n != 1 {
		t.Errorf("%d answers relayed, want 1", n)
	}
}

// askingReplica is one replica on hub whose agent helper-bot fetches a
// page (which taints the run), then runs shell_exec with cmd (which the
// untrusted policy makes it ask the client to approve), then repeats
// what the tool said. The commands run are noted in ran.
func askingReplica(t *testing.T, hub *memHub, ran *commands, cmd string) *httptest.Server {
	t.Helper()
	model := func(req *llmtest.Request) llmtest.Reply {
		switch req.Seq {
		case 1:
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("mcp_web_fetch", `{}`)}}
		case 2:
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("shell_exec", `{"cmd":"`+cmd+`"}`)}}
		}
		last := req.Messages[len(req.Messages)-1]
		return llmtest.Reply{Text: "the tool said: " + toolResultText(last)}
	}
	h := newHarness(t, harnessOptions{
		model: model,
		agents: []manifest.Manifest{{Name: "helper-bot", Description: "Runs things.", Provider: "fake", Model: "m1",
			Tools: []string{"mcp_web_fetch", "shell_exec"}, Expose: manifest.Exposure{MCP: true}}},
		tools:     []tool.Tool{fakeUpstream{name: "mcp_web_fetch", text: "page"}, recordingShell{ran}},
		untrusted: map[string]policy.Action{"shell_exec": policy.Ask},
		replicas:  &Replicas{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}, Cluster: hub.join()},
	})
	return h.httpServer(t)
}

// routedClient is an HTTP client behind a load balancer without
// stickiness: route gets each request's body (nil for GET and DELETE)
// and names the replica's base URL, and a function to call once the
// response came back (or nil).
func routedClient(route func(body []byte) (base string, done func())) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		var body []byte
		if r.Body != nil {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				return nil, err
			}
		}
		base, done := route(body)
		u, _ := url.Parse(base)
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
		resp, err := http.DefaultTransport.RoundTrip(r)
		if done != nil {
			done()
		}
		return resp, err
	})}
}

// isAnswer reports whether body is a JSON-RPC response (a client's
// answer to a server's request).
func isAnswer(body []byte) bool {
	f := jsonrpcwire.Scan(body)
	return body != nil && f.Complete && !f.HasMethod && len(f.ID) > 0
}

// elicitingClient opens a 2025-11-25 session on endpoint base through
// client, answering each elicitation with approve(its message).
func elicitingClient(t *testing.T, base string, client *http.Client, approve func(question string) bool) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": approve(r.Params.Message)}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: client, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// commands notes the commands a shell ran.
type commands struct {
	mu  sync.Mutex
	ran []string
}

func (c *commands) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ran)
}

// recordingShell is a shell_exec that notes its command and answers
// "ran <cmd>".
type recordingShell struct{ c *commands }

func (recordingShell) Spec() tool.Spec { return shellTool{}.Spec() }

func (s recordingShell) Call(_ context.Context, c *tool.Call) (tool.Result, error) {
	var args struct {
		Cmd string `json:"cmd"`
	}
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return tool.Result{}, err
	}
	s.c.mu.Lock()
	s.c.ran = append(s.c.ran, args.Cmd)
	s.c.mu.Unlock()
	return tool.Result{Content: "ran " + args.Cmd}, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// memHub is the replicas' cluster in one process: what one member
// publishes, every other member's subscribers get, at once, in order.
type memHub struct {
	mu        sync.Mutex
	members   []*memMember
	ended     map[string]bool
	published map[string]int // by topic
}

func newMemHub() *memHub { return &memHub{ended: map[string]bool{}, published: map[string]int{}} }

func (hb *memHub) count(topic string) int {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return hb.published[topic]
}

func (hb *memHub) join() *memMember {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	m := &memMember{hub: hb, id: strconv.Itoa(len(hb.members)), subs: map[string]map[int]func(string, []byte){}}
	hb.members = append(hb.members, m)
	return m
}

type memMember struct {
	hub  *memHub
	id   string
	mu   sync.Mutex
	next int
	subs map[string]map[int]func(from string, body []byte)
}

var _ SessionCluster = (*memMember)(nil)

func (m *memMember) Publish(_ context.Context, topic, body string) error {
	m.hub.mu.Lock()
	members := slices.Clone(m.hub.members)
	m.hub.published[topic]++
	m.hub.mu.Unlock()
	for _, o := range members {
		if o == m {
			continue
		}
		o.mu.Lock()
		fs := slices.Collect(maps.Values(o.subs[topic]))
		o.mu.Unlock()
		for _, f := range fs {
			f(m.id, []byte(body))
		}
	}
	return nil
}

func (m *memMember) Subscribe(topic string, f func(from string, body []byte)) (cancel func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.next
	m.next++
	if m.subs[topic] == nil {
		m.subs[topic] = map[int]func(string, []byte){}
	}
	m.subs[topic][id] = f
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subs[topic], id)
	}
}

func (m *memMember) OnResync(func()) (cancel func()) { return func() {} }

func (m *memMember) EndSession(_ context.Context, idHash []byte, _ time.Time) error {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	m.hub.ended[string(idHash)] = true
	return nil
}

func (m *memMember) SessionEnded(_ context.Context, idHash []byte) (bool, error) {
	m.hub.mu.Lock()
	defer m.hub.mu.Unlock()
	return m.hub.ended[string(idHash)], nil
}

// toolResultText is the content of the tool results in m.
func toolResultText(m llm.Message) string {
	var b strings.Builder
	for _, r := range m.ToolResults {
		b.WriteString(r.Content)
	}
	return b.String()
}

// TestReplicatedToolsListReadsTheStore: an agent another replica stored
// is in this replica's tools/list even before the notification of the
// change arrives here. A client told list_changed by the replica that
// knew first re-lists through whichever replica the balancer picks, and
// nothing would make it list again.
func TestReplicatedToolsListReadsTheStore(t *testing.T) {
	h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Text: "hi"}),
		replicas: &Replicas{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}}})
	ts := h.httpServer(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	m, _ := json.Marshal(manifest.Manifest{Name: "latecomer", Description: "Stored by another replica.", Provider: "fake", Model: "m1", Expose: manifest.Exposure{MCP: true}})
	// Straight into the store, as another replica's API would: this
	// replica's directory is not told.
	if err := h.db.PutAgent(t.Context(), store.Agent{Name: "latecomer", Manifest: m}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, AgentToolName("latecomer")) {
		t.Fatalf("tools/list = %v, want %s from the store", names, AgentToolName("latecomer"))
	}
}
