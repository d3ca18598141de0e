//lint:file-ignore SA1019 the initialize-era features (roots, sampling, logging; deprecated in 2026-07-28, alive in every earlier version) are served on purpose

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/telemetry"
)

// The fast path for a gateway's tools/call in a session (2025-11-25 and
// earlier). As for stateless calls (fastcall.go), the SDK's path costs
// more than the call: each POST becomes a logical stream, a goroutine,
// and an SSE response flushed once per message. Here the MCP edge serves
// the call itself, inside the session (held as the SDK holds it for a
// POST, so its idle timeout waits) and through the same handler and
// middleware, and answers application/json. When the upstream asks the
// client something during the call (roots/list) or logs about it, the
// answer becomes an event stream: the question goes out on it, the client's answer comes
// back as a POST the edge routes to the call (fastAnswers), and the
// result follows on the stream, as the SDK would send them.
//
// The SDK keeps the calls it alone can serve as they were: replicated
// sessions (sessionTable), progress tokens, clients that take sampling or
// elicitation (its own session methods send those), and anything it
// would refuse.

// fastAnswerPrefix starts the ids of the requests the fast path sends a
// client; the SDK's own are numbers, so the two cannot collide.
const fastAnswerPrefix = "agentd-fast-"

// fastSessions is the fast path's state of an endpoint's sessions.
type fastSessions struct {
	next atomic.Uint64

	mu      sync.Mutex
	calls   map[flightKey]*fastFlight   // calls in flight, for notifications/cancelled
	answers map[string]fastAnswer       // questions asked, by id
	logging map[string]mcp.LoggingLevel // the log level sessions set
}

type fastAnswer struct {
	session string
	ch      chan []byte
}

// fastFlight is a call in flight on the session fast path.
type fastFlight struct {
	cancel context.CancelFunc
	// cancelled: the client cancelled it (notifications/cancelled), so
	// its response is not sent (see answerFilter).
	cancelled bool
}

// start registers a call; false when its id is already in flight.
func (f *fastSessions) start(k flightKey, cancel context.CancelFunc) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.calls[k]; dup {
		return false
	}
	if f.calls == nil {
		f.calls = map[flightKey]*fastFlight{}
	}
	f.calls[k] = &fastFlight{cancel: cancel}
	return true
}

// finish unregisters a call and reports whether its client cancelled it.
func (f *fastSessions) finish(k flightKey) (cancelled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl := f.calls[k]; fl != nil {
		cancelled = fl.cancelled
	}
	delete(f.calls, k)
	return cancelled
}

// cancelled cancels the call k names, if it is on the fast path.
func (f *fastSessions) cancelled(k flightKey) {
	f.mu.Lock()
	fl := f.calls[k]
	if fl != nil {
		fl.cancelled = true
	}
	f.mu.Unlock()
	if fl != nil {
		fl.cancel()
	}
}

// ask registers a question to session's client and returns its id and
// where the answer arrives.
func (f *fastSessions) ask(session string) (string, chan []byte) {
	id := fastAnswerPrefix + strconv.FormatUint(f.next.Add(1), 10)
	ch := make(chan []byte, 1)
	f.mu.Lock()
	if f.answers == nil {
		f.answers = map[string]fastAnswer{}
	}
	f.answers[id] = fastAnswer{session, ch}
	f.mu.Unlock()
	return id, ch
}

func (f *fastSessions) forget(id string) {
	f.mu.Lock()
	delete(f.answers, id)
	f.mu.Unlock()
}

// answered hands msg, a response POSTed in session, to the question it
// answers; false when it answers none of the fast path's.
func (f *fastSessions) answered(session string, id json.RawMessage, msg []byte) bool {
	var s string
	if !strings.HasPrefix(string(id), `"`+fastAnswerPrefix) || json.Unmarshal(id, &s) != nil {
		return false
	}
	f.mu.Lock()
	a, ok := f.answers[s]
	if ok && a.session == session {
		delete(f.answers, s)
	}
	f.mu.Unlock()
	if !ok || a.session != session {
		return false
	}
	a.ch <- msg
	return true
}

