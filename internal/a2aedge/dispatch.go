// Dispatch: the two decisions every A2A request to an agent goes through.
// route picks the binding that decodes an HTTP request (JSON-RPC 1.0 or
// 0.3, the seed's legacy methods, HTTP+JSON 1.0 or 0.3); every binding,
// and the daemon's own callers (the /api/a2a routes, the MCP bridge,
// StartTask), then hand the decoded request to the dispatcher, whose
// decide picks where it is served: refused, relayed to the replica that
// runs its task (replicas.go), answered by the blocking fast path
// (fastpath.go), or served by a2a-go's handler over agentd's executor
// (executor.go). docs/architecture.md draws both.

package a2aedge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/jsonrpcwire"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
)

// agentRPC is an agent's JSON-RPC endpoint.
func (s *Server) agentRPC(w http.ResponseWriter, r *http.Request) {
	m, err := s.exposed(r.Context(), r.PathValue("name"))
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	s.serveAgent(w, r, m.Name, "/")
}

// defaultRPC is the seed's endpoint: JSON-RPC to the default agent.
func (s *Server) defaultRPC(w http.ResponseWriter, r *http.Request) {
	m, err := s.defaultAgent(r.Context())
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	s.serveAgent(w, r, m.Name, "/")
}

// agentREST serves what lies below an agent's endpoint: its card, and
// its HTTP+JSON binding, 1.0 paths ("/message:send") and 0.3 paths
// ("/v1/message:send").
func (s *Server) agentREST(w http.ResponseWriter, r *http.Request) {
	m, err := s.exposed(r.Context(), r.PathValue("name"))
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	rest := "/" + r.PathValue("rest")
	if rest == "/.well-known/agent-card.json" || rest == "/.well-known/agent.json" {
		if r.Method != http.MethodGet {
			httpapi.WriteError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET for an Agent Card")
			return
		}
		s.writeCard(w, r, m)
		return
	}
	s.serveAgent(w, r, m.Name, rest)
}

// binding is the decoder of a request to an agent's endpoint.
type binding int

const (
	bindRPC    binding = iota // A2A 1.0 JSON-RPC: a2a-go's
	bindRPC03                 // A2A 0.3 JSON-RPC method names: a2a-go's a2av0
	bindLegacy                // the seed's tasks/send and tasks/sendSubscribe: legacy.go
	bindREST                  // A2A 1.0 HTTP+JSON: a2a-go's
	bindREST03                // A2A 0.3 HTTP+JSON, under /v1: a2a-go's a2av0
)

// v03Methods are the A2A 0.3 JSON-RPC method names.
var v03Methods = map[string]bool{
	"message/send": true, "message/stream": true, "tasks/get": true, "tasks/cancel": true,
	"tasks/resubscribe": true, "tasks/pushNotificationConfig/get": true, "tasks/pushNotificationConfig/set": true,
	"tasks/pushNotificationConfig/list": true, "tasks/pushNotificationConfig/delete": true,
	"agent/getAuthenticatedExtendedCard": true,
}

// route picks a request's binding: a JSON-RPC request (rpc: a POST to
// the endpoint itself) by its method, since 1.0 names ("SendMessage") and
// 0.3 names ("message/send") differ and one endpoint serves both; an
// HTTP+JSON request by its path below the endpoint (rest).
func route(rpc bool, method, rest string) binding {
	switch {
	case rpc && v03Methods[method]:
		return bindRPC03
	case rpc && (method == "tasks/send" || method == "tasks/sendSubscribe"):
		return bindLegacy
	case rpc:
		return bindRPC
	case strings.HasPrefix(rest, a2av0.RESTPathPrefix+"/"):
		return bindREST03
	default:
		return bindREST
	}
}

// serveAgent serves a request to agent name's endpoint, rest being its
// path below the endpoint ("/" for the endpoint itself): admission, then
// the binding route picks.
func (s *Server) serveAgent(w http.ResponseWriter, r *http.Request, name, rest string) {
	if !s.mayRun(w, r, name) {
		return
	}
	rpc := rest == "/" && r.Method == http.MethodPost
	var body []byte
	var method string
	if rpc {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			writeErr(w, s.log, err)
			return
		}
		// Only the method picks the binding: a scan of the top level
		// instead of a decode of the whole body, which the binding
		// decodes again (4 µs and 9 allocations of a send, against 0.7 µs
		// and 2). A malformed body is the binding's to report.
		method = jsonrpcwire.Scan(body).Method
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	r = s.prepare(w, r, name)
	if rpc && streamingMethod(method) || !rpc && streamingPath(rest) {
		defer s.streams.opened(r.Context(), name)()
	}
	switch route(rpc, method, rest) {
	case bindRPC:
		s.rpc.ServeHTTP(w, r)
	case bindRPC03:
		s.rpc03.ServeHTTP(w, r)
	case bindLegacy:
		s.legacyRPC(w, r, body)
	case bindREST:
		s.rest.ServeHTTP(w, below(r, rest))
	case bindREST03:
		s.rest03.ServeHTTP(w, below(r, rest))
	}
}

// below is r addressed to path rest, as a2a-go's HTTP+JSON handlers
// expect their paths from the root.
func below(r *http.Request, rest string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.Path, r2.URL.RawPath = rest, ""
	return r2
}

// dispatcher is the a2asrv.RequestHandler the bindings decode into, in
// front of a2a-go's own (RequestHandler): its methods ask decide where a
// request goes. The methods it does not define are a2a-go's: they touch
// tasks only through the TaskStore, which scopes every read to the
// request's agent and principal.
type dispatcher struct {
	a2asrv.RequestHandler
	s *Server
}

// path is where decide sends a request.
type path int

