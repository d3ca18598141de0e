//lint:file-ignore SA1019 the upstream of these tests asks for roots (deprecated in 2026-07-28, alive in 2025-11-25 sessions) on purpose

package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
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
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/tool"
)

// sessionFastHarness serves the gateway "up" (upstreamServer's tools, a
// tool answering a big result, one that asks the client for its roots
// mid-call, and a tool of another source) and the registry tool echo on
// /mcp.
func sessionFastHarness(t testing.TB) (*harness, string) {
	t.Helper()
	ts, up := upstreamServer(t)
	up.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ N int }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("0123456789abcdef", a.N/16)}}}, nil
		})
	up.AddTool(&mcp.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "roots: " + err.Error()}}, IsError: true}, nil
			}
			b, _ := json.Marshal(res.Roots)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	h := gatewayHarness(t, ts.URL, harnessOptions{
		cfg:   config.MCPServe{Gateways: []string{"up"}, ExposeTools: true},
		tools: []tool.Tool{fakeUpstream{name: "mcp_up_plain", server: "up", text: "plain text"}, echoTool{}},
	})
	srv := h.httpServer(t)
	gw := h.srv.gateways["up"]
	waitFor(t, func() bool { return served(gw, "roots") && served(gw, "say-hi") && served(gw, "plain") })
	return h, srv.URL
}

// served reports whether e serves the tool name.
func served(e *endpoint, name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.served[name]
	return ok
}

// sessionAnswer is what a client sees of a POST of its session: the
// status, the headers the SDK sets, and the JSON-RPC messages of the
// body (the server's requests with their id replaced: the SDK numbers
// them, the fast path names them) or its text.
type sessionAnswer struct {
	Status       int
	ContentType  string
	CacheControl string
	SessionID    bool
	Messages     []any
	Text         string
}

// rawSession is a client of one session that speaks HTTP itself, so
// that it can send any body.
type rawSession struct {
	t    testing.TB
	url  string
	sid  string
	auth string // the Authorization header, if any
}

// openSession initializes a 2025-11-25 session of a client declaring
// roots (as go-sdk's client does) and sends notifications/initialized.
func openSession(t testing.TB, url string) *rawSession {
	t.Helper()
	return openSessionAs(t, url, "")
}

// openSessionAs is openSession with an Authorization header.
func openSessionAs(t testing.TB, url, auth string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, auth: auth}
	a, sid := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if a.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %+v", a)
	}
	s.sid = sid
	if a, _ := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); a.Status != http.StatusAccepted {
		t.Fatalf("initialized: %+v", a)
	}
	return s
}

// close deletes the session.
func (s *rawSession) close() {
	req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
	req.Header.Set(headerSessionID, s.sid)
	req.Header.Set(headerProtocolVersion, "2025-11-25")
	if s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// post sends body in the session and reads the answer; a request of
// the server's on the stream is answered with one root.
func (s *rawSession) post(body string) (sessionAnswer, string) {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	if s.sid != "" {
		req.Header.Set(headerSessionID, s.sid)
		req.Header.Set(headerProtocolVersion, "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	a := sessionAnswer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), CacheControl: resp.Header.Get("Cache-Control"), SessionID: resp.Header.Get(headerSessionID) != ""}
	if a.ContentType != "text/event-stream" {
		raw, _ := io.ReadAll(resp.Body)
		var msg any
		if json.Unmarshal(raw, &msg) == nil {
			a.Messages = []any{msg}
		} else {
			a.Text = string(raw)
		}
		return a, resp.Header.Get(headerSessionID)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "id:") {
			a.Text += "[event id]"
		}
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(d), &msg); err != nil {
			a.Text += d
			continue
		}
		if id, ok := msg["id"]; ok && msg["method"] != nil {
			// The server asks: answer, and note the request without
			// its id.
			ans, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"roots": []any{map[string]any{"uri": "file:///work", "name": "work"}}}})
			if got, _ := s.post(string(ans)); got.Status != http.StatusAccepted {
				s.t.Errorf("answering %v: %+v", msg, got)
			}
			msg["id"] = "ID"
		}
		a.Messages = append(a.Messages, msg)
	}
	return a, resp.Header.Get(headerSessionID)
}

