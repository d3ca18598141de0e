//lint:file-ignore SA1019 the initialize-era features (roots, sampling, logging; deprecated in 2026-07-28, alive in every earlier version) are served on purpose

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/telemetry"
)

// The session fast path (pathSessionFast).
//
// A tools/call of an initialize-era session (2025-11-25 and earlier) on
// the SDK's stateful handler is decoded about four times by go-sdk v1.8.0
// (readBatch, extractRequestMeta, validateRequestMeta, the method's
// params), each time with a fresh streaming decoder and its ~32 KiB
// buffer: ~127 KB of garbage per call, and on two cores the collector
// then costs more than the call (docs/upstream.md). A gateway call or a
// registry tool's call needs none of the session machinery, so the MCP
// edge serves such a call itself: decoded once (readCall), through the
// same handler and middleware as the SDK's path (e.fastChain), with the
// session the SDK keeps (so audit records, taint and ownership see the
// same session), and answered in the SDK's wire form: a 200 event stream
// of "event: message" events (no event id: there is no event store).
//
// Only what the SDK would serve the same way takes this path; the rest
// goes to the SDK (pathSession):
//   - a session this endpoint's stateful SDK handler opened (sessionBook:
//     seen initialize, not deleted, its idle timer surely running), whose
//     client set no log level (the upstream's log messages would go on
//     the call's stream) and whose principal matches the one that opened
//     it (the SDK answers 403 otherwise);
//   - a client that declared neither sampling nor elicitation, in its
//     session or in _meta (the SDK's session methods send those, with
//     checks of their own). Roots, which nearly every client declares,
//     are asked here: an upstream's roots/list during the call goes out
//     on the call's stream and the client's answer, POSTed as any answer
//     is, comes back to the call (fastStream.listRoots);
//   - one tools/call as readCall reads it (exact field names, only name,
//     arguments and _meta), with an id that round-trips, no progress
//     token, no per-request protocol version (the SDK refuses those on a
//     stateful server), of a tool the endpoint serves on the fast path;
//   - the headers the SDK wants (JSON body, both media types accepted, a
//     known initialize-era protocol version or none, no Last-Event-ID, a
//     loopback Host on a loopback listener).
//
// A notifications/cancelled for such a call cancels it through flights,
// and its answer is not sent, as on the SDK's path; an id in flight on
// either path is refused as the SDK refuses a duplicate. The differential
// tests TestSessionFastPathMatchesSDK, TestSessionFastPathPrincipals,
// TestSessionFastPathDuplicateID and FuzzSessionFastPathMatchesSDK send
// the same session traffic down both paths and compare the answers.
//
// Where the two paths still differ, on purpose: the fast path names the
// roots/list requests it sends "agentd-fast-N" (the SDK numbers its own;
// a client answers whatever id it got); it reads the client's answer to
// one with encoding/json; a DELETE of the session during a fast call is
// answered at once (the SDK's waits for the calls it runs), the call
// still answering; and a result asking a session's client for input,
// which no fast-path handler makes (mcpclient.Caller answers or refuses
// an upstream's input requests for a session), is refused as a server
// bug instead of being turned into requests to the client.

// sessionBook is what the session fast path knows of the sessions of an
// endpoint's stateful SDK handler, from public hooks only: the receiving
// middleware sees initialize and logging/setLevel, serveSession sees
// every POST the SDK serves, and the DELETE that ends a session passes
// httpHandler.
type sessionBook struct {
	// timeout is the SDK handler's SessionTimeout: it closes a session
	// idle that long, counting from the end of its last POST.
	timeout time.Duration
	srv     *mcp.Server

	next atomic.Uint64 // numbers the requests fast calls send clients

	mu      sync.Mutex
	m       map[string]*liveSession
	sweep   int                     // sweep closed sessions out when m grows past this
	answers map[string]fastQuestion // requests sent to clients, by id
}

// fastQuestion is a request a fast call sent its client, awaiting the
// answer the client POSTs.
type fastQuestion struct {
	session string
	ch      chan []byte
}

