//lint:file-ignore SA1019 sampling, roots and logging are relayed on purpose

package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// fakeCaller is a Caller whose answers and log messages are recorded.
type fakeCaller struct {
	mu      sync.Mutex
	logs    []string
	elicits int
	ctxVals []any // the value of callCtxKey seen by each function
}

type callCtxKey struct{}

func (f *fakeCaller) seen(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ctxVals = append(f.ctxVals, ctx.Value(callCtxKey{}))
}

func (f *fakeCaller) logged() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.logs...)
}

// caller builds a Caller offering kinds ("elicit", "sample", "roots",
// "log").
func (f *fakeCaller) caller(kinds ...string) *Caller {
	c := &Caller{Capabilities: &mcp.ClientCapabilities{}}
	for _, k := range kinds {
		switch k {
		case "elicit":
			c.Capabilities.Elicitation = &mcp.ElicitationCapabilities{}
			c.Elicit = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				f.seen(ctx)
				f.mu.Lock()
				f.elicits++
				f.mu.Unlock()
				if p.Message == "" || p.RequestedSchema == nil {
					return nil, fmt.Errorf("elicitation without message or schema: %+v", p)
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ann"}}, nil
			}
		case "sample":
			c.Capabilities.Sampling = &mcp.SamplingCapabilities{}
			c.CreateMessage = func(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
				f.seen(ctx)
				if len(p.Messages) != 1 || len(p.Messages[0].Content) != 1 {
					return nil, fmt.Errorf("sampling messages %+v", p.Messages)
				}
				return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
			}
		case "roots":
			c.Capabilities.RootsV2 = &mcp.RootCapabilities{}
			c.ListRoots = func(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
				f.seen(ctx)
				return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///a"}, {URI: "file:///b"}}}, nil
			}
		case "log":
			c.Log = func(ctx context.Context, p *mcp.LoggingMessageParams) {
				f.seen(ctx)
				f.mu.Lock()
				f.logs = append(f.logs, fmt.Sprint(p.Data))
				f.mu.Unlock()
			}
		}
	}
	return c
}

// startLink starts the fault server as name over link "stdio" (which
// speaks 2026-07-28) or "http" (stateful Streamable HTTP: 2025-11-25) and
// checks that the link speaks what the tests assume.
func startLink(t *testing.T, link string, edit func(*config.MCPServer)) *Manager {
	t.Helper()
	o := httpOptions(nil)
	m := newTestManager(t, o)
	entry := faultServer(t, "up", "normal")
	want := "2026-07-28"
	if link == "http" {
		entry = httpEntry("up", "streamable", startHTTPChild(t, "streamable", "127.0.0.1:0").url())
		want = "2025-11-25"
	}
	if edit != nil {
		edit(&entry)
	}
	if err := m.Add(context.Background(), entry); err != nil {
		t.Fatal(err)
	}
	if st := waitConnected(t, m, "up"); st.ProtocolVersion != want {
		t.Fatalf("the %s link speaks %s, want %s", link, st.ProtocolVersion, want)
	}
	return m
}

// callAs calls a tool of m for c (nil: an agent) with a context value the
// Caller's functions must see.
func callAs(t *testing.T, m *Manager, name string, c *Caller, args any) (tool.Result, *CallRecord, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), callCtxKey{}, "call-ctx"), 20*time.Second)
	defer cancel()
	ex := &Exchange{Caller: c}
	res, err := callRelay(ctx, mustTool(t, m, name), args, ex)
	return res, &ex.Record, err
}