// plannedFast reports whether route sends body, a POST of session sid at
// path, down the session fast path.
func plannedFast(h *harness, path, sid, body string) bool {
	e := h.srv.main
	if name, ok := strings.CutPrefix(path, "/mcp/gateway/"); ok {
		e = h.srv.gateways[name]
	}
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set(headerSessionID, sid)
	r.Header.Set(headerProtocolVersion, "2025-11-25")
	p, _, _ := h.srv.route(r, e, []byte(body))
	return p == pathSessionFast
}

// TestSessionFastPathMatchesSDK sends the same session traffic
// (initialize, initialized, then calls) through the SDK's stateful
// handler (the fast paths off) and through the session fast path, and
// requires the same answers: status, content type, cache control,
// session header, and the JSON-RPC messages on the stream (the server's
// roots/list request mid-call included). It also requires that the
// calls the fast path should take do take it, and that the others
// (and every call once the client set a log level) do not.
func TestSessionFastPathMatchesSDK(t *testing.T) {
	h, base := sessionFastHarness(t)
	call := func(id, name, args string, extra ...string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + strings.Join(extra, "") + `}}`
	}
	gw, main := "/mcp/gateway/up", "/mcp"
	steps := []struct {
		name, path, body string
		fast             bool
	}{
		{"content blocks", gw, call(`1`, "say-hi", `{"who":"bob"}`), true},
		{"tool error", gw, call(`"two"`, "fail", `{}`), true},
		{"upstream JSON-RPC error", gw, call(`3`, "reject", `{}`), true},
		{"tool of another source", gw, call(`4`, "plain", `{}`), true},
		{"big result", gw, call(`5`, "big", `{"n":300000}`), true},
		{"roots asked mid-call", gw, call(`6`, "roots", `{}`), true},
		{"arguments not an object", gw, call(`7`, "say-hi", `"bob"`), true},
		{"arguments absent", gw, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"say-hi"}}`, true},
		{"_meta without a version", gw, call(`9`, "say-hi", `{"who":"al"}`, `,"_meta":{"trace":"x"}`), true},
		{"registry tool", main, call(`10`, "echo", `{"text":"hello"}`), true},
		{"registry tool, bad arguments", main, call(`11`, "echo", `{"text":5}`), true},
		{"unknown tool", gw, call(`12`, "nope", `{}`), false},
		{"no name", gw, `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"arguments":{}}}`, false},
		{"no params", gw, `{"jsonrpc":"2.0","id":14,"method":"tools/call"}`, false},
		{"progress token", gw, call(`15`, "say-hi", `{"who":"al"}`, `,"_meta":{"progressToken":"p1"}`), false},
		{"per-request protocol version", gw, call(`16`, "say-hi", `{}`, `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}`), false},
		{"id that does not round-trip", gw, call(`17.0`, "say-hi", `{}`), false},
		{"NAME for name", gw, `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"NAME":"say-hi","arguments":{}}}`, false},
		{"sampling declared in _meta", gw, call(`19`, "say-hi", `{}`, `,"_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`), false},
		{"log level set", gw, `{"jsonrpc":"2.0","id":20,"method":"logging/setLevel","params":{"level":"debug"}}`, false},
		{"a call once the level is set", gw, call(`21`, "say-hi", `{"who":"cy"}`), false},
	}
	run := func(sdkOnly bool) []sessionAnswer {
		h.srv.sdkOnly.Store(sdkOnly)
		defer h.srv.sdkOnly.Store(false)
		sessions := map[string]*rawSession{}
		var out []sessionAnswer
		for _, st := range steps {
			s := sessions[st.path]
			if s == nil {
				s = openSession(t, base+st.path)
				t.Cleanup(s.close)
				sessions[st.path] = s
			}
			if !sdkOnly {
				if got := plannedFast(h, st.path, s.sid, st.body); got != st.fast {
					t.Errorf("%s: fast path planned %v, want %v", st.name, got, st.fast)
				}
			}
			a, _ := s.post(st.body)
			out = append(out, a)
		}
		return out
	}
	sdk := run(true)
	fast := run(false)
	for i, st := range steps {
		if !reflect.DeepEqual(fast[i], sdk[i]) {
			t.Errorf("%s:\nfast %+v\nSDK  %+v", st.name, fast[i], sdk[i])
		}
	}
	if s := sdk[5]; len(s.Messages) != 2 {
		t.Errorf("roots asked mid-call: the SDK's stream has %d messages, want the request and the answer: %+v", len(s.Messages), s)
	}
}