// liveSession is an open session of the stateful handler.
type liveSession struct {
	ss     *mcp.ServerSession
	userID string // the principal that opened it, as the SDK binds it
	// logs: the client set a log level; the upstream's messages about
	// a call would go on its stream, so its calls take the SDK's path.
	logs bool
	sdk  int       // POSTs of the session the SDK is serving
	last time.Time // when the last of them ended: the SDK's idle timer runs from there
}

func newSessionBook(srv *mcp.Server, timeout time.Duration) *sessionBook {
	return &sessionBook{srv: srv, timeout: timeout}
}

// track is a receiving middleware that notes the sessions the SDK opens
// (a successful initialize of a session with an id: the stateful
// handler's, not a stateless request's) and their clients' log levels.
func (b *sessionBook) track(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || (method != "initialize" && method != "logging/setLevel") {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil || ss.ID() == "" {
			return res, err
		}
		if method == "logging/setLevel" {
			b.mu.Lock()
			if l := b.m[ss.ID()]; l != nil {
				l.logs = true
			}
			b.mu.Unlock()
			return res, err
		}
		var userID string
		if x := req.GetExtra(); x != nil && x.TokenInfo != nil {
			userID = x.TokenInfo.UserID
		}
		b.open(ss, userID)
		return res, err
	}
}

// open notes a new session. Sessions the SDK closed on its own (idle)
// are swept out once the book has doubled since the last sweep, so it
// stays as small as the live sessions at a constant cost per session.
func (b *sessionBook) open(ss *mcp.ServerSession, userID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]*liveSession{}
	}
	l := &liveSession{ss: ss, userID: userID, last: time.Now()}
	if old := b.m[ss.ID()]; old != nil {
		l.sdk = old.sdk // an initialize again, in a POST that counts
	}
	b.m[ss.ID()] = l
	if len(b.m) <= b.sweep {
		return
	}
	live := make(map[*mcp.ServerSession]bool, len(b.m))
	for s := range b.srv.Sessions() {
		live[s] = true
	}
	for id, l := range b.m {
		if !live[l.ss] {
			delete(b.m, id)
		}
	}
	b.sweep = 2*len(b.m) + 16
}

// forget drops a session that ended.
func (b *sessionBook) forget(sid string) {
	b.mu.Lock()
	delete(b.m, sid)
	b.mu.Unlock()
}

// sdkStart and sdkEnd bracket a POST of session sid that the SDK serves:
// its idle timer is paused meanwhile, and runs again from the end.
func (b *sessionBook) sdkStart(sid string) {
	b.mu.Lock()
	if l := b.m[sid]; l != nil {
		l.sdk++
	}
	b.mu.Unlock()
}

func (b *sessionBook) sdkEnd(sid string) {
	b.mu.Lock()
	if l := b.m[sid]; l != nil {
		l.sdk--
		l.last = time.Now()
	}
	b.mu.Unlock()
}

// lookup returns session sid when a call may take the fast path: it is
// open, its client set no log level, and the SDK's idle timer, which the
// fast path does not pause, surely has three quarters of its time left.
// Otherwise the call goes to the SDK, whose POST restarts the timer.
// keep is how long from now until the timer must be restarted should a
// call still run then (zero: no timeout).
func (b *sessionBook) lookup(sid string, now time.Time) (_ *liveSession, keep time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.m[sid]
	if l == nil || l.logs {
		return nil, 0, false
	}
	if b.timeout <= 0 {
		return l, 0, true
	}
	if l.sdk > 0 {
		return l, b.timeout / 2, true
	}
	idle := now.Sub(l.last)
	if idle >= b.timeout/4 {
		return nil, 0, false
	}
	return l, b.timeout/2 - idle, true
}

// sessionPlan is a session's tools/call that the fast path serves.
type sessionPlan struct {
	env  fastEnvelope
	p    mcp.CallToolParamsRaw
	key  flightKey
	ss   *mcp.ServerSession
	caps *mcp.ClientCapabilities
	ft   fastTool
	keep time.Duration
}

