// Package a2aedge is agentd's A2A edge: the server that exposes each agent
// as an A2A agent (one card and one endpoint per agent, A2A 1.0 over
// JSON-RPC and HTTP+JSON, the 0.3 method names, and the seed's legacy
// routes), the persistent task store behind it, push-notification
// delivery, and the client that discovers remote A2A agents and offers
// them to local agents as tools.
//
// The server is a thin translation layer: a task is one kernel run
// (agent.Kernel.Run) over the session named by the task's contextId, and
// the run's events become A2A status and artifact updates. Protocol
// plumbing (method dispatch, event queues, streaming, optimistic
// concurrency) is github.com/a2aproject/a2a-go/v2's; agentd supplies the
// executor, the task store and the push sender.
//
// It speaks A2A only: the tasks of agents that run no model (mcp_proxy)
// are run by a ModelFree the composition root supplies, and package
// bridge serves A2A agents as MCP tools through SendStreamingMessage,
// GetTask and CancelTask.
package a2aedge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	a2alog "github.com/a2aproject/a2a-go/v2/log"
	"github.com/agentd/agentd/internal/principal"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/store"
)

// SessionLookup finds a session; store.SessionStore satisfies it.
type SessionLookup interface {
	GetSession(ctx context.Context, id string) (store.Session, error)
}

// Options are the server's dependencies and settings.
type Options struct {
	Kernel   *agent.Kernel
	Tasks    *TaskStore
	Sessions SessionLookup
	// ListenPath is the base of the A2A routes; default "/a2a".
	ListenPath string
	// PublicURL is the externally visible base URL for Agent Cards; empty
	// means the scheme and Host of each request (forwarding headers are
	// not trusted: set PublicURL behind a proxy).
	PublicURL string
	// DefaultAgent serves /.well-known/agent-card.json and the legacy
	// routes; empty means the first agent exposed over A2A.
	DefaultAgent string
	// BearerAuth says the daemon requires "Authorization: Bearer": cards
	// then declare a bearer security scheme.
	BearerAuth bool
	// OAuth, when set, returns the authorization server that issues the
	// access tokens the daemon accepts: cards then declare an oauth2
	// security scheme too.
	OAuth func(ctx context.Context) (OAuthServer, error)
	// Version is the daemon's version, shown in cards.
	Version string
	// Push delivers push notifications; nil disables them (and cards
	// then say pushNotifications: false).
	Push *Pusher
	// Client serves the /api/a2a routes; nil leaves them out.
	Client *Client
	// ModelFree runs the tasks of agents of kind manifest.KindMCPProxy
	// (package bridge); nil fails them.
	ModelFree ModelFree
	// FastWindow is how long a blocking send waits for its run before
	// a2a-go takes the task over; 0 means one second.
	FastWindow time.Duration
	// Cluster links the server to the other replicas sharing its store,
	// so that a task started on one can be subscribed to, answered and
	// cancelled through any; nil when the daemon is alone.
	Cluster Cluster
	Logger  *slog.Logger
	// Meter counts open streams (agentd.a2a.streams.active); nil counts
	// nothing. Task states are counted by the TaskStore.
	Meter metric.MeterProvider
}

// Server serves A2A. Close stops its runs.
type Server struct {
	opts Options
	lp   string
	log  *slog.Logger

	handler a2asrv.RequestHandler
	// a2a is a2a-go's own handler, under handler's fast path.
	a2a    a2asrv.RequestHandler
	rpc    http.Handler // A2A 1.0 JSON-RPC
	rpc03  http.Handler // A2A 0.3 JSON-RPC
	rest   http.Handler // A2A 1.0 HTTP+JSON
	rest03 http.Handler // A2A 0.3 HTTP+JSON, under /v1

	// fastWindow is how long a blocking send waits for its run before
	// a2a-go takes the task over (see fastpath.go).
	fastWindow time.Duration

	// owned is the work that outlives its request: Close cancels it and
	// waits for it.
	owned owner
	mu    sync.Mutex
	runs  map[a2a.TaskID]*run
	// handoffs are the runs the blocking fast path offers to a2a-go's
	// execution of the message that started them (dispatcher.handOff).
	handoffs map[handoffKey]*run
	streams  *streamMetrics // nil when metrics are off

	// cluster is the server's side of Options.Cluster; nil when alone.
	cluster *replicas
	// cancelWait bounds how long a cancel through this replica waits for
	// the replica running the task to stop it.
	cancelWait time.Duration
}

