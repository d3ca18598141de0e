package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/agentd/agentd/internal/jsonrpcwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Replicas lets any replica serve the MCP sessions of every other one,
// for a daemon that shares its store with other replicas behind a load
// balancer without sticky routing.
//
// An initialize-based session (2025-11-25 and older) is state a client
// expects the server to keep between requests; the SDK keeps it in the
// memory of the process that saw the initialize, and a request reaching
// another process is answered "session not found" (the failure every
// gateway that scaled out met). Here the session id itself carries that
// state, sealed (see seal.go), so every replica holding the keys can
// rebuild the session from the id alone: a replica that gets a request
// for a session it does not hold restores it and serves it. The only
// shared record is of sessions a client ended (DELETE), so that their
// ids do not bring them back; the replicas hear of an end at once and
// close their copies. A notifications/cancelled that reaches another
// replica than the one running the request is relayed to it, and so is a
// client's answer to a question a call asked it (elicitation).
type Replicas struct {
	// Keys seal session ids: the first seals, every one opens. Each is a
	// secret of at least 32 bytes, the same on every replica.
	Keys [][]byte
	// Cluster carries ended sessions and cancellations between replicas.
	Cluster SessionCluster
	// MaxAge is how long a session id stays valid after its initialize;
	// default 30 days.
	MaxAge time.Duration
}

// SessionCluster is what the MCP edge needs of the other replicas.
type SessionCluster interface {
	Publish(ctx context.Context, topic, body string) error
	Subscribe(topic string, f func(from string, body []byte)) (cancel func())
	OnResync(f func()) (cancel func())
	// EndSession records that the session of idHash was ended, until
	// expires (after which its id is refused anyway); SessionEnded says
	// whether it was.
	EndSession(ctx context.Context, idHash []byte, expires time.Time) error
	SessionEnded(ctx context.Context, idHash []byte) (bool, error)
}

// Topics of the MCP edge's notifications between replicas.
const (
	// topicSessionEnd: a client ended a session (body: hex idHash).
	topicSessionEnd = "mcp.session_end"
	// topicCancel: a client cancelled a request of a session (body:
	// relayedCancel).
	topicCancel = "mcp.cancel"
	// topicResponse: a client answered a request a session's server sent
	// it (body: relayedCancel, whose message is the JSON-RPC response).
	topicResponse = "mcp.response"
)

// relayedCancel is a notifications/cancelled (or, on topicResponse, a
// response) that reached another replica.
type relayedCancel struct {
	Session string          `json:"session"` // hex idHash
	Message json.RawMessage `json:"message"` // the notification as the client sent it
}

// DefaultSessionMaxAge bounds a sealed session id's life.
const DefaultSessionMaxAge = 30 * 24 * time.Hour

// sessionTable serves an endpoint's initialize-based sessions when
// sessions are replicated: it replaces the SDK's stateful handler, whose
// table of sessions is private to the process. Each session it holds is
// an SDK session on the endpoint's server, over the SDK's own transport,
// whose id is the sealed one.
type sessionTable struct {
	s      *Server
	e      *endpoint
	seal   *sealer
	c      SessionCluster
	idle   time.Duration
	unsubs []func()
	// prefix makes the ids of this replica's requests to clients its
	// own (see answerConn).
	prefix string

	mu       sync.Mutex
	sessions map[string]*heldSession // by session id
	byHash   map[string]string       // hex idHash → session id
}

// heldSession is one session this replica holds, started here or
// restored from its id.
type heldSession struct {
	id        string
	transport *mcp.StreamableServerTransport
	session   *mcp.ServerSession
	user      string
	// restored: this replica rebuilt the session another one started,
	// with the state of an initialized session (see absorbInitialized).
	restored bool

	mu    sync.Mutex
	refs  int // requests in progress
	timer *time.Timer
	conn  *answerConn // set once connected
}