// TestCallerOnInitializeEraLink checks what a 2025-11-25 server sends of
// its own during a call: it reaches the call's caller, with the call's
// context values, and is refused when no caller can answer.
func TestCallerOnInitializeEraLink(t *testing.T) {
	m := startLink(t, "http", nil)
	tests := []struct {
		name  string
		tool  string
		kinds []string // nil: an agent's call
		agent bool
		want  string // in the result text
		isErr bool
	}{
		{"elicitation relayed", "mcp_up_ask", []string{"elicit"}, false, "accept ann", false},
		{"sampling relayed", "mcp_up_sample", []string{"sample"}, false, "model said hello", false},
		{"an agent cannot answer", "mcp_up_ask", nil, true, "elicitation/create is not supported by the calling client: the call was made by an agentd agent", true},
		{"a caller without the capability", "mcp_up_sample", []string{"elicit"}, false, "sampling/createMessage is not supported by the calling client: the calling client does not offer it", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeCaller{}
			var c *Caller
			if !tt.agent {
				c = f.caller(tt.kinds...)
			}
			res, _, err := callAs(t, m, tt.tool, c, map[string]any{})
			if err != nil || res.IsError != tt.isErr || !strings.Contains(res.Content, tt.want) {
				t.Fatalf("result %+v, err %v; want %q (error %v)", res, err, tt.want, tt.isErr)
			}
			for _, v := range f.ctxVals {
				if v != "call-ctx" {
					t.Errorf("the caller ran under a context without the call's values: %v", v)
				}
			}
		})
	}

	t.Run("log messages arrive before the result", func(t *testing.T) {
		// Each log message is handled on the SDK's notification goroutine
		// while the result goes straight to the call: repeat, so a race
		// between them would show.
		for i := range 20 {
			f := &fakeCaller{}
			text := fmt.Sprintf("line %d", i)
			res, _, err := callAs(t, m, "mcp_up_log", f.caller("log"), map[string]any{"text": text})
			if err != nil || res.Content != "logged" {
				t.Fatalf("log: %+v, %v", res, err)
			}
			if got := f.logged(); len(got) != 1 || got[0] != text {
				t.Fatalf("round %d: caller got logs %q when the call returned, want [%q]", i, got, text)
			}
			// The log message is handed over under the call's context
			// (its values say which downstream request it belongs to),
			// not the link's.
			for _, v := range f.ctxVals {
				if v != "call-ctx" {
					t.Fatalf("round %d: the log message reached the caller under a context without the call's values: %v", i, v)
				}
			}
		}
	})

	t.Run("several calls in flight", func(t *testing.T) {
		// A request of the server's own does not say which call it is
		// about: with two in flight, neither caller may be asked.
		f := &fakeCaller{}
		slow := mustTool(t, m, "mcp_up_slow")
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := callRelay(ctx, slow, map[string]any{"ms": 3000}, &Exchange{Caller: f.caller("elicit")})
			done <- err
		}()
		srv := m.server("up")
		waitFor(t, 5*time.Second, "the slow call to be in flight", func() bool {
			n := 0
			srv.calls.Range(func(any, any) bool { n++; return true })
			return n == 1
		})
		res, _, err := callAs(t, m, "mcp_up_ask", f.caller("elicit"), map[string]any{})
		if err != nil || !res.IsError || !strings.Contains(res.Content, "several tool calls are in flight") {
			t.Fatalf("ask beside another call: %+v, %v", res, err)
		}
		f.mu.Lock()
		asked := f.elicits
		f.mu.Unlock()
		if asked != 0 {
			t.Fatalf("a caller was asked %d times", asked)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestCallerOnModernLink checks input requests (SEP-2322) on a 2026-07-28
// link: the call declares its caller's capabilities (none for an agent),
// the caller answers and the call is made again, or the request is handed
// up whole (PassInput) and answered in the caller's next call.
func TestCallerOnModernLink(t *testing.T) {
	m := startLink(t, "stdio", nil)
	tests := []struct {
		name  string
		kinds []string
		agent bool
		want  string
		isErr bool
	}{
		{"an agent declares nothing", nil, true, "no input asked", false},
		{"elicitation", []string{"elicit"}, false, "name=ann", false},
		{"all three in one round", []string{"elicit", "sample", "roots"}, false, "name=ann, greeting=hello, roots=2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeCaller{}
			var c *Caller
			if !tt.agent {
				c = f.caller(tt.kinds...)
			}
			res, rec, err := callAs(t, m, "mcp_up_ask_input", c, map[string]any{})
			if err != nil || res.IsError != tt.isErr || res.Content != tt.want {
				t.Fatalf("result %+v, err %v; want %q", res, err, tt.want)
			}
			if rec.Result == nil || rec.Result.NeedsInput() {
				t.Fatalf("recorded %+v, want the final result", rec.Result)
			}
			for _, v := range f.ctxVals {
				if v != "call-ctx" {
					t.Errorf("the caller ran under a context without the call's values: %v", v)
				}
			}
		})
	}

	t.Run("a capability without its function is refused", func(t *testing.T) {
		c := (&fakeCaller{}).caller("elicit")
		c.Capabilities.Sampling = &mcp.SamplingCapabilities{}
		res, rec, err := callAs(t, m, "mcp_up_ask_input", c, map[string]any{})
		if err != nil || !res.IsError || !strings.Contains(res.Content, "sampling/createMessage is not supported by the calling client") {
			t.Fatalf("result %+v, err %v", res, err)
		}
		if rec.Result == nil || !rec.Result.IsError {
			t.Fatalf("recorded %+v, want the tool error", rec.Result)
		}
	})

	t.Run("input handed up and answered in the next call", func(t *testing.T) {
		c := &Caller{Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, PassInput: true}
		_, rec, err := callAs(t, m, "mcp_up_ask_input", c, map[string]any{})
		if err != nil || rec.Result == nil || !rec.Result.NeedsInput() || rec.Result.RequestState != "state-1" {
			t.Fatalf("first round: %+v, %v", rec.Result, err)
		}
		if _, ok := rec.Result.InputRequests["name"].(*mcp.ElicitParams); !ok || len(rec.Result.InputRequests) != 1 {
			t.Fatalf("input requests %#v", rec.Result.InputRequests)
		}
		c.InputResponses = mcp.InputResponseMap{"name": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "bob"}}}
		c.RequestState = rec.Result.RequestState
		res, rec, err := callAs(t, m, "mcp_up_ask_input", c, map[string]any{})
		if err != nil || res.Content != "name=bob" || rec.Result.NeedsInput() {
			t.Fatalf("second round: %+v, %v", res, err)
		}
	})

	t.Run("log messages arrive before the result", func(t *testing.T) {
		for i := range 20 {
			f := &fakeCaller{}
			text := fmt.Sprintf("line %d", i)
			if _, _, err := callAs(t, m, "mcp_up_log", f.caller("log"), map[string]any{"text": text}); err != nil {
				t.Fatal(err)
			}
			if got := f.logged(); len(got) != 1 || got[0] != text {
				t.Fatalf("round %d: caller got logs %q when the call returned, want [%q]", i, got, text)
			}
			// The log message is handed over under the call's context
			// (its values say which downstream request it belongs to),
			// not the link's.
			for _, v := range f.ctxVals {
				if v != "call-ctx" {
					t.Fatalf("round %d: the log message reached the caller under a context without the call's values: %v", i, v)
				}
			}
		}
	})

	t.Run("requests of the server's own are refused", func(t *testing.T) {
		// 2026-07-28 has none: the server's SDK refuses before sending.
		res, _, err := callAs(t, m, "mcp_up_ask", (&fakeCaller{}).caller("elicit"), map[string]any{})
		if err != nil || !res.IsError {
			t.Fatalf("ask on a 2026-07-28 link: %+v, %v", res, err)
		}
	})
}