// New returns a server. Runs it starts are cancelled by Close.
func New(opts Options) *Server {
	if opts.ListenPath == "" {
		opts.ListenPath = "/a2a"
	}
	log := orDiscard(opts.Logger)
	s := &Server{opts: opts, lp: strings.TrimRight(opts.ListenPath, "/"), log: log,
		runs: map[a2a.TaskID]*run{}, handoffs: map[handoffKey]*run{}, fastWindow: cmp.Or(opts.FastWindow, time.Second), streams: newStreamMetrics(opts.Meter), cancelWait: 30 * time.Second}
	hopts := []a2asrv.RequestHandlerOption{
		a2asrv.WithTaskStore(opts.Tasks),
		a2asrv.WithLogger(log.With("component", "a2a-sdk")),
		a2asrv.WithCapabilityChecks(s.capabilities()),
		// a2a-go's own in-memory queues run a goroutine per task.
		a2asrv.WithEventQueueManager(newEventQueues()),
	}
	if opts.Push != nil {
		hopts = append(hopts, a2asrv.WithPushNotifications(opts.Push.Configs(), opts.Push))
	}
	s.a2a = a2asrv.NewHandler(&executor{s}, hopts...)
	s.handler = dispatcher{s.a2a, s}
	// Keep-alives stop proxies from cutting long streams while an agent
	// thinks or waits on a tool.
	keep := a2asrv.WithTransportKeepAlive(15 * time.Second)
	s.rpc = a2asrv.NewJSONRPCHandler(s.handler, keep)
	s.rpc03 = a2av0.NewJSONRPCHandler(s.handler, keep)
	s.rest = a2asrv.NewRESTHandler(s.handler, keep)
	s.rest03 = a2av0.NewRESTHandler(s.handler, keep)
	if opts.Cluster != nil {
		s.joinCluster()
	}
	return s
}

func (s *Server) capabilities() *a2a.AgentCapabilities {
	return &a2a.AgentCapabilities{Streaming: true, PushNotifications: s.opts.Push != nil}
}

// FailRuns ends the work this server runs beyond its requests with cause
// (see context.Cause): the model-free runs (the MCP proxy's tasks) and
// relayed calls. Kernel runs end through agent.Kernel.FailRuns. A
// stopping daemon calls both with agent.ErrShuttingDown once its drain
// timed out, so that their tasks fail rather than show as canceled.
//
// A task waiting for input has no execution that would report its run's
// end (the next message would start one): its failure, saying cause, is
// stored here.
func (s *Server) FailRuns(cause error) {
	s.owned.fail(cause)
	s.mu.Lock()
	var waiting []a2a.TaskID
	for id, r := range s.runs {
		r.mu.Lock()
		if r.awaiting != nil {
			waiting = append(waiting, id)
		}
		r.mu.Unlock()
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, id := range waiting {
		st, err := s.opts.Tasks.Get(ctx, id)
		if err != nil {
			s.log.Warn("failing a task waiting for input", "task", id, "err", err)
			continue
		}
		t := st.Task
		now := time.Now().UTC()
		t.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Timestamp: &now,
			Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, t, a2a.NewTextPart("the agent failed while waiting for input: "+cause.Error()))}
		if _, err := s.opts.Tasks.Update(ctx, &taskstore.UpdateRequest{Task: t, PrevVersion: st.Version}); err != nil {
			s.log.Warn("failing a task waiting for input", "task", id, "err", err)
		}
	}
}