// newSessionTable returns e's table of replicated sessions.
func newSessionTable(s *Server, e *endpoint, r *Replicas) (*sessionTable, error) {
	maxAge := r.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultSessionMaxAge
	}
	sl, err := newSealer(r.Keys, maxAge)
	if err != nil {
		return nil, err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	t := &sessionTable{s: s, e: e, seal: sl, c: r.Cluster, idle: s.opts.SessionTimeout, prefix: hex.EncodeToString(rnd[:]),
		sessions: map[string]*heldSession{}, byHash: map[string]string{}}
	e.srv.AddReceivingMiddleware(t.absorbInitialized)
	if r.Cluster != nil {
		t.unsubs = append(t.unsubs,
			r.Cluster.Subscribe(topicSessionEnd, func(_ string, body []byte) { t.closeHash(string(body)) }),
			r.Cluster.Subscribe(topicCancel, func(_ string, body []byte) { t.relayedCancel(body) }),
			r.Cluster.Subscribe(topicResponse, func(_ string, body []byte) { t.relayedResponse(body) }),
			r.Cluster.OnResync(func() { go t.recheckEnded() }),
		)
	}
	return t, nil
}

// absorbInitialized answers a restored session's notifications/initialized
// itself. The client sends it right after initialize, as a request of its
// own that the balancer may give to another replica than initialize's;
// that replica restores the session already initialized (it cannot know
// whether the notification came), so the SDK would take the client's
// one and only notification for a duplicate and log an ERROR for it, on
// most sessions. It is expected there, and a notification has no answer
// to give: it is dropped, at debug level.
func (t *sessionTable) absorbInitialized(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/initialized" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && t.restored(ss.ID()) {
				t.s.log.DebugContext(ctx, "initialized notification of a session restored on this replica", "session_hash", hex.EncodeToString(idHash(ss.ID()))[:12])
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// restored reports whether the session id names was restored here.
func (t *sessionTable) restored(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.sessions[id]
	return h != nil && h.restored
}

// close stops following the other replicas; the sessions themselves are
// closed with the server's.
func (t *sessionTable) close() {
	for _, u := range t.unsubs {
		u()
	}
}

// ServeHTTP serves one request of a session, or the initialize that
// opens one, with the checks the SDK's stateful handler makes.
func (t *sessionTable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// DNS rebinding: a loopback listener answers only loopback names.
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		if host, _, err := net.SplitHostPort(la.String()); err == nil && isLoopbackHost(host) && !isLoopbackHost(hostOnly(r.Host)) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
	}
	if v := r.Header.Get(headerProtocolVersion); v != "" && v < statelessVersion && !slices.Contains(mcp.SupportedProtocolVersions(), v) {
		http.Error(w, "Bad Request: Unsupported protocol version (supported versions: "+strings.Join(mcp.SupportedProtocolVersions(), ",")+")", http.StatusBadRequest)
		return
	}
	sid := r.Header.Get(headerSessionID)
	switch r.Method {
	case http.MethodPost:
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/json") {
			http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
			return
		}
		if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
			return
		}
		if sid == "" {
			t.initialize(w, r)
			return
		}
	case http.MethodGet:
		if _, streamOK := accepts(r.Header.Values("Accept")); !streamOK {
			http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
			return
		}
		if sid == "" {
			http.Error(w, "Bad Request: GET requires an Mcp-Session-Id header", http.StatusBadRequest)
			return
		}
	case http.MethodDelete:
		if sid == "" {
			http.Error(w, "Bad Request: DELETE requires an Mcp-Session-Id header", http.StatusBadRequest)
			return
		}
		t.end(w, r, sid)
		return
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	h, status := t.hold(r, sid)
	if h == nil {
		http.Error(w, http.StatusText(status), status)
		return
	}
	h.start()
	defer h.done(t.idle)
	h.transport.ServeHTTP(w, r)
}