// TestSessionFastPathDuplicateID: a request whose id is in flight in its
// session already is refused as the SDK refuses it, whichever path runs
// the first.
func TestSessionFastPathDuplicateID(t *testing.T) {
	release := make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(ts.Close)
	h := gatewayHarness(t, ts.URL, harnessOptions{cfg: config.MCPServe{Gateways: []string{"up"}}})
	url := h.httpServer(t).URL + "/mcp/gateway/up"
	waitFor(t, func() bool { return served(h.srv.gateways["up"], "block") })
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block","arguments":{}}}`
	var answers []sessionAnswer
	for _, sdkOnly := range []bool{true, false} {
		h.srv.sdkOnly.Store(sdkOnly)
		s := openSession(t, url)
		first := make(chan sessionAnswer, 1)
		go func() { a, _ := s.post(body); first <- a }()
		waitFor(t, func() bool {
			rid, _ := parseID(json.RawMessage(`7`))
			return h.srv.gateways["up"].flights.running(flightKey{s.sid, rid})
		})
		dup, _ := s.post(body)
		answers = append(answers, dup)
		release <- struct{}{}
		if a := <-first; a.Status != http.StatusOK || len(a.Messages) != 1 {
			t.Errorf("the first call (sdkOnly %v): %+v", sdkOnly, a)
		}
		s.close()
	}
	h.srv.sdkOnly.Store(false)
	if answers[0].Status != http.StatusBadRequest {
		t.Errorf("the SDK answered a duplicate with %+v", answers[0])
	}
	if !reflect.DeepEqual(answers[0], answers[1]) {
		t.Errorf("duplicate:\nfast %+v\nSDK  %+v", answers[1], answers[0])
	}
}

// FuzzSessionFastPathMatchesSDK: whatever a session's POST body says,
// the session fast path answers it as the SDK's stateful handler does,
// or leaves it to the SDK. Each input goes to a fresh session on each
// path, of the gateway or of /mcp.
func FuzzSessionFastPathMatchesSDK(f *testing.F) {
	h, base := sessionFastHarness(f)
	call := func(id, name, args string, extra ...string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + strings.Join(extra, "") + `}}`
	}
	for _, seed := range []struct {
		body    string
		gateway bool
	}{
		{call(`1`, "say-hi", `{"who":"bob"}`), true},
		{call(`"a"`, "fail", `{}`), true},
		{call(`2`, "reject", `{}`), true},
		{call(`3`, "big", `{"n":100000}`), true},
		{call(`4`, "roots", `{}`), true},
		{call(`5`, "plain", `null`), true},
		{call(`6`, "nope", `{}`), true},
		{call(`7`, "say-hi", `{}`, `,"_meta":{"progressToken":1}`), true},
		{call(`8`, "say-hi", `{}`, `,"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`), true},
		{call(`9`, "echo", `{"text":"hi"}`), false},
		{call(`"\u0041"`, "echo", `{"text":"hi"}`), false},
		{call(`10`, "echo", `"text"`), false},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","name":"echo","arguments":{}}}`, false},
		{`[` + call(`12`, "echo", `{}`) + `]`, false},
	} {
		f.Add(seed.body, seed.gateway)
	}
	f.Fuzz(func(t *testing.T, body string, gateway bool) {
		url := base + "/mcp"
		if gateway {
			url += "/gateway/up"
		}
		answer := func(sdkOnly bool) sessionAnswer {
			h.srv.sdkOnly.Store(sdkOnly)
			defer h.srv.sdkOnly.Store(false)
			s := openSession(t, url)
			defer s.close()
			a, _ := s.post(body)
			return a
		}
		sdk, fast := answer(true), answer(false)
		if !reflect.DeepEqual(fast, sdk) {
			t.Errorf("body %s:\nfast %+v\nSDK  %+v", body, fast, sdk)
		}
	})
}

