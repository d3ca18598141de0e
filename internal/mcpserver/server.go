package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentd/agentd/internal/principal"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// DefaultMaxMessageBytes caps one incoming JSON-RPC message (10 MB).
const DefaultMaxMessageBytes = 10 << 20

// SessionLister lists stored sessions for resources/list.
// store.SessionStore satisfies it.
type SessionLister interface {
	ListSessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error)
}

// Options configure a Server.
type Options struct {
	// Kernel runs agents and reads sessions; required.
	Kernel *agent.Kernel
	// Tools is the tool registry: its changes are served to clients, and it
	// backs expose_tools and gateways. Nil serves agents only.
	Tools *tool.Registry
	// Sessions lists sessions as resources; nil lists none (they can still
	// be read by URI).
	Sessions SessionLister
	// Config is the [mcp] section.
	Config config.MCPServe
	// MaxMessageBytes caps one incoming message; default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// Workspace is the directory file tools work in when called directly
	// by an MCP client (expose_tools); an agent's calls use its own.
	Workspace string
	// Upstreams gives gateways the upstream servers' resources, prompts and
	// completions; nil serves upstream tools only.
	Upstreams Upstreams
	// UpstreamName tells gateways which server a registry tool comes from
	// and the name that server gave it; nil means mcpclient.UpstreamName.
	// Tools it does not know are matched by Spec().Server and served under
	// their registry name without the "mcp_{server}_" prefix.
	UpstreamName func(t tool.Tool) (server, name string, ok bool)
	// Name and Version identify the server in initialize and
	// server/discover results; defaults "agentd" and "dev".
	Name, Version string
	// ToolSets are served on the main endpoint beside the agents (see
	// ToolSet); AddToolSet adds more later.
	ToolSets []ToolSet
	// SessionTimeout closes stateful HTTP sessions idle that long;
	// default 30 minutes.
	SessionTimeout time.Duration
	// Replicas, when set, makes initialize-based sessions work on every
	// replica sharing the daemon's store, whichever one initialized them
	// (see Replicas); nil keeps each session in this process.
	Replicas *Replicas
	// ConfigOrigin says which configuration was read (config.Config.Origin),
	// for the warning logged when a client lists tools and none are served.
	ConfigOrigin string
	Logger       *slog.Logger
	// Meter records mcp.server.operation.duration; nil records nothing.
	Meter metric.MeterProvider
	// Tracer starts a server span per MCP request, child of the trace
	// context in its _meta or its HTTP request; nil starts none.
	Tracer trace.TracerProvider
}

// Server is the MCP server edge. It builds its SDK servers once and keeps
// their tool lists in step with the agent directory and the tool registry,
// so connected clients get notifications/tools/list_changed.
type Server struct {
	// sdkOnly turns the fast paths off (fastcall.go, fastsession.go),
	// for tests that compare their answers with the SDK's.
	sdkOnly atomic.Bool

	opts     Options
	log      *slog.Logger
	main     *endpoint
	gateways map[string]*endpoint
	unwatch  []func()
	taint    taintSet
	calls    callSet
	bufs     bufferPool
	metas    metaCache // the fast paths' decoded _meta (fastcall.go)
	// eofGrace is how long answers are awaited once stdin ends.
	eofGrace time.Duration
	// noToolsLogged is set once an empty tool list has been explained
	// (explainNoTools), and cleared when tools are served again.
	noToolsLogged atomic.Bool
	obs           *observer // nil when neither metrics nor traces are on
	// tasks serves MCP tasks (tasks.go); nil until SetTasks.
	tasks atomic.Pointer[taskServer]
	// gwTasks serves the gateways' tasks (gatewaytasks.go); nil without
	// gateways.
	gwTasks *gatewayTasks

	// Re-syncing runs on a goroutine that exists only while there is work,
	// so a Server that is never closed leaks nothing; Close waits for it.
	syncMu      sync.Mutex
	dirty       bool
	syncing     bool
	closed      bool
	sets        []ToolSet
	unwatchSets []func()
	wg          sync.WaitGroup
	// runMu serializes sync itself: the sync loop and a replicated
	// tools/list (listFresh) may both run it.
	runMu sync.Mutex
}