// TestCallerAnswerPausesTheIdleTimeout checks that a call whose caller
// takes longer than timeout_secs to answer (a person filling in a form)
// is not timed out meanwhile.
func TestCallerAnswerPausesTheIdleTimeout(t *testing.T) {
	for _, link := range []string{"stdio", "http"} {
		t.Run(link, func(t *testing.T) {
			m := startLink(t, link, func(s *config.MCPServer) { s.TimeoutSecs = 1 })
			c := (&fakeCaller{}).caller("elicit")
			answer := c.Elicit
			c.Elicit = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				time.Sleep(1500 * time.Millisecond)
				return answer(ctx, p)
			}
			name, want := "mcp_up_ask_input", "name=ann"
			if link == "http" {
				name, want = "mcp_up_ask", "accept ann"
			}
			res, _, err := callAs(t, m, name, c, map[string]any{})
			if err != nil || res.Content != want {
				t.Fatalf("slow answer: %+v, %v", res, err)
			}
		})
	}
}

func TestCapabilitiesMeta(t *testing.T) {
	tests := []struct {
		name string
		caps *mcp.ClientCapabilities
		want string
	}{
		{"nil", nil, `{}`},
		{"empty: no roots despite the SDK's default", &mcp.ClientCapabilities{}, `{}`},
		{"relayable ones", &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}, RootsV2: &mcp.RootCapabilities{ListChanged: true}},
			`{"elicitation":{"form":{}},"roots":{"listChanged":true},"sampling":{}}`},
		{"roots in the old field", func() *mcp.ClientCapabilities {
			c := &mcp.ClientCapabilities{}
			c.Roots.ListChanged = true
			return c
		}(), `{"roots":{"listChanged":true}}`},
		{"extensions are not relayed", &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(CapabilitiesMeta(tt.caps))
			if err != nil || string(b) != tt.want {
				t.Fatalf("got %s (%v), want %s", b, err, tt.want)
			}
		})
	}
}