// Running is the number of tasks with a run in this process, those
// waiting for input included, or, if more, of tasks whose end is not yet
// stored: what a draining daemon waits for. A run has ended before a2a-go
// has stored the state its last event carries (another goroutine of
// a2a-go's does that); a daemon that stopped in between would leave the
// task working in the store, to be failed at the next start as one a
// crash interrupted.
func (s *Server) Running() int {
	s.mu.Lock()
	n := len(s.runs)
	s.mu.Unlock()
	if s.opts.Tasks != nil {
		n = max(n, s.opts.Tasks.Unfinished())
	}
	return n
}

// Close cancels every run and waits for them to end.
func (s *Server) Close() error {
	s.leaveCluster()
	s.owned.close()
	return nil
}

// TasksFailed sends the push notifications of tasks failed outside any
// run of this server: a dead replica's tasks, failed by this one's
// reaper, since the replica that ran them cannot. Each config is read
// from the store again first: it may have been set through any replica.
func (s *Server) TasksFailed(ctx context.Context, tasks []store.Task) {
	if s.opts.Push == nil {
		return
	}
	for _, t := range tasks {
		var task a2a.Task
		if err := json.Unmarshal(t.Data, &task); err != nil || task.ID == "" {
			continue
		}
		if err := s.opts.Push.Reload(ctx, task.ID); err != nil {
			s.log.Warn("push notification of a failed task not sent", "task", task.ID, "err", err)
			continue
		}
		if err := s.opts.Push.Notify(ctx, task.ID, &task); err != nil {
			s.log.Warn("push notification of a failed task not sent", "task", task.ID, "err", err)
		}
	}
}

// Register adds the A2A routes to mux. This is the route table.
func (s *Server) Register(mux Router) {
	lp := s.lp
	mux.HandleFunc("GET /.well-known/agent-card.json", s.defaultCard)
	mux.HandleFunc("GET /.well-known/agent.json", s.defaultCard)
	mux.HandleFunc("GET "+lp+"/agents", s.listCards)
	mux.HandleFunc("POST "+lp+"/agents/{name}", s.agentRPC)
	mux.HandleFunc(lp+"/agents/{name}/{rest...}", s.agentREST)
	// The seed's card URL was the listen path itself: JSON-RPC there
	// reaches the default agent.
	mux.HandleFunc("POST "+lp, s.defaultRPC)
	mux.HandleFunc("POST "+lp+"/tasks/send", s.legacySend)
	mux.HandleFunc("GET "+lp+"/tasks/{id}", s.legacyGet)
	mux.HandleFunc("POST "+lp+"/tasks/{id}/cancel", s.legacyCancel)
	if s.opts.Client != nil {
		s.registerAPI(mux)
	}
}

// errNotServed is the answer for an agent the A2A edge does not serve,
// whether it is missing or private (expose.a2a off). The two are answered
// word for word alike, without the name: A2A routes answer clients without
// a key, who must not learn which private agents exist.
var errNotServed = fmt.Errorf("%w: no agent of that name is served over A2A (an agent is served when it sets expose.a2a = true)", agent.ErrAgentNotFound)

// exposed returns agent name if it exists and is exposed over A2A, else
// errNotServed.
func (s *Server) exposed(ctx context.Context, name string) (manifest.Manifest, error) {
	e, err := s.opts.Kernel.Agents().Get(ctx, name)
	switch {
	case errors.Is(err, agent.ErrAgentNotFound):
		return manifest.Manifest{}, errNotServed
	case err != nil:
		return manifest.Manifest{}, err
	case !e.Manifest.Expose.A2A:
		return manifest.Manifest{}, errNotServed
	}
	return e.Manifest, nil
}

// defaultAgent resolves the agent of the well-known card and the legacy
// routes: the configured default, else the first exposed agent.
func (s *Server) defaultAgent(ctx context.Context) (manifest.Manifest, error) {
	if s.opts.DefaultAgent != "" {
		return s.exposed(ctx, s.opts.DefaultAgent)
	}
	entries, err := s.opts.Kernel.Agents().List(ctx)
	if err != nil {
		return manifest.Manifest{}, err
	}
	for _, e := range entries {
		if e.Manifest.Expose.A2A {
			return e.Manifest, nil
		}
	}
	return manifest.Manifest{}, fmt.Errorf("%w: no agent is exposed over A2A (set expose.a2a = true on one)", agent.ErrAgentNotFound)
}