// planSessionCall reports how body, a POST of an open session of
// endpoint e, takes the session fast path, or nil when the SDK must
// serve it (route).
func (s *Server) planSessionCall(r *http.Request, e *endpoint, body []byte) *sessionPlan {
	if e.book == nil {
		return nil
	}
	h := r.Header
	if !sdkTakesPOST(r) {
		return nil
	}
	env, p, _, ok := readCall(body, &s.metas)
	if !ok {
		return nil
	}
	if _, ok := p.Meta["progressToken"]; ok {
		return nil
	}
	if _, ok := p.Meta[mcp.MetaKeyProtocolVersion]; ok {
		return nil
	}
	rid, ok := parseID(env.ID)
	if !ok {
		return nil
	}
	e.mu.Lock()
	ft, ok := e.fast[p.Name]
	e.mu.Unlock()
	if !ok {
		return nil
	}
	sid := h.Get(headerSessionID)
	l, keep, ok := e.book.lookup(sid, time.Now())
	if !ok {
		return nil
	}
	if !l.owns(r) {
		return nil // the SDK answers 403
	}
	ip := l.ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion >= statelessVersion || asksClient(ip.Capabilities) {
		return nil
	}
	// The capabilities the SDK hands the handler: those of the request's
	// _meta when it has them, else the session's.
	caps := (&mcp.CallToolRequest{Session: l.ss, Params: &p}).ClientCapabilities()
	if asksClient(caps) {
		return nil
	}
	return &sessionPlan{env: env, p: p, key: flightKey{sid, rid}, ss: l.ss, caps: caps, ft: ft, keep: keep}
}

// sdkTakesPOST reports whether the SDK's stateful handler goes past its
// checks of a session POST's headers: a known initialize-era protocol
// version or none, a JSON body, both media types accepted, no
// Last-Event-ID, a loopback Host on a loopback listener.
func sdkTakesPOST(r *http.Request) bool {
	h := r.Header
	if v := h.Get(headerProtocolVersion); v != "" && (v >= statelessVersion || !slices.Contains(sdkVersions, v)) {
		return false
	}
	if !jsonContent(h.Get("Content-Type")) || len(h.Values("Last-Event-ID")) > 0 || !sdkHostAllowed(r) {
		return false
	}
	jsonOK, streamOK := accepts(h.Values("Accept"))
	return jsonOK && streamOK
}

// owns reports whether r comes from the principal that opened the
// session, as the SDK checks it (a session bound to no one takes all).
func (l *liveSession) owns(r *http.Request) bool {
	if l.userID == "" {
		return true
	}
	tok := tokenInfo(r)
	return tok != nil && tok.UserID == l.userID
}

// sdkVersions are the protocol versions the SDK's handler accepts in the
// header.
var sdkVersions = mcp.SupportedProtocolVersions()

// asksClient reports whether a client with caps may be asked for a
// sample or for input during a call (the SDK's session methods send
// those, with timeouts and checks of their own). Roots, which nearly
// every client declares (go-sdk's client does by default), the fast
// path asks for itself on the call's stream (fastStream).
func asksClient(caps *mcp.ClientCapabilities) bool {
	return caps != nil && (caps.Sampling != nil || caps.Elicitation != nil)
}

// serveSessionFast serves a call planSessionCall planned
// (pathSessionFast).
func (s *Server) serveSessionFast(w http.ResponseWriter, r *http.Request, e *endpoint, plan *sessionPlan) {
	// The SDK's headers of a call's event stream, set before it checks
	// the id, so its answer to a duplicate has them too.
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Connection", "keep-alive")
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if !e.flights.startFast(plan.key, cancel) {
		writeDuplicate(w, plan.key.id)
		return
	}
	if plan.keep > 0 {
		stop := s.keepAlive(r, e, plan.key.session, plan.keep)
		defer stop()
	}
	st := &fastStream{w: w, e: e, key: plan.key}
	h := r.Header
	tok := tokenInfo(r)
	telemetry.Inject(r.Context(), h)
	req := &mcp.CallToolRequest{Session: plan.ss, Params: &plan.p, Extra: &mcp.RequestExtra{TokenInfo: tok, Header: h}}
	var chained mcp.Request = req
	if plan.ft.relayed != nil {
		// The caller newCaller makes for this session, with its roots
		// asked on this call's stream, and without a log function:
		// the client set no level, so ss.Log would drop every
		// message (and the client manager need not wait for the
		// upstream's).
		c := &mcpclient.Caller{Capabilities: plan.caps}
		if plan.caps != nil && plan.caps.RootsV2 != nil {
			c.ListRoots = st.listRoots
		}
		chained = &fastRequest{CallToolRequest: req, caller: c}
	}
	res, err := e.fastChain(ctx, "tools/call", chained)
	if e.flights.finish(plan.key) {
		// Cancelled by the client: the stream ends without the
		// answer, as on the SDK's path (answerFilter).
		st.close()
		return
	}
	var msg []byte
	if err == nil {
		var out []byte
		if out, err = encodeSessionResult(res); err == nil {
			msg = resultResponse(plan.env.ID, out)
		}
	}
	if err != nil {
		msg, _ = json.Marshal(wireResponse{"2.0", plan.env.ID, toWire(err)})
	}
	st.finish(msg)
}

