//go:build linux

package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// leakMarker is in every secret of TestSecretsNeverLeak, so that any
// fragment of one that carries it is found too.
const leakMarker = "LEAKCHECK"

// tape records every response a test's clients receive: status line,
// headers and body.
type tape struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int
}

// transport wraps next so that responses are copied to the tape as
// they are read.
func (tp *tape) transport(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		tp.mu.Lock()
		defer tp.mu.Unlock()
		tp.n++
		if err != nil {
			fmt.Fprintf(&tp.buf, "\n== %s %s: error %v\n", r.Method, r.URL.Path, err)
			return nil, err
		}
		fmt.Fprintf(&tp.buf, "\n== %s %s: %s\n", r.Method, r.URL.Path, resp.Status)
		for k, vs := range resp.Header {
			fmt.Fprintf(&tp.buf, "%s: %s\n", k, strings.Join(vs, ", "))
		}
		resp.Body = &tapeBody{rc: resp.Body, tp: tp}
		return resp, nil
	})
}

func (tp *tape) String() string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.buf.String()
}

type tapeBody struct {
	rc io.ReadCloser
	tp *tape
}

func (b *tapeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.tp.mu.Lock()
	b.tp.buf.Write(p[:n])
	b.tp.mu.Unlock()
	return n, err
}

func (b *tapeBody) Close() error { return b.rc.Close() }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fakeMCPHTTP is an upstream MCP server over Streamable HTTP that
// requires header name to hold want, and counts the requests that did.
func fakeMCPHTTP(t testing.TB, name, want string) (string, *atomic.Int32) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "secret-upstream", Version: "1"}, nil)
	type echoArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo text."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var ok atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(name) != want {
			http.Error(w, `{"error":"invalid credentials"}`, http.StatusUnauthorized)
			return
		}
		ok.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", &ok
}