// initialize opens a session: its id is sealed from the initialize
// request it answers, before the SDK sees it, so the very first answer
// carries an id any replica can serve.
func (t *sessionTable) initialize(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "cannot read the request body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	params := initializeParams(body)
	if params == nil {
		// Not an initialize: a session-less request of an old client,
		// served by a throwaway session as the SDK would.
		t.e.bound[t.e.stateless].ServeHTTP(w, r)
		return
	}
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	claims := sessionClaims{ID: hex.EncodeToString(rnd[:]), IssuedAt: time.Now().Unix(), User: userOf(r), Init: params}
	id, err := t.seal.seal(t.e.name, claims)
	if err != nil {
		t.s.log.Error("sealing an MCP session id failed", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	h, err := t.connect(r.Context(), id, claims, nil)
	if err != nil {
		t.s.log.Error("opening an MCP session failed", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	h.start()
	h.transport.ServeHTTP(w, r)
	h.done(t.idle)
	if h.session.InitializeParams() == nil {
		_ = h.session.Close() // the initialize failed: no session
	}
}

// hold returns the session id names, restoring it if this replica does
// not hold it yet, or nil and the status to answer.
func (t *sessionTable) hold(r *http.Request, id string) (*heldSession, int) {
	t.mu.Lock()
	h := t.sessions[id]
	t.mu.Unlock()
	if h == nil {
		claims, err := t.seal.open(t.e.name, id, time.Now())
		if err != nil {
			return nil, http.StatusNotFound
		}
		if claims.User != "" && userOf(r) != claims.User {
			return nil, http.StatusForbidden // another principal's session
		}
		if t.c != nil {
			ended, err := t.c.SessionEnded(r.Context(), idHash(id))
			if err != nil {
				t.s.log.Warn("checking whether an MCP session was ended failed", "err", err)
				return nil, http.StatusServiceUnavailable
			}
			if ended {
				return nil, http.StatusNotFound
			}
		}
		state := &mcp.ServerSessionState{
			InitializeParams:          claims.Init,
			InitializedParams:         &mcp.InitializedParams{},
			NegotiatedProtocolVersion: negotiate(claims.Init.ProtocolVersion),
			LogLevel:                  "info",
		}
		h, err = t.connect(r.Context(), id, claims, state)
		if err != nil {
			t.s.log.Error("restoring an MCP session failed", "err", err)
			return nil, http.StatusInternalServerError
		}
		t.mu.Lock()
		h.restored = true
		t.mu.Unlock()
		t.s.log.Debug("restored an MCP session another replica started", "client", clientName(claims.Init))
	}
	if h.user != "" && userOf(r) != h.user {
		return nil, http.StatusForbidden
	}
	return h, 0
}

// connect starts an SDK session of id on the endpoint's server (with
// state, when restoring one) and holds it until it closes. Two requests
// restoring the same session at once get the same one.
func (t *sessionTable) connect(ctx context.Context, id string, claims sessionClaims, state *mcp.ServerSessionState) (*heldSession, error) {
	t.mu.Lock()
	if h := t.sessions[id]; h != nil {
		t.mu.Unlock()
		return h, nil
	}
	h := &heldSession{id: id, transport: &mcp.StreamableServerTransport{SessionID: id}, user: claims.User}
	t.sessions[id] = h
	hash := hex.EncodeToString(idHash(id))
	t.byHash[hash] = id
	t.mu.Unlock()
	var opts *mcp.ServerSessionOptions
	if state != nil {
		opts = &mcp.ServerSessionOptions{State: state}
	}
	ss, err := t.e.srv.Connect(context.WithoutCancel(ctx), answerTransport{inner: h.transport, h: h, prefix: t.prefix}, opts)
	if err != nil {
		t.forget(id)
		return nil, err
	}
	h.session = ss
	go func() {
		_ = ss.Wait()
		h.stopTimer()
		t.forget(id)
	}()
	return h, nil
}

// forget drops id from the table (its session closed).
func (t *sessionTable) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sessions, id)
	delete(t.byHash, hex.EncodeToString(idHash(id)))
}

// end is a client's DELETE: the session closes here, the end is recorded
// so that no replica restores it, and the replicas holding a copy close
// it.
func (t *sessionTable) end(w http.ResponseWriter, r *http.Request, id string) {
	claims, err := t.seal.open(t.e.name, id, time.Now())
	if err != nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if claims.User != "" && userOf(r) != claims.User {
		http.Error(w, "session user mismatch", http.StatusForbidden)
		return
	}
	hash := idHash(id)
	if t.c != nil {
		expires := time.Unix(claims.IssuedAt, 0).Add(t.seal.maxAge)
		if err := t.c.EndSession(r.Context(), hash, expires); err != nil {
			t.s.log.Warn("recording the end of an MCP session failed", "err", err)
			http.Error(w, "could not end the session; try again", http.StatusServiceUnavailable)
			return
		}
		if err := t.c.Publish(r.Context(), topicSessionEnd, hex.EncodeToString(hash)); err != nil {
			t.s.log.Warn("telling the replicas an MCP session ended failed; their copies close when idle", "err", err)
		}
	}
	t.closeHash(hex.EncodeToString(hash))
	w.WriteHeader(http.StatusNoContent)
}

// closeHash closes this replica's copy of the session of hash, if any.
func (t *sessionTable) closeHash(hash string) {
	t.mu.Lock()
	h := t.sessions[t.byHash[hash]]
	t.mu.Unlock()
	if h != nil && h.session != nil {
		t.s.calls.cancel(h.session)
		_ = h.session.Close()
	}
}

// recheckEnded closes the copies of sessions ended while this replica
// was not hearing notifications.
func (t *sessionTable) recheckEnded() {
	t.mu.Lock()
	ids := make([]string, 0, len(t.sessions))
	for id := range t.sessions {
		ids = append(ids, id)
	}
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range ids {
		if ended, err := t.c.SessionEnded(ctx, idHash(id)); err == nil && ended {
			t.closeHash(hex.EncodeToString(idHash(id)))
		}
	}
}

// cancelled tells the other replicas of a client's notifications/cancelled
// for session id: the request may be running on one of them.
func (t *sessionTable) cancelled(ctx context.Context, id string, msg []byte) {
	if t.c == nil {
		return
	}
	body, err := json.Marshal(relayedCancel{Session: hex.EncodeToString(idHash(id)), Message: msg})
	if err == nil {
		err = t.c.Publish(ctx, topicCancel, string(body))
	}
	if err != nil {
		t.s.log.Warn("relaying a cancellation to the other replicas failed", "err", err)
	}
}

// relayedCancel hands a cancellation another replica received to the
// request here it cancels, if that request runs here.
func (t *sessionTable) relayedCancel(body []byte) {
	var rc relayedCancel
	if json.Unmarshal(body, &rc) != nil {
		return
	}
	t.mu.Lock()
	id := t.byHash[rc.Session]
	h := t.sessions[id]
	t.mu.Unlock()
	if h == nil {
		return
	}
	var n struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(rc.Message, &n) != nil {
		return
	}
	rid, ok := cancelledRequest(n.Params)
	if !ok || !t.e.flights.running(flightKey{id, rid}) {
		return
	}
	t.e.flights.cancel(flightKey{id, rid})
	go t.inject(h, rc.Message)
}

// answered tells the other replicas of a client's JSON-RPC response in
// session id: the request it answers (elicitation/create,
// sampling/createMessage, roots/list) was sent by a call that may run on
// another replica, whose copy of the session alone waits for it. Every
// replica whose copy asked it (answerConn.waiting) hands the response
// to it. The message is sent whole whatever its size: the cluster carries
// bodies too large for a notification (the PostgreSQL one stores them
// and notifies their id).
func (t *sessionTable) answered(ctx context.Context, id string, msg []byte) {
	if t.c == nil {
		return
	}
	t.mu.Lock()
	h := t.sessions[id]
	t.mu.Unlock()
	var wire string
	if h != nil && json.Unmarshal(jsonrpcwire.Scan(msg).ID, &wire) == nil && h.asked(wire) {
		return // asked here: the answer is delivered here
	}
	body, err := json.Marshal(relayedCancel{Session: hex.EncodeToString(idHash(id)), Message: msg})
	if err == nil {
		err = t.c.Publish(ctx, topicResponse, string(body))
	}
	if err != nil {
		t.s.log.Warn("relaying a client's answer to the other replicas failed; a call waiting for it on another replica waits until cancelled", "err", err)
	}
}

// relayedResponse hands a response another replica received to this
// replica's copy of its session, if that copy asked the request it
// answers.
func (t *sessionTable) relayedResponse(body []byte) {
	var rc relayedCancel
	if json.Unmarshal(body, &rc) != nil {
		return
	}
	t.mu.Lock()
	h := t.sessions[t.byHash[rc.Session]]
	t.mu.Unlock()
	if h == nil {
		return
	}
	var wire string
	if json.Unmarshal(jsonrpcwire.Scan(rc.Message).ID, &wire) != nil || !h.asked(wire) {
		return
	}
	go t.inject(h, rc.Message)
}

// asked reports whether this copy of the session waits for the answer
// to its request of wire id.
func (h *heldSession) asked(wire string) bool {
	h.mu.Lock()
	c := h.conn
	h.mu.Unlock()
	return c != nil && c.waiting(wire)
}

// injectID hands msg to session id if this replica holds it.
func (t *sessionTable) injectID(id string, msg []byte) {
	t.mu.Lock()
	h := t.sessions[id]
	t.mu.Unlock()
	if h != nil {
		t.inject(h, msg)
	}
}

// inject hands msg (a notification or a response) to the session as if its client had
// posted it here.
func (t *sessionTable) inject(h *heldSession, msg []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://agentd"+t.s.opts.Config.Path, bytes.NewReader(msg))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerSessionID, h.id)
	h.transport.ServeHTTP(discard{}, req)
}

// start and done count a session's requests in progress: it closes
// after idle without any (here only: the session stays valid, and
// another request restores it).
func (h *heldSession) start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refs++
	if h.timer != nil {
		h.timer.Stop()
	}
}

func (h *heldSession) done(idle time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refs--
	if h.refs > 0 || idle <= 0 || h.session == nil {
		return
	}
	if h.timer == nil {
		ss := h.session
		h.timer = time.AfterFunc(idle, func() { _ = ss.Close() })
		return
	}
	h.timer.Reset(idle)
}

func (h *heldSession) stopTimer() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timer != nil {
		h.timer.Stop()
	}
}