// endpoint is one SDK server with its two HTTP handlers (see the package
// doc for why two) and the tools it currently serves.
type endpoint struct {
	name string // "" for the main endpoint, else the gateway's server
	srv  *mcp.Server
	impl *mcp.Implementation // srv's
	// stateful serves initialize-based sessions: the SDK's handler, or
	// with Options.Replicas a sessionTable.
	stateful  http.Handler
	stateless *mcp.StreamableHTTPHandler
	// bound are the two handlers with the request's principal handed to
	// the SDK (bindPrincipal), built once.
	bound map[http.Handler]http.Handler

	// flights are the session requests in flight on the stateful
	// handler and the session fast path, and which of them their client
	// cancelled.
	flights flights
	// book knows the open sessions of the stateful SDK handler, for
	// the session fast path (fastsession.go); nil when sessions are
	// replicated (sessionTable), whose calls the SDK serves.
	book *sessionBook

	mu      sync.Mutex
	served  map[string]string                          // tool name → fingerprint
	allowed map[string]func(*principal.Principal) bool // tool name → who may use it
	fast    map[string]fastTool                        // tool name → its stateless fast path

	// fastChain serves a tools/call on the fast path: the handler of
	// the tool it names, inside the middleware the SDK's path runs for
	// a call (callSet tracking, observation).
	fastChain mcp.MethodHandler
}

// mayUse reports whether p may use the endpoint's tool name (listed, or
// called).
func (e *endpoint) mayUse(p *principal.Principal, name string) bool {
	e.mu.Lock()
	f := e.allowed[name]
	e.mu.Unlock()
	if f == nil {
		// Tools added beside the catalog (the A2A agents the bridge
		// serves) are tools like any other.
		return p.MayCallTool(name)
	}
	return f(p)
}

// New builds the server and its initial tool lists. ctx bounds the
// initial listing only.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Kernel == nil {
		return nil, errors.New("mcpserver: Options.Kernel is required")
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.Name == "" {
		opts.Name = "agentd"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	if opts.Config.Path == "" {
		opts.Config.Path = "/mcp"
	}
	if opts.UpstreamName == nil {
		opts.UpstreamName = mcpclient.UpstreamName
	}
	if r := opts.Replicas; r != nil {
		if _, err := newSealer(r.Keys, time.Hour); err != nil {
			return nil, fmt.Errorf("mcpserver: replicated sessions: %w", err)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: log, gateways: map[string]*endpoint{}, eofGrace: eofGrace, sets: slices.Clone(opts.ToolSets), obs: newObserver(opts)}
	s.main = s.newEndpoint("", &mcp.ServerOptions{
		Instructions: "Each agentd_agent_* tool sends a message to one agentd agent and returns its answer. " +
			"Pass the session_id of an earlier answer to continue that conversation. " +
			"Session transcripts are resources agentd://sessions/{id}.",
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{},
		},
	})
	s.main.srv.AddReceivingMiddleware(s.explainNoTools)
	if opts.Replicas != nil {
		s.main.srv.AddReceivingMiddleware(s.listFresh)
	}
	s.addSessionResources(s.main.srv)
	if len(opts.Config.Gateways) > 0 {
		s.gwTasks = newGatewayTasks(s)
	}
	for _, name := range opts.Config.Gateways {
		if opts.Tools == nil {
			return nil, fmt.Errorf("mcp gateway %q: no tool registry", name)
		}
		s.gateways[name] = s.newGateway(name)
	}
	if err := s.sync(ctx); err != nil {
		return nil, err
	}
	s.unwatch = append(s.unwatch, opts.Kernel.Agents().OnChange(s.kick))
	if opts.Tools != nil {
		s.unwatch = append(s.unwatch, opts.Tools.OnChange(s.kick))
	}
	for _, ts := range opts.ToolSets {
		s.unwatch = append(s.unwatch, ts.OnChange(s.kick))
	}
	return s, nil
}