const (
	pathSDK     path = iota // a2a-go's handler over agentd's executor (executor.go)
	pathRefused             // an admission check failed: its error is the answer
	pathRelay               // the task runs on another replica: relayed there (replicas.go)
	pathFast                // a blocking send that starts a task: fastpath.go
)

// decision is decide's answer.
type decision struct {
	path path
	err  error // pathRefused's answer
	// owner is the replica running the task, agent the task's agent
	// (pathRelay).
	owner, agent string
}

// decide picks the path of a request about task (empty for a message
// that starts one). send is the request of a message, nil for a cancel
// or a subscription; blocking tells SendMessage from a stream. The
// admission checks come first, so that nothing of a task or conversation
// another principal owns is reached: not its run's question, its stream,
// its cancellation, nor the replica that runs it.
func (s *Server) decide(ctx context.Context, task a2a.TaskID, send *a2a.SendMessageRequest, blocking bool) decision {
	if send != nil {
		if err := s.mayUseContext(ctx, send); err != nil {
			return decision{path: pathRefused, err: err}
		}
		if err := s.refuseNew(send); err != nil {
			return decision{path: pathRefused, err: err}
		}
	}
	if task != "" {
		if err := s.mayUseTask(ctx, task); err != nil {
			return decision{path: pathRefused, err: err}
		}
		if owner, agent, ok := s.remoteOwner(ctx, task); ok {
			return decision{path: pathRelay, owner: owner, agent: agent}
		}
	}
	if blocking && s.fastEligible(ctx, send) {
		return decision{path: pathFast}
	}
	return decision{path: pathSDK}
}

// messageTask is the task a message continues, "" for a new one.
func messageTask(req *a2a.SendMessageRequest) a2a.TaskID {
	if req == nil || req.Message == nil {
		return ""
	}
	return req.Message.TaskID
}

// SendMessage implements a2asrv.RequestHandler.
func (h dispatcher) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	d := h.s.decide(ctx, messageTask(req), req, true)
	switch d.path {
	case pathRefused:
		return nil, d.err
	case pathFast:
		return h.sendFast(ctx, req)
	case pathRelay:
		if res, handled, err := h.s.sendRemote(ctx, req, d.owner, d.agent); handled {
			return res, err
		}
	}
	return h.RequestHandler.SendMessage(ctx, req)
}

// SendStreamingMessage implements a2asrv.RequestHandler.
func (h dispatcher) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	d := h.s.decide(ctx, messageTask(req), req, false)
	switch d.path {
	case pathRefused:
		return refusedStream(d.err)
	case pathRelay:
		return h.streamRemote(ctx, req, d.owner, d.agent)
	}
	return h.RequestHandler.SendStreamingMessage(ctx, req)
}

// CancelTask implements a2asrv.RequestHandler.
func (h dispatcher) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	var task a2a.TaskID
	if req != nil {
		task = req.ID
	}
	d := h.s.decide(ctx, task, nil, false)
	switch d.path {
	case pathRefused:
		return nil, d.err
	case pathRelay:
		if t, handled, err := h.s.cancelRemote(ctx, req); handled {
			return t, err
		}
	}
	return h.cancelViaSDK(ctx, req)
}

// SubscribeToTask implements a2asrv.RequestHandler.
func (h dispatcher) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	var task a2a.TaskID
	if req != nil {
		task = req.ID
	}
	d := h.s.decide(ctx, task, nil, false)
	switch d.path {
	case pathRefused:
		return refusedStream(d.err)
	case pathRelay:
		return h.subscribeRemote(ctx, req, d.owner, d.agent)
	}
	return h.RequestHandler.SubscribeToTask(ctx, req)
}

// mayUseTask refuses a request whose principal may not act on task id
// (another principal's task, unless the caller is an admin), before
// anything reaches the task: its run's pending question (an approval),
// its stream, its cancellation, or another replica that runs it. The
// refusal is the store's: TaskNotFound, as for a task that does not exist.
// Requests without a principal, or an admin's, skip the lookup.
func (s *Server) mayUseTask(ctx context.Context, id a2a.TaskID) error {
	if p := principal.FromContext(ctx); p == nil || p.Admin {
		return nil
	}
	_, _, _, err := s.opts.Tasks.get(ctx, id)
	return err
}

// mayUseContext refuses a message whose contextId names a conversation
// (a session) of another principal: contexts are per principal, like
// tasks. A contextId no session has yet is the client's to choose.
func (s *Server) mayUseContext(ctx context.Context, req *a2a.SendMessageRequest) error {
	p := principal.FromContext(ctx)
	if p == nil || p.Admin || req == nil || req.Message == nil || req.Message.ContextID == "" {
		return nil
	}
	sess, err := s.opts.Sessions.GetSession(ctx, req.Message.ContextID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("load the conversation of contextId %q: %w", req.Message.ContextID, err)
	case !p.MaySee(sess.Principal):
		return fmt.Errorf("%w: contextId %q is not a conversation principal %q may continue; omit contextId to start a new one", a2a.ErrUnauthorized, req.Message.ContextID, p.Name)
	}
	return nil
}

// refuseNew refuses a message that would start a task while the daemon
// drains (agent.Kernel.Drain): the client hears at once that this
// replica is going, and retries elsewhere, rather than getting a task
// that fails. A message on an existing task (the answer an
// input-required task waits for) continues work under way: taken.
func (s *Server) refuseNew(req *a2a.SendMessageRequest) error {
	if !s.opts.Kernel.Draining() || (req != nil && req.Message != nil && req.Message.TaskID != "") {
		return nil
	}
	return fmt.Errorf("new task: %w", agent.ErrShuttingDown)
}

// refusedStream is a stream that fails at once with err.
func refusedStream(err error) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, err) }
}