// fastStream is the event stream answering a call on the session fast
// path: the requests the call sends the client (roots/list), then its
// answer.
type fastStream struct {
	w   http.ResponseWriter
	e   *endpoint
	key flightKey

	mu     sync.Mutex
	closed bool // the answer was written (or dropped): nothing more goes out
}

// event writes msg as one event, as the SDK's writeEvent does (one
// write, then a flush), unless the stream is closed or the client
// cancelled the call (answerFilter drops those on the SDK's path). The
// last event is not flushed: the handler returns right after it, and
// net/http then sends it with the end of the response in one write (as
// one body with a Content-Length when it is the only event), where a
// flush would cost a write of its own: 7% of agentd's CPU per gateway
// call at c=16.
func (st *fastStream) event(msg []byte, last bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return fmt.Errorf("the call's stream is closed")
	}
	st.closed = last
	if st.e.flights.cancelled(st.key) {
		return nil
	}
	ev := make([]byte, 0, len(msg)+len("event: message\ndata: \n\n"))
	ev = append(ev, "event: message\ndata: "...)
	ev = append(ev, msg...)
	ev = append(ev, "\n\n"...)
	if _, err := st.w.Write(ev); err != nil {
		return err
	}
	if !last {
		_ = http.NewResponseController(st.w).Flush()
	}
	return nil
}

// finish writes the call's answer and closes the stream.
func (st *fastStream) finish(msg []byte) { _ = st.event(msg, true) }

// close closes the stream without an answer.
func (st *fastStream) close() {
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
}

// fastQuestionPrefix starts the ids of the requests fast calls send
// clients. The SDK numbers its own; a client answers whatever id it got.
const fastQuestionPrefix = "agentd-fast-"

// listRoots asks the client for its roots on the call's stream, as
// ServerSession.ListRoots does on the SDK's path.
func (st *fastStream) listRoots(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	if p == nil {
		p = &mcp.ListRootsParams{}
	}
	b := st.e.book
	id := fastQuestionPrefix + strconv.FormatUint(b.next.Add(1), 10)
	ch := make(chan []byte, 1)
	b.mu.Lock()
	if b.answers == nil {
		b.answers = map[string]fastQuestion{}
	}
	b.answers[id] = fastQuestion{session: st.key.session, ch: ch}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.answers, id)
		b.mu.Unlock()
	}()
	msg, err := json.Marshal(struct {
		JSONRPC string               `json:"jsonrpc"`
		ID      string               `json:"id"`
		Method  string               `json:"method"`
		Params  *mcp.ListRootsParams `json:"params"`
	}{"2.0", id, "roots/list", p})
	if err != nil {
		return nil, err
	}
	if err := st.event(msg, false); err != nil {
		return nil, fmt.Errorf("ask the client for its roots: %w", err)
	}
	select {
	case ans := <-ch:
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *jsonrpc.Error  `json:"error"`
		}
		if err := json.Unmarshal(ans, &resp); err != nil {
			return nil, fmt.Errorf("the client's answer to roots/list: %w", err)
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		var res mcp.ListRootsResult
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			return nil, fmt.Errorf("the client's answer to roots/list: %w", err)
		}
		return &res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answered hands msg, a response POSTed in session sid with id, to the