func (s *Server) defaultCard(w http.ResponseWriter, r *http.Request) {
	m, err := s.defaultAgent(r.Context())
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	s.writeCard(w, r, m)
}

func (s *Server) listCards(w http.ResponseWriter, r *http.Request) {
	entries, err := s.opts.Kernel.Agents().List(r.Context())
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	// A principal is shown the agents it may run: the names of the others
	// are not its business.
	p := principal.FromContext(r.Context())
	cards := []json.RawMessage{}
	for _, e := range entries {
		if !e.Manifest.Expose.A2A || p != nil && !p.MayRunAgent(e.Manifest.Name) {
			continue
		}
		b, err := s.cardJSON(r, e.Manifest)
		if err != nil {
			writeErr(w, s.log, err)
			return
		}
		cards = append(cards, b)
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": cards, "total": len(cards)})
}

// mayRun refuses (403) a request whose principal may not run agent name:
// sending messages and reading or cancelling its tasks alike. Requests
// without a principal come from inside the daemon.
func (s *Server) mayRun(w http.ResponseWriter, r *http.Request, name string) bool {
	if err := mayRunAgent(r.Context(), name); err != nil {
		writeErr(w, s.log, err)
		return false
	}
	return true
}

// mayRunAgent is agent.ErrForbidden unless ctx's principal may run agent
// name (or ctx has none: the daemon's own call).
func mayRunAgent(ctx context.Context, name string) error {
	p := principal.FromContext(ctx)
	if p == nil || p.MayRunAgent(name) {
		return nil
	}
	return fmt.Errorf("%w: principal %q may not use agent %q", agent.ErrForbidden, p.Name, name)
}

// OAuthServer names where a client gets an access token.
type OAuthServer struct {
	MetadataURL, AuthorizationURL, TokenURL string
}

// prepare scopes the request to agent name, gives a2a-go the daemon's
// logger (it would otherwise log through the default logger, ignoring
// log_level), and lifts the server's write deadline: a blocking send or a
// stream lasts as long as the run.
func (s *Server) prepare(w http.ResponseWriter, r *http.Request, name string) *http.Request {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	return r.WithContext(a2alog.AttachLogger(withAgent(r.Context(), name), s.log))
}

// writeErr writes err in the API's stable error shape: A2A's own errors
// are decided here, the core's by httpapi.ToError, the one map of HTTP
// statuses, so both edges answer a core error alike.
func writeErr(w http.ResponseWriter, log *slog.Logger, err error) {
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
		httpapi.WriteError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, a2a.ErrInvalidParams), errors.Is(err, a2a.ErrInvalidRequest), errors.Is(err, a2a.ErrParseError), errors.Is(err, errBadRequest):
		httpapi.WriteError(w, http.StatusBadRequest, "invalid", err.Error())
	case errors.Is(err, a2a.ErrUnauthorized):
		httpapi.WriteError(w, http.StatusForbidden, "forbidden", err.Error())
	case errors.Is(err, a2a.ErrTaskNotCancelable):
		httpapi.WriteError(w, http.StatusConflict, "not_cancelable", err.Error())
	case errors.Is(err, errUpstream):
		httpapi.WriteError(w, http.StatusBadGateway, "upstream", err.Error())
	default:
		if httpapi.ToError(err).Status >= 500 {
			log.Error("a2a request failed", "err", err)
		}
		httpapi.WriteErrorOf(w, err) // with the field at fault, when one is
	}
}

// errBadRequest marks client mistakes in non-protocol routes.
var errBadRequest = errors.New("bad request")

// errUpstream marks failures of a remote A2A agent.
var errUpstream = errors.New("remote a2a agent")

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Router is where Register adds its routes: an *http.ServeMux, or the
// daemon's recording mux.
type Router interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}
