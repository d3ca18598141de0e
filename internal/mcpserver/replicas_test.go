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
		{"approved", true, "ran"},
		{"refused", false, "denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Int32
			shell := fnTool{name: "shell_exec", call: func() string { ran.Add(1); return "ran" }}
			// The model fetches a page (which taints the run), then wants
			// shell_exec (which the untrusted policy makes ask), then
			// repeats what the tool said.
			model := func(req *llmtest.Request) llmtest.Reply {
				switch req.Seq {
				case 1:
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("mcp_web_fetch", `{}`)}}
				case 2:
					return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("shell_exec", `{"cmd":"ls"}`)}}
				}
				last := req.Messages[len(req.Messages)-1]
				return llmtest.Reply{Text: "the tool said: " + toolResultText(last)}
			}
			hub := newMemHub()
			replica := func() *httptest.Server {
				h := newHarness(t, harnessOptions{
					model: model,
					agents: []manifest.Manifest{{Name: "helper-bot", Description: "Runs things.", Provider: "fake", Model: "m1",
						Tools: []string{"mcp_web_fetch", "shell_exec"}, Expose: manifest.Exposure{MCP: true}}},
					tools:     []tool.Tool{fakeUpstream{name: "mcp_web_fetch", text: "page"}, shell},
					untrusted: map[string]policy.Action{"shell_exec": policy.Ask},
					replicas:  &Replicas{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}, Cluster: hub.join()},
				})
				return h.httpServer(t)
			}
			a, b := replica(), replica()
			// The load balancer: the client's answers (POSTs holding a
			// JSON-RPC response) go to B, everything else to A.
			var toB atomic.Int32
			client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				target := a.URL
				if r.Method == http.MethodPost && r.Body != nil {
					body, err := io.ReadAll(r.Body)
					if err != nil {
						return nil, err
					}
					r.Body = io.NopCloser(bytes.NewReader(body))
					if f := jsonrpcwire.Scan(body); f.Complete && !f.HasMethod {
						target = b.URL
						toB.Add(1)
					}
				}
				u, _ := url.Parse(target)
				r = r.Clone(r.Context())
				r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
				return http.DefaultTransport.RoundTrip(r)
			})}
			var asked atomic.Int32
			c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": tc.approve}}, nil
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.URL + "/mcp", HTTPClient: client, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
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
			if want := map[bool]int32{true: 1, false: 0}[tc.approve]; ran.Load() != want {
				t.Errorf("shell_exec ran %d times, want %d", ran.Load(), want)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fnTool is a builtin tool whose result is call's.
type fnTool struct {
	name string
	call func() string
}

func (f fnTool) Spec() tool.Spec {
	return tool.Spec{Name: f.name, Description: "A test tool.", Origin: tool.OriginBuiltin, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (f fnTool) Call(context.Context, *tool.Call) (tool.Result, error) {
	return tool.Result{Content: f.call()}, nil
}

// memHub is the replicas' cluster in one process: what one member
// publishes, every other member's subscribers get, at once, in order.
type memHub struct {
	mu      sync.Mutex
	members []*memMember
	ended   map[string]bool
}

func newMemHub() *memHub { return &memHub{ended: map[string]bool{}} }

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