// TestSecretsNeverLeak runs a full session over every edge of a daemon
// that holds one secret of each kind (its API key, provider keys, MCP
// header values, A2A tokens, an env value passed to a stdio child), with
// right and wrong values so that error paths run too, and searches every
// response and every log line for them.
func TestSecretsNeverLeak(t *testing.T) {
	track(t, areaAuth, false)
	secrets := map[string]string{
		"api_key":                      "agentd-" + leakMarker + "-0a9b8c7d6e5f",
		"REL_PROVIDER_KEY":             "sk-prov-" + leakMarker + "-a1b2c3d4e5f6",
		"REL_BAD_PROVIDER_KEY":         "sk-bad-" + leakMarker + "-f6e5d4c3b2a1",
		"REL_MCP_TOKEN":                "mcp-" + leakMarker + "-55aa66bb77cc",
		"REL_MCP_BAD":                  "mcpbad-" + leakMarker + "-88dd99ee00ff",
		"REL_A2A_TOKEN":                "a2a-" + leakMarker + "-12ab34cd56ef",
		"REL_A2A_BAD":                  "a2abad-" + leakMarker + "-78ab90cd12ef",
		"REL_STDIO_SECRET":             "stdio-" + leakMarker + "-3c4d5e6f7a8b",
		"literal header (API request)": "literal-" + leakMarker + "-99ee00ff11aa",
	}
	key := secrets["api_key"]
	var tp tape
	// Libraries that log through slog.Default (a2a-go's transports do)
	// are captured too.
	defaultLog := &syncBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(defaultLog, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	// Upstreams that check the secrets they must receive.
	good := llmtest.NewOpenAIServer(t, llmtest.RequireAPIKey(secrets["REL_PROVIDER_KEY"], func(r *llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == llm.RoleTool {
			return llmtest.Reply{Text: "done: " + last.ToolResults[0].Content}
		}
		switch r.LastUserText() {
		case "use the tools":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{
				llmtest.ToolCall("mcp_remote_echo", `{"text":"via the agent"}`),
				llmtest.ToolCall("a2a_peer", `{"message":"hello peer"}`),
				llmtest.ToolCall("a2a_peerbad", `{"message":"hello bad peer"}`),
				llmtest.ToolCall("web_fetch", `{"url":"http://169.254.169.254/latest/meta-data/"}`),
			}}
		}
		return llmtest.Reply{Text: "fine", Chunks: 3}
	}))
	bad := llmtest.NewOpenAIServer(t, llmtest.RequireAPIKey("the right key is not this one", llmtest.Always(llmtest.Reply{Text: "never"})))
	mcpURL, mcpHits := fakeMCPHTTP(t, "Authorization", "Bearer "+secrets["REL_MCP_TOKEN"])
	mcpBadURL, _ := fakeMCPHTTP(t, "X-Api-Key", "not the configured value")
	peerModel := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "peer says hi"}))
	peer := startDaemon(t, daemonSpec{Key: secrets["REL_A2A_TOKEN"], TOML: fmt.Sprintf(`api_key = %q
[providers.fake]
kind = "openai"
base_url = %q
[[agents]]
name = "remote"
provider = "fake"
model = "peer-model"
[agents.expose]
a2a = true
[a2a]
enabled = true
`, secrets["REL_A2A_TOKEN"], peerModel.URL)})

	env := map[string]string{}
	for k, v := range secrets {
		if strings.HasPrefix(k, "REL_") {
			env[k] = v
		}
	}
	p := startDaemon(t, daemonSpec{Key: key, Env: env, TOML: fmt.Sprintf(`api_key = %q

[providers.good]
kind = "openai"
base_url = %q
api_key_env = "REL_PROVIDER_KEY"

[providers.bad]
kind = "openai"
base_url = %q
api_key_env = "REL_BAD_PROVIDER_KEY"
max_retries = 1

[[agents]]
name = "alpha"
provider = "good"
model = "m"
tools = ["mcp_*", "a2a_*", "web_fetch", "memory_*"]
[agents.expose]
a2a = true
mcp = true

[[agents]]
name = "beta"
provider = "bad"
model = "m"
[agents.expose]
mcp = true

[mcp]
expose_tools = true

[[mcp_servers]]
name = "remote"
allow_private = true
allowed_tools = ["echo"]
headers = { Authorization = "Bearer ${REL_MCP_TOKEN}" }
[mcp_servers.transport]
type = "http"
url = %q

[[mcp_servers]]
name = "remotebad"
allow_private = true
allowed_tools = ["echo"]
headers = { X-Api-Key = "${REL_MCP_BAD}" }
[mcp_servers.transport]
type = "http"
url = %q

[a2a]
enabled = true

[[a2a.external_agents]]
name = "peer"
url = %q
token_env = "REL_A2A_TOKEN"
allow_private = true

[[a2a.external_agents]]
name = "peerbad"
url = %q
token_env = "REL_A2A_BAD"
allow_private = true

[limits]
rate_per_sec = 100000
burst = 100000
`, key, good.URL, bad.URL, mcpURL, mcpBadURL, peer.URL+"/a2a/agents/remote", peer.URL+"/a2a/agents/remote") + fixtureServer("fx", []string{"REL_STDIO_SECRET"})})
	p.HC.Transport = tp.transport(p.HC.Transport)
	p.waitTool(t, "mcp_remote_echo", 20*time.Second)
	p.waitTool(t, "mcp_fx_ids", 20*time.Second)
	p.waitTool(t, "a2a_peerbad", 20*time.Second)
	p.waitTool(t, "a2a_peer", 20*time.Second)

	ctx := context.Background()
	do := func(method, path string, body any, want int) reply {
		t.Helper()
		r := p.call(t, method, path, body)
		if want != 0 && r.Status != want {
			t.Errorf("%s %s: %v, want %d", method, path, r, want)
		}
		return r
	}
	stream := func(path string, body any) reply {
		t.Helper()
		return p.callKey(t, "POST", path, body, key, http.Header{"Accept": {"text/event-stream"}})
	}

	// The HTTP API, every route.
	do("GET", "/api/health", nil, 200)
	do("GET", "/api/agents", nil, 200)
	do("GET", "/api/agents/alpha", nil, 200)
	do("POST", "/api/agents", `{"name":"gamma","provider":"good","model":"m"}`, 201)
	do("PUT", "/api/agents/gamma", `{"name":"gamma","provider":"good","model":"m2"}`, 200)
	do("POST", "/api/agents/gamma/messages", `{"message":"hello"}`, 200)
	do("DELETE", "/api/agents/gamma", nil, 204)
	r := do("POST", "/api/agents/alpha/messages", `{"message":"use the tools"}`, 200)
	if !strings.Contains(string(r.Body), "echo: via the agent") {
		t.Errorf("the agent's MCP call did not reach the upstream: %v", r)
	}
	stream("/api/agents/alpha/messages", `{"message":"hello again"}`)
	if r := do("POST", "/api/agents/beta/messages", `{"message":"hello"}`, 0); r.Status < 400 {
		t.Errorf("the bad provider's key was accepted: %v", r)
	}
	stream("/api/agents/beta/messages", `{"message":"hello"}`)
	var sessions struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	decodeJSON(t, do("GET", "/api/sessions", nil, 200).Body, &sessions)
	for _, s := range sessions.Sessions {
		do("GET", "/api/sessions/"+s.ID, nil, 200)
	}
	if len(sessions.Sessions) > 0 {
		do("DELETE", "/api/sessions/"+sessions.Sessions[0].ID, nil, 204)
	}
	do("GET", "/api/tools", nil, 200)
	do("POST", "/api/tools/mcp_remote_echo/call", `{"text":"direct"}`, 200)
	do("POST", "/api/tools/mcp_fx_ids/call", `{}`, 200)
	do("POST", "/api/tools/memory_store/call", `{"key":"k","value":"v"}`, 0)
	do("POST", "/api/tools/web_fetch/call", `{"url":"http://127.0.0.1:1/"}`, 200)
	do("GET", "/api/audit?limit=1000", nil, 200)
	do("GET", "/api/mcp/servers", nil, 200)
	if r := do("POST", "/api/mcp/servers", fmt.Sprintf(`{"name":"lit","headers":{"Authorization":"Bearer %s"},"transport":{"type":"http","url":"http://127.0.0.1:1/mcp"}}`, secrets["literal header (API request)"]), 0); r.Status != http.StatusBadRequest {
		t.Errorf("a literal credential header was accepted: %v", r)
	}
	do("POST", "/api/mcp/servers", fmt.Sprintf(`{"name":"rt","allow_private":true,"headers":{"Authorization":"Bearer ${REL_MCP_TOKEN}"},"transport":{"type":"http","url":%q}}`, mcpURL), 201)
	p.waitTool(t, "mcp_rt_echo", 20*time.Second)
	do("GET", "/api/mcp/servers", nil, 200)
	do("DELETE", "/api/mcp/servers/rt", nil, 204)
	do("GET", "/api/a2a/agents", nil, 200)
	do("POST", "/api/a2a/discover", fmt.Sprintf(`{"url":%q,"allow_private":true}`, peer.URL+"/a2a/agents/remote"), 200)
	sent := do("POST", "/api/a2a/send", `{"agent":"peer","message":"hi"}`, 200)
	if !strings.Contains(string(sent.Body), "peer says hi") {
		t.Errorf("the A2A token was not accepted by the peer: %v", sent)
	}
	if r := do("POST", "/api/a2a/send", `{"agent":"peerbad","message":"hi"}`, 0); r.Status < 400 {
		t.Errorf("the wrong A2A token was accepted: %v", r)
	}
	stream("/api/a2a/send", `{"agent":"peer","message":"hi","stream":true}`)
	stream("/api/a2a/send", `{"agent":"peerbad","message":"hi","stream":true}`)
	var task struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	decodeJSON(t, sent.Body, &task)
	do("GET", "/api/a2a/tasks/"+task.Task.ID+"?agent=peer", nil, 0)
	do("POST", "/api/a2a/tasks/no-such/cancel", nil, 0)
	for _, bad := range []string{"", "wrong", key + "x"} {
		p.callKey(t, "GET", "/api/agents", nil, bad, nil)
	}

	// /mcp, with the go-sdk client.
	hc := &http.Client{Transport: tp.transport(bearerTransport{key: key, next: loadTransport()})}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "secrets", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Error(err)
	}
	for _, c := range []mcp.CallToolParams{
		{Name: "agentd_agent_alpha", Arguments: map[string]any{"message": "hi over mcp"}},
		{Name: "agentd_agent_beta", Arguments: map[string]any{"message": "hi over mcp"}},
		{Name: "mcp_remote_echo", Arguments: map[string]any{"text": "over mcp"}},
		{Name: "a2a_peerbad", Arguments: map[string]any{"message": "over mcp"}},
	} {
		if _, err := cs.CallTool(ctx, &c); err != nil {
			t.Errorf("mcp %s: %v", c.Name, err)
		}
	}
	cs.Close()

	// A2A, with the a2a-go client.
	cl := a2aClient(t, p.URL, "alpha", key, tp.transport(loadTransport()))
	res, err := cl.SendMessage(ctx, textMessage("hi over a2a"))
	if err != nil {
		t.Fatal(err)
	}
	if tk, ok := res.(*a2a.Task); ok {
		_, _ = cl.GetTask(ctx, &a2a.GetTaskRequest{ID: tk.ID})
	}
	_, _ = cl.ListTasks(ctx, &a2a.ListTasksRequest{})
	for _, err := range cl.SendStreamingMessage(ctx, textMessage("stream over a2a")) {
		if err != nil {
			t.Error(err)
		}
	}

	// Positive controls: the secrets were really used.
	if good.Count() == 0 || mcpHits.Load() == 0 {
		t.Fatalf("controls: provider saw %d requests, MCP upstream %d authorised ones", good.Count(), mcpHits.Load())
	}

	p.Close()
	peer.Close()
	corpus := map[string]string{"responses": tp.String(), "daemon log": p.Logs.String(), "peer daemon log": peer.Logs.String(), "default logger": defaultLog.String()}
	var leaks []string
	for where, text := range corpus {
		for name, v := range secrets {
			if strings.Contains(text, v) || strings.Contains(text, v[strings.LastIndex(v, "-")+1:]) {
				i := strings.Index(text, v[strings.LastIndex(v, "-")+1:])
				leaks = append(leaks, fmt.Sprintf("%s in the %s: ...%s...", name, where, text[max(0, i-200):min(len(text), i+60)]))
			}
		}
		if strings.Contains(text, leakMarker) {
			i := strings.Index(text, leakMarker)
			leaks = append(leaks, fmt.Sprintf("a secret fragment in the %s: ...%s...", where, text[max(0, i-200):min(len(text), i+60)]))
		}
	}
	sort.Strings(leaks)
	for _, l := range leaks {
		t.Errorf("secret leaked: %s", l)
	}
	fig(t, areaAuth, "Secrets in outputs", "%d secrets (API key, 2 provider keys, 2 MCP header values, 2 A2A tokens, a stdio env value, a literal header sent to the API) × %d KiB of responses (%d exchanges over HTTP API, /mcp, A2A) and %d KiB of debug logs: %d found",
		len(secrets), len(corpus["responses"])>>10, tp.n, (len(corpus["daemon log"])+len(corpus["peer daemon log"])+len(corpus["default logger"]))>>10, len(leaks))
}