// setLevel notes the log level a session's client set (a
// logging/setLevel request, msg), so that the upstream's log messages
// about its calls reach it as the SDK would send them. Sessions the
// server no longer has are dropped then, so the map stays as small as
// the live sessions.
func (f *fastSessions) setLevel(session string, msg []byte, srv *mcp.Server) {
	var req struct {
		Params struct {
			Level mcp.LoggingLevel `json:"level"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &req) != nil || levelRank(req.Params.Level) < 0 {
		return // the SDK refuses it
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.logging == nil {
		f.logging = map[string]mcp.LoggingLevel{}
	}
	f.logging[session] = req.Params.Level
	if len(f.logging) > 16 {
		live := map[string]bool{}
		for ss := range srv.Sessions() {
			live[ss.ID()] = true
		}
		for id := range f.logging {
			if !live[id] {
				delete(f.logging, id)
			}
		}
	}
}

func (f *fastSessions) level(session string) mcp.LoggingLevel {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logging[session]
}

// levelRank orders the log levels of RFC 5424 as MCP names them; -1 for
// an unknown one.
func levelRank(l mcp.LoggingLevel) int {
	return slices.Index([]mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}, l)
}

// fastSession serves body, a tools/call of session sid at gateway e,
// when it can; it reports false, having written nothing, when the SDK
// must.
func (s *Server) fastSession(w http.ResponseWriter, r *http.Request, e *endpoint, sid string, body []byte) bool {
	sdk, ok := e.stateful.(*mcp.StreamableHTTPHandler)
	if !ok || e.name == "" {
		return false
	}
	h := r.Header
	if v := h.Get(headerProtocolVersion); v != "" && (v >= statelessVersion || !slices.Contains(mcp.SupportedProtocolVersions(), v)) {
		return false
	}
	if !jsonContent(h.Get("Content-Type")) || len(h.Values("Last-Event-ID")) > 0 || !sdkHostAllowed(r) {
		return false
	}
	if jsonOK, streamOK := accepts(h.Values("Accept")); !jsonOK || !streamOK {
		return false
	}
	env, p, _, ok := readCall(body, &s.metas)
	if !ok {
		return false
	}
	if _, ok := p.Meta["progressToken"]; ok {
		return false
	}
	if _, ok := p.Meta[mcp.MetaKeyProtocolVersion]; ok {
		return false
	}
	e.mu.Lock()
	ft, ok := e.fast[p.Name]
	e.mu.Unlock()
	if !ok || ft.relayed == nil || ft.paramHeaders {
		return false
	}
	rid, ok := parseID(env.ID)
	if !ok {
		return false
	}
	tok := tokenInfo(r)
	ss, release, ok := sdk.HoldSession(sid, tok)
	if !ok {
		return false
	}
	defer release()
	ip := ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion >= statelessVersion {
		return false
	}
	caps := ip.Capabilities
	if caps != nil && (caps.Sampling != nil || caps.Elicitation != nil) {
		return false
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	key := flightKey{sid, rid}
	if !e.fastSessions.start(key, cancel) {
		b, _ := json.Marshal(wireResponse{"2.0", env.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %v", rid.Raw())}})
		writeJSON(w, http.StatusBadRequest, b)
		return true
	}
	st := &fastStream{w: w, f: &e.fastSessions, session: sid}
	caller := &mcpclient.Caller{Capabilities: caps}
	if caps != nil && caps.RootsV2 != nil {
		caller.ListRoots = st.listRoots
	}
	if level := e.fastSessions.level(sid); level != "" {
		caller.Log = func(_ context.Context, p *mcp.LoggingMessageParams) {
			if levelRank(p.Level) >= levelRank(level) {
				_ = st.notify("notifications/message", p)
			}
		}
	}
	telemetry.Inject(r.Context(), h)
	req := &fastRequest{
		CallToolRequest: &mcp.CallToolRequest{Session: ss, Params: &p, Extra: &mcp.RequestExtra{TokenInfo: tok, Header: h}},
		caller:          caller,
	}
	res, err := e.fastChain(ctx, "tools/call", req)
	if e.fastSessions.finish(key) {
		// Cancelled by the client: the stream ends without the
		// response, as on the SDK's path.
		st.end()
		return true
	}
	var out []byte
	if err == nil {
		if ctr, _ := res.(*mcp.CallToolResult); ctr == nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no result"}
		} else {
			out, err = mcp.MarshalCallToolResult(ctr, ip.ProtocolVersion, e.impl)
		}
	}
	if err != nil {
		// Before 2026-07-28 an error answer is a 200 like any other.
		b, _ := json.Marshal(wireResponse{"2.0", env.ID, toWire(err)})
		st.finish(b)
		return true
	}
	st.finish(resultResponse(env.ID, out))
	return true
}

// wireResponse is a JSON-RPC error response.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *jsonrpc.Error  `json:"error"`
}

// resultResponse is the JSON-RPC response carrying result.
func resultResponse(id json.RawMessage, result []byte) []byte {
	b := make([]byte, 0, len(result)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// fastStream is the response of a call on the session fast path: one
// JSON body, or an event stream once a question must go out before it.
type fastStream struct {
	w       http.ResponseWriter
	f       *fastSessions
	session string

	mu  sync.Mutex
	sse bool
}

// event writes msg as an event, turning the response into a stream.
func (st *fastStream) event(msg []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.eventLocked(msg)
}

func (st *fastStream) eventLocked(msg []byte) error {
	if !st.sse {
		st.w.Header().Set("Content-Type", "text/event-stream")
		st.w.Header().Set("Cache-Control", "no-cache, no-transform")
		st.w.WriteHeader(http.StatusOK)
		st.sse = true
	}
	if _, err := fmt.Fprintf(st.w, "event: message\ndata: %s\n\n", msg); err != nil {
		return err
	}
	return http.NewResponseController(st.w).Flush()
}

// end ends the response without the call's: an empty event stream.
func (st *fastStream) end() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.sse {
		st.w.Header().Set("Content-Type", "text/event-stream")
		st.w.Header().Set("Cache-Control", "no-cache, no-transform")
		st.w.WriteHeader(http.StatusOK)
		st.sse = true
	}
}

// finish writes the call's response.
func (st *fastStream) finish(msg []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sse {
		_ = st.eventLocked(msg)
		return
	}
	writeJSON(st.w, http.StatusOK, msg)
}

// notify sends the client a notification on the call's stream.
func (st *fastStream) notify(method string, params any) error {
	msg, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return err
	}
	return st.event(msg)
}

// listRoots asks the client for its roots on the call's stream.
func (st *fastStream) listRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	var res mcp.ListRootsResult
	if err := st.ask(ctx, "roots/list", p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ask sends the client a request on the call's stream and decodes its
// answer into result.
func (st *fastStream) ask(ctx context.Context, method string, params, result any) error {
	id, ch := st.f.ask(st.session)
	defer st.f.forget(id)
	msg, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return err
	}
	if err := st.event(msg); err != nil {
		return fmt.Errorf("ask the client (%s): %w", method, err)
	}
	select {
	case ans := <-ch:
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *jsonrpc.Error  `json:"error"`
		}
		if err := json.Unmarshal(ans, &resp); err != nil {
			return fmt.Errorf("the client's answer to %s: %w", method, err)
		}
		if resp.Error != nil {
			return resp.Error
		}
		return json.Unmarshal(resp.Result, result)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sdkHostAllowed is the SDK's DNS rebinding check: a loopback listener
// answers only requests naming a loopback host. The fast paths leave a
// refused request to the SDK, which answers 403.
func sdkHostAllowed(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	return !sdkLoopback(la.String()) || sdkLoopback(r.Host)
}

// sdkLoopback is the SDK's loopback test (internal/util.IsLoopback).
func sdkLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