func (s *Server) newEndpoint(name string, so *mcp.ServerOptions) *endpoint {
	so.Logger = slog.New(quietHandler{s.log.Handler()})
	impl := &mcp.Implementation{Name: s.opts.Name, Title: "agentd", Version: s.opts.Version}
	if name != "" {
		impl = &mcp.Implementation{Name: s.opts.Name + "-gateway-" + name, Version: s.opts.Version}
	}
	srv := mcp.NewServer(impl, so)
	srv.AddReceivingMiddleware(s.calls.track)
	get := func(*http.Request) *mcp.Server { return srv }
	e := &endpoint{
		name:    name,
		srv:     srv,
		impl:    impl,
		allowed: map[string]func(*principal.Principal) bool{},
		stateful: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			SessionTimeout:      s.opts.SessionTimeout,
			MaxRequestBodyBytes: s.opts.MaxMessageBytes,
			Logger:              so.Logger,
		}),
		stateless: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			MaxRequestBodyBytes:          s.opts.MaxMessageBytes,
			PropagateRequestCancellation: true,
			Logger:                       so.Logger,
		}),
		served: map[string]string{},
		fast:   map[string]fastTool{},
	}
	srv.AddReceivingMiddleware(s.filterTools(e.mayUse))
	if s.opts.Replicas != nil {
		// The keys were checked by New.
		table, err := newSessionTable(s, e, s.opts.Replicas)
		if err != nil {
			panic("mcpserver: " + err.Error())
		}
		e.stateful = table
	} else {
		e.book = newSessionBook(srv, s.opts.SessionTimeout)
		srv.AddReceivingMiddleware(e.book.track)
	}
	e.fastChain = s.calls.track(e.callFast)
	if s.obs != nil {
		srv.AddReceivingMiddleware(s.observe(e))
		e.fastChain = s.observe(e)(e.fastChain)
	}
	e.bound = map[http.Handler]http.Handler{e.stateful: bindPrincipal(e.stateful), e.stateless: bindPrincipal(e.stateless)}
	return e
}

// Close stops following changes and closes every client session.
func (s *Server) Close() error {
	s.syncMu.Lock()
	s.closed = true
	unwatchSets := s.unwatchSets
	s.unwatchSets = nil
	s.syncMu.Unlock()
	for _, f := range append(slices.Clone(s.unwatch), unwatchSets...) {
		f()
	}
	s.wg.Wait()
	for _, e := range s.endpoints() {
		if t, ok := e.stateful.(*sessionTable); ok {
			t.close()
		}
	}
	// Sessions close gracefully, waiting for their calls: cancel those
	// first, or an agent run would hold Close for minutes.
	s.calls.cancel(nil)
	if s.gwTasks != nil {
		s.gwTasks.close()
	}
	for _, e := range s.endpoints() {
		for ss := range e.srv.Sessions() {
			_ = ss.Close()
		}
	}
	return nil
}

// callSet tracks the tools/call requests in flight, so stopping can cancel
// them: the SDK closes a session only after its calls have returned.
type callSet struct {
	mu    sync.Mutex
	next  uint64
	calls map[uint64]inflightCall
}

type inflightCall struct {
	ss     *mcp.ServerSession
	cancel context.CancelFunc
}

// track is a receiving middleware giving each tools/call a cancellable
// context.
func (c *callSet) track(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ss, _ := req.GetSession().(*mcp.ServerSession)
		c.mu.Lock()
		if c.calls == nil {
			c.calls = map[uint64]inflightCall{}
		}
		id := c.next
		c.next++
		c.calls[id] = inflightCall{ss: ss, cancel: cancel}
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.calls, id)
			c.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}

// cancel cancels the calls of ss, or every call when ss is nil.
func (c *callSet) cancel(ss *mcp.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, call := range c.calls {
		if ss == nil || call.ss == ss {
			call.cancel()
		}
	}
}