// initializeParams returns the params of the initialize request in body
// (alone or in a batch), nil if there is none.
func initializeParams(body []byte) *mcp.InitializeParams {
	type msg struct {
		Method string                `json:"method"`
		Params *mcp.InitializeParams `json:"params"`
	}
	t := bytes.TrimSpace(body)
	var msgs []msg
	if len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(t, &msgs) != nil {
			return nil
		}
	} else {
		var m msg
		if json.Unmarshal(t, &m) != nil {
			return nil
		}
		msgs = []msg{m}
	}
	for _, m := range msgs {
		if m.Method == "initialize" && m.Params != nil {
			return m.Params
		}
	}
	return nil
}

// negotiate is the protocol version the server agreed in an initialize
// that asked for v: the SDK's rule (v if supported, else the newest
// initialize-era version).
func negotiate(v string) string {
	supported := mcp.SupportedProtocolVersions()
	if slices.Contains(supported, v) && v < statelessVersion {
		return v
	}
	for _, s := range supported {
		if s < statelessVersion {
			return s
		}
	}
	return "2025-11-25"
}

// userOf is the principal the request's token info names ("" for none),
// as bindPrincipal put it there.
func userOf(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

func clientName(p *mcp.InitializeParams) string {
	if p == nil || p.ClientInfo == nil {
		return ""
	}
	return p.ClientInfo.Name
}

// hostOnly strips the port from a Host header.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// accepts reads Accept headers as the SDK does.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}