// TestSessionBook: the book forgets a deleted session, sends calls to the
// SDK once its idle timer may be running low, and sweeps out sessions
// the SDK closed.
func TestSessionBook(t *testing.T) {
	h, base := sessionFastHarness(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`
	s := openSession(t, base+"/mcp")
	if !plannedFast(h, "/mcp", s.sid, body) {
		t.Fatal("a call of a fresh session does not take the fast path")
	}
	b := h.srv.main.book
	b.mu.Lock()
	b.m[s.sid].last = b.m[s.sid].last.Add(-b.timeout / 4)
	b.mu.Unlock()
	if plannedFast(h, "/mcp", s.sid, body) {
		t.Error("a call takes the fast path although the session's idle timer may run low")
	}
	if a, _ := s.post(body); a.Status != http.StatusOK {
		t.Fatalf("call: %+v", a)
	}
	if !plannedFast(h, "/mcp", s.sid, body) {
		t.Error("the SDK's POST did not restart the book's idle clock")
	}
	s.close()
	if plannedFast(h, "/mcp", s.sid, body) {
		t.Error("a deleted session's call takes the fast path")
	}
	if a, _ := s.post(body); a.Status != http.StatusNotFound {
		t.Errorf("a deleted session's call: %+v, want the SDK's 404", a)
	}
	// A session the SDK closed behind the book's back is swept out
	// once the book has grown.
	gone := openSession(t, base+"/mcp")
	for ss := range h.srv.main.srv.Sessions() {
		if ss.ID() == gone.sid {
			ss.Close()
		}
	}
	b.mu.Lock()
	grow := b.sweep + 1
	b.mu.Unlock()
	for range grow {
		t.Cleanup(openSession(t, base+"/mcp").close)
	}
	b.mu.Lock()
	_, kept := b.m[gone.sid]
	n := len(b.m)
	b.mu.Unlock()
	if kept {
		t.Error("a closed session stayed in the book")
	}
	if live := len(slices.Collect(h.srv.main.srv.Sessions())); n > live {
		t.Errorf("the book holds %d sessions, the SDK %d", n, live)
	}
}

// TestSessionFastPathKeepsSessionAlive: a call on the session fast path
// that runs longer than the session's idle timeout does not let the SDK
// close the session under it, as the SDK's own POST would not (it pauses
// the timer). The SDK's timer runs on the wall clock, so the test waits
// on it.
func TestSessionFastPathKeepsSessionAlive(t *testing.T) {
	release := make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(ts.Close)
	const timeout = time.Second
	h := gatewayHarness(t, ts.URL, harnessOptions{cfg: config.MCPServe{Gateways: []string{"up"}}, sessionTimeout: timeout})
	url := h.httpServer(t).URL + "/mcp/gateway/up"
	waitFor(t, func() bool { return served(h.srv.gateways["up"], "block") })
	s := openSession(t, url)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{}}}`
	if !plannedFast(h, "/mcp/gateway/up", s.sid, body) {
		t.Fatal("the call does not take the session fast path")
	}
	done := make(chan sessionAnswer, 1)
	go func() { a, _ := s.post(body); done <- a }()
	time.Sleep(3 * timeout)
	close(release)
	if a := <-done; a.Status != http.StatusOK || len(a.Messages) != 1 {
		t.Fatalf("the call: %+v", a)
	}
	if a, _ := s.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); a.Status != http.StatusOK {
		t.Errorf("after a call longer than the idle timeout, the session answers %+v", a)
	}
}