func (s *Server) endpoints() []*endpoint {
	out := []*endpoint{s.main}
	names := make([]string, 0, len(s.gateways))
	for n := range s.gateways {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, s.gateways[n])
	}
	return out
}

// Path is the endpoint's path (default /mcp); gateways are below it at
// Path/gateway/{server}.
func (s *Server) Path() string { return s.opts.Config.Path }

// Router is where Mount adds its routes: an *http.ServeMux, or the
// daemon's recording mux.
type Router interface {
	Handle(pattern string, handler http.Handler)
}

// Mount registers the endpoint and the gateways on mux.
func (s *Server) Mount(mux Router) {
	p := strings.TrimSuffix(s.Path(), "/")
	mux.Handle(p, s.Handler())
	if len(s.gateways) > 0 {
		mux.Handle(p+"/gateway/{server}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := s.GatewayHandler(r.PathValue("server"))
			if h == nil {
				writeHTTPError(w, http.StatusNotFound, &protocolError{errInvalidRequest, fmt.Sprintf("no MCP gateway %q (configure [mcp] gateways)", r.PathValue("server"))})
				return
			}
			h.ServeHTTP(w, r)
		}))
	}
}

// Handler returns the Streamable HTTP handler of the main endpoint.
func (s *Server) Handler() http.Handler { return s.httpHandler(s.main) }

// GatewayHandler returns the handler of the gateway to server, or nil.
func (s *Server) GatewayHandler(server string) http.Handler {
	e, ok := s.gateways[server]
	if !ok {
		return nil
	}
	return s.httpHandler(e)
}

// ServeStdio serves one MCP session on a byte stream (stdin/stdout) until
// the input ends or ctx is done. Messages are newline-delimited JSON, or
// Content-Length framed when the input starts that way.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	conn := newStdioConn(in, out, s.opts.MaxMessageBytes, s.eofGrace, s.log)
	defer conn.wait()
	defer conn.Close()
	ss, err := s.main.srv.Connect(ctx, stdioTransport{conn}, nil)
	if err != nil {
		return fmt.Errorf("start mcp session: %w", err)
	}
	stop := context.AfterFunc(ctx, func() {
		s.calls.cancel(ss)
		_ = ss.Close()
	})
	defer stop()
	err = ss.Wait()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("mcp session: %w", err)
}

// kick asks for a re-sync; it never blocks, so it is safe as an OnChange
// callback.
func (s *Server) kick() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.closed {
		return
	}
	s.dirty = true
	if s.syncing {
		return
	}
	s.syncing = true
	s.wg.Add(1)
	go s.syncLoop()
}

func (s *Server) syncLoop() {
	defer s.wg.Done()
	for {
		s.syncMu.Lock()
		if !s.dirty || s.closed {
			s.syncing = false
			s.syncMu.Unlock()
			return
		}
		s.dirty = false
		s.syncMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.sync(ctx); err != nil {
			s.log.Error("mcp server: updating the tool list failed", "err", err)
		}
		cancel()
	}
}

// quietHandler demotes the SDK's Info records (a connect and a disconnect
// per stateless request) to Debug, so they do not flood the daemon log.
type quietHandler struct{ h slog.Handler }

func demote(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return q.h.Enabled(ctx, demote(l))
}

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return q.h.Handle(ctx, r)
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler { return quietHandler{q.h.WithAttrs(as)} }
func (q quietHandler) WithGroup(g string) slog.Handler       { return quietHandler{q.h.WithGroup(g)} }

// listFresh brings the tool list in line with the store before a
// replicated tools/list is answered. Another replica's change reaches
// this one by a notification that may come after the client has heard
// list_changed from a replica that knew first: a client re-listing
// through this replica in that window would keep the stale list, as
// nothing tells it to list again.
func (s *Server) listFresh(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			if err := s.sync(ctx); err != nil {
				s.log.Warn("mcp server: refreshing the tool list before tools/list failed; answering with the list as it is", "err", err)
			}
		}
		return next(ctx, method, req)
	}
}