// fast call that asked, and reports false when no fast call asked it.
func (b *sessionBook) answered(r *http.Request, sid string, id json.RawMessage, msg []byte) bool {
	var s string
	if !strings.HasPrefix(string(id), `"`+fastQuestionPrefix) || json.Unmarshal(id, &s) != nil || !sdkTakesPOST(r) {
		return false
	}
	b.mu.Lock()
	if l := b.m[sid]; l == nil || !l.owns(r) {
		b.mu.Unlock()
		return false // the SDK answers 404 or 403
	}
	q, ok := b.answers[s]
	if ok && q.session == sid {
		delete(b.answers, s)
	}
	b.mu.Unlock()
	if !ok || q.session != sid {
		return false
	}
	q.ch <- bytes.Clone(msg) // the body's buffer is reused once the POST ends
	return true
}

// encodeSessionResult is the JSON result an initialize-era session of
// the SDK (v1.8.0) sends for a tool handler's res, as mcp.Server.callTool
// and serverMultiRoundTripMiddleware shape it: content never null
// (unless the result asks for input), a result with both content and
// input requests refused as a server bug. Input requests in a session's
// result would be sent to the client as requests of the server's; no
// handler of the fast path makes them for a session (its caller answers
// or refuses an upstream's input requests itself: mcpclient.Caller
// without PassInput), so one is refused here rather than half served.
func encodeSessionResult(r mcp.Result) ([]byte, error) {
	res, _ := r.(*mcp.CallToolResult)
	if res == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no result"}
	}
	if res.InputRequests != nil {
		if len(res.Content) > 0 || res.StructuredContent != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
		}
		if len(res.InputRequests) == 0 {
			return nil, fmt.Errorf("the server is busy, retry later")
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: a session's call asks for input in its result"}
	}
	if res.Content == nil && !res.NeedsInput() {
		c := *res // keeps the resultType an upstream's result came with, as the SDK does
		c.Content = []mcp.Content{}
		res = &c
	}
	return res.MarshalJSON() // compact already: see encodeCallToolResult
}

// writeDuplicate answers a request whose id is in flight in its session
// already, as the SDK's stateful handler does.
func writeDuplicate(w http.ResponseWriter, id jsonrpc.ID) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Connection", "keep-alive")
	raw, _ := json.Marshal(id.Raw())
	b, _ := json.Marshal(wireResponse{"2.0", raw, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %v", id.Raw())}})
	writeJSON(w, http.StatusBadRequest, b)
}

// keepAlive restarts the SDK's idle timer of session sid after first and
// then every half timeout while a fast call of it runs, as the SDK's own
// POST would by pausing it: a notification the SDK takes and ignores (a
// cancellation of a request id no client uses) goes through its handler.
// A session the SDK no longer knows is forgotten. The returned func
// stops it.
func (s *Server) keepAlive(r *http.Request, e *endpoint, sid string, first time.Duration) (stop func()) {
	ctx := context.WithoutCancel(r.Context())
	hdr := http.Header{}
	for _, k := range []string{headerSessionID, headerProtocolVersion, "Authorization"} {
		if v := r.Header.Get(k); v != "" {
			hdr.Set(k, v)
		}
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Accept", "application/json, text/event-stream")
	host, target := r.Host, r.URL.String()
	var mu sync.Mutex // guards t and done
	done := false
	var t *time.Timer
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(first, func() {
		const msg = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"agentd-keepalive","reason":"agentd keeps the session alive while a call runs"}}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(msg))
		if err != nil {
			return
		}
		req.Header = hdr.Clone()
		req.Host = host
		rec := &statusRecorder{}
		e.book.sdkStart(sid)
		serveSDK(rec, req, e, e.stateful, []byte(msg))
		e.book.sdkEnd(sid)
		if rec.status == http.StatusNotFound {
			e.book.forget(sid)
			return
		}
		mu.Lock()
		if !done {
			t.Reset(e.book.timeout / 2)
		}
		mu.Unlock()
	})
	return func() {
		mu.Lock()
		done = true
		t.Stop()
		mu.Unlock()
	}
}

// statusRecorder is a ResponseWriter that keeps only the status.
type statusRecorder struct {
	discard
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return len(b), nil
}