// TestSessionFastPathPrincipals: with keyed principals, a session's call
// is answered as the SDK answers it on both paths: the owner's call, a
// call the owner may not make (a tool error), and another principal's or
// an anonymous use of the session (the SDK's 403).
func TestSessionFastPathPrincipals(t *testing.T) {
	ts, _ := upstreamServer(t)
	h := gatewayHarness(t, ts.URL, harnessOptions{cfg: config.MCPServe{Gateways: []string{"up"}}})
	users := map[string]*principal.Principal{
		"alice": {Name: "alice", Tools: []string{"*"}},
		"bob":   {Name: "bob", Tools: []string{"mcp_up_fail"}},
	}
	mux := http.NewServeMux()
	h.srv.Mount(mux)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]; p != nil {
			r = r.WithContext(principal.NewContext(r.Context(), p))
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/mcp/gateway/up"
	waitFor(t, func() bool { return served(h.srv.gateways["up"], "say-hi") })
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"say-hi","arguments":{"who":"x"}}}`
	type step struct {
		name       string
		fast       bool
		as, holder string // who posts, whose session
	}
	steps := []step{
		{"the owner", true, "alice", "alice"},
		{"a tool the owner may not call", true, "bob", "bob"},
		{"another principal in the session", false, "bob", "alice"},
		{"no key in the session", false, "", "alice"},
	}
	run := func(sdkOnly bool) []sessionAnswer {
		h.srv.sdkOnly.Store(sdkOnly)
		defer h.srv.sdkOnly.Store(false)
		sessions := map[string]*rawSession{}
		for _, u := range []string{"alice", "bob"} {
			sessions[u] = openSessionAs(t, url, "Bearer "+u)
			t.Cleanup(sessions[u].close)
		}
		var out []sessionAnswer
		for _, st := range steps {
			s := *sessions[st.holder]
			s.auth = ""
			if st.as != "" {
				s.auth = "Bearer " + st.as
			}
			a, _ := s.post(call)
			out = append(out, a)
			if sdkOnly {
				continue
			}
			if fast := onFastPathAfter(h, &s, call); fast != st.fast {
				t.Errorf("%s: fast path planned %v, want %v", st.name, fast, st.fast)
			}
		}
		return out
	}
	sdk, fast := run(true), run(false)
	for i, st := range steps {
		if !reflect.DeepEqual(fast[i], sdk[i]) {
			t.Errorf("%s:\nfast %+v\nSDK  %+v", st.name, fast[i], sdk[i])
		}
	}
	if b, _ := json.Marshal(sdk[1].Messages); sdk[0].Status != http.StatusOK || !strings.Contains(string(b), "forbidden") {
		t.Errorf("the SDK's answers to the owner and to a forbidden call: %+v, %s", sdk[0], b)
	}
	if sdk[2].Status != http.StatusForbidden || sdk[3].Status != http.StatusForbidden {
		t.Errorf("the SDK let another principal use the session: %+v, %+v", sdk[2], sdk[3])
	}
}

// onFastPathAfter reports whether route sends body, posted by s's
// principal in its session, down the session fast path.
func onFastPathAfter(h *harness, s *rawSession, body string) bool {
	r := httptest.NewRequest(http.MethodPost, "/mcp/gateway/up", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set(headerSessionID, s.sid)
	r.Header.Set(headerProtocolVersion, "2025-11-25")
	if s.auth != "" {
		r.Header.Set("Authorization", s.auth)
		if p, ok := map[string]*principal.Principal{"Bearer alice": {Name: "alice"}, "Bearer bob": {Name: "bob"}}[s.auth]; ok {
			r = r.WithContext(principal.NewContext(r.Context(), p))
		}
	}
	p, _, _ := h.srv.route(r, h.srv.gateways["up"], []byte(body))
	return p == pathSessionFast
}

// TestSessionFastAnswerFraming: a call answered by one event on the
// session fast path leaves in one body with a Content-Length (its one
// event is not flushed on its own); a call that asks the client for its
// roots first still gets that request flushed to the client before its
// answer, so it can be answered.
func TestSessionFastAnswerFraming(t *testing.T) {
	h, url := sessionFastHarness(t)
	s := openSession(t, url+"/mcp/gateway/up")
	defer s.close()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"say-hi","arguments":{}}}`
	if !plannedFast(h, "/mcp/gateway/up", s.sid, body) {
		t.Fatal("the call was not planned on the fast path")
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp/gateway/up", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerSessionID, s.sid)
	req.Header.Set(headerProtocolVersion, "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ContentLength != int64(len(raw)) || len(resp.TransferEncoding) != 0 || !strings.HasPrefix(string(raw), "event: message\ndata: ") {
		t.Fatalf("answer: Content-Length %d, Transfer-Encoding %v, body %q", resp.ContentLength, resp.TransferEncoding, raw)
	}
	// roots: the server's request, answered by post, then the answer.
	a, _ := s.post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	if b, _ := json.Marshal(a.Messages); len(a.Messages) != 2 || !strings.Contains(string(b), "file:///work") {
		t.Fatalf("roots call: %+v", a)
	}
}