func TestIsCallNotification(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":1}}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, false},
		{`{"jsonrpc":"2.0","id":4,"method":"notifications/progress"}`, false},
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"notifications/message\""}]}}`, false},
		{`{"jsonrpc":"2.0","id":3,"method":"notifications/message"}`, false},
		{`{"method":"notifications/message"`, false},
	}
	for _, tt := range tests {
		if got := isCallNotification([]byte(tt.msg)); got != tt.want {
			t.Errorf("isCallNotification(%s) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func FuzzIsCallNotification(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`))
	f.Add([]byte(`{"id":1,"method":"notifications/message"}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		want := json.Unmarshal(msg, &m) == nil && (m.Method == "notifications/message" || m.Method == "notifications/progress") && m.ID == nil
		if got := isCallNotification(msg); got != want {
			t.Fatalf("isCallNotification(%q) = %v, want %v", msg, got, want)
		}
	})
}

// TestLogGate checks the wait for log messages: it ends once what was
// read is handled, and after its limit a message never handled no longer
// holds later calls.
func TestLogGate(t *testing.T) {
	var g logGate
	ctx := context.Background()
	g.saw()
	g.saw()
	go func() {
		g.done()
		g.done()
	}()
	g.wait(ctx, 10*time.Second) // returns once both are handled

	g.saw() // never handled
	start := time.Now()
	g.wait(ctx, 50*time.Millisecond)
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("wait returned before its limit with a message unhandled")
	}
	start = time.Now()
	g.wait(ctx, 10*time.Second)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the lost message held a later wait for %s", d)
	}
}

// TestServerErrorInAnHTTPErrorStatus checks that a JSON-RPC error a
// 2026-07-28 server answers in an HTTP error status (the go-sdk's
// stateless server does for resources/read of an unknown resource, say)
// is the server's error, not the link failing: the call fails as a
// protocol error the model can read, the session is kept, and a gateway
// gets the error as the server sent it.
func TestServerErrorInAnHTTPErrorStatus(t *testing.T) {
	m := newTestManager(t, httpOptions(nil))
	child := startHTTPChild(t, "stateless", "127.0.0.1:0")
	if err := m.Add(context.Background(), httpEntry("up", "stateless", child.url())); err != nil {
		t.Fatal(err)
	}
	if st := waitConnected(t, m, "up"); st.ProtocolVersion != "2026-07-28" {
		t.Fatalf("protocol %s", st.ProtocolVersion)
	}
	cs, _ := m.Session("up")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nowhere"})
	rpcErr, ok := m.UpstreamError("up", err)
	if !ok || rpcErr.Code != mcp.CodeResourceNotFound || string(rpcErr.Data) != `{"uri":"test://nowhere"}` {
		t.Fatalf("UpstreamError(%v) = %+v, %v; want the server's resource-not-found with its data", err, rpcErr, ok)
	}
	res, err := callTool(ctx, mustTool(t, m, "mcp_read_resource"), map[string]any{"server": "up", "uri": "test://nowhere"})
	if err != nil || !res.IsError || !strings.Contains(res.Content, fmt.Sprintf("MCP error %d: Resource not found", mcp.CodeResourceNotFound)) {
		t.Fatalf("read through the agent tool: %+v, %v; want the server's error to read", res, err)
	}
	if st, _ := status(m, "up"); !st.Connected || st.Reconnects != 0 {
		t.Fatalf("the session did not survive a server error: %+v", st)
	}
	if _, ok := m.UpstreamError("up", context.Canceled); ok {
		t.Fatal("a context error taken for the server's")
	}
}
