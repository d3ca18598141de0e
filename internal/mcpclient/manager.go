package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/sandbox"
	"github.com/agentd/agentd/internal/tool"
)

// Options configures a Manager. The zero value is usable: defaults are
// noted per field.
type Options struct {
	// Logger receives connection events, upstream log messages (tagged
	// mcp_server) and stderr of stdio servers (at debug). nil discards.
	Logger *slog.Logger
	// LookupEnv resolves the env names passed to stdio servers, PATH,
	// HOME and TMPDIR, and ${NAME} references in headers. nil means an
	// empty environment.
	LookupEnv func(string) (string, bool)
	// Guard returns the SSRF policy for a server's URL; nil means
	// &netguard.Policy{AllowPrivate: allowPrivate}.
	Guard func(allowPrivate bool) *netguard.Policy
	// MaxResultBytes caps one upstream message; a larger result fails its
	// call with ErrResultTooLarge. Default 10 MiB.
	MaxResultBytes int64
	// Home is HOME for stdio servers; default LookupEnv("HOME").
	Home string
	// ClientName and ClientVersion are sent to servers; default "agentd"
	// and "dev".
	ClientName, ClientVersion string
	// HardCapFactor times timeout_secs is the longest one call may run
	// however much progress it reports. Default 10.
	HardCapFactor int
	// ReconnectMin and ReconnectMax bound the reconnect backoff; default
	// 250 ms and 30 s.
	ReconnectMin, ReconnectMax time.Duration
	// KillGrace is how long a stdio server has between SIGTERM and
	// SIGKILL. Default 2 s.
	KillGrace time.Duration
	// KeepAlive is the ping interval of HTTP and SSE sessions (the
	// stateless protocol has no ping); default 30 s, negative disables.
	KeepAlive time.Duration
	// OAuth serves the http servers configured with an oauth table.
	OAuth OAuthOptions
	// Meter records upstream call latency and the servers' state and
	// reconnects; nil records nothing.
	Meter metric.MeterProvider
	// Sandbox confines stdio servers, each with the policy SandboxPolicy
	// gives for it (path is the resolved executable); nil runs them
	// unconfined.
	Sandbox       *sandbox.Launcher
	SandboxPolicy func(cfg config.MCPServer, path string) sandbox.Policy
	// Tracer starts a client span per upstream tools/call; nil starts
	// none. Either way the caller's trace context goes upstream in the
	// request's _meta (traceparent, tracestate).
	Tracer trace.TracerProvider
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = 10 << 20
	}
	if o.Home == "" && o.LookupEnv != nil {
		o.Home, _ = o.LookupEnv("HOME")
	}
	if o.ClientName == "" {
		o.ClientName = "agentd"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	if o.HardCapFactor <= 0 {
		o.HardCapFactor = 10
	}
	if o.ReconnectMin <= 0 {
		o.ReconnectMin = 250 * time.Millisecond
	}
	if o.ReconnectMax < o.ReconnectMin {
		o.ReconnectMax = max(30*time.Second, o.ReconnectMin)
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 2 * time.Second
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 30 * time.Second
	}
	return o
}

// Manager connects to upstream MCP servers and offers their tools, plus
// the resource and prompt tools, as one tool.Source. It is safe for
// concurrent use. A daemon has one; an ACP session that brings its own
// servers makes another and closes it with the session.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	servers   map[string]*server
	order     []string // insertion order: the first of two colliding tools wins
	callbacks []func()
	statusCBs []func()
	closed    bool

	builtins  []tool.Tool
	rebuildMu sync.Mutex // one rebuild at a time, so that none stores a stale set
	snapshot  atomic.Pointer[[]tool.Tool]
	crossCol  atomic.Pointer[map[string][]string] // server → collisions with other servers

	changed  chan struct{} // cap 1: the tool set changed
	status   chan struct{} // cap 1: a server's state changed
	quit     chan struct{}
	notifier sync.WaitGroup
	token    atomic.Uint64
	obs      *observer // nil when neither metrics nor traces are on
	// taskLinks are the servers' task links, by *server (tasklink.go).
	taskLinks sync.Map
}

var _ tool.Source = (*Manager)(nil)

// ErrUnknownServer is returned by Remove for a name that is not there.
var ErrUnknownServer = errors.New("unknown mcp server")

// ErrClosed is returned by Add after Close.
var ErrClosed = errors.New("mcp manager closed")

// NewManager returns a Manager with no servers.
func NewManager(opts Options) *Manager {
	opts = opts.withDefaults()
	m := &Manager{
		opts:    opts,
		log:     opts.Logger,
		servers: map[string]*server{},
		changed: make(chan struct{}, 1),
		status:  make(chan struct{}, 1),
		quit:    make(chan struct{}),
	}
	m.builtins = newBuiltins(m)
	m.obs = newObserver(m)
	empty := []tool.Tool{}
	m.snapshot.Store(&empty)
	m.notifier.Add(1)
	go m.notify()
	return m
}

// Start adds servers and returns at once: each connects in the
// background, in parallel, and one that fails never holds up or fails the
// others. An invalid or duplicate entry is logged and shows in Status as
// failed. The connections live until Remove or Close, not until ctx ends.
func (m *Manager) Start(ctx context.Context, servers []config.MCPServer) {
	for _, s := range servers {
		if err := m.Add(ctx, s); err != nil {
			m.log.Error("mcp server not started", "mcp_server", s.Name, "error", err)
			if !errors.Is(err, ErrClosed) && !errors.Is(err, errDuplicate) {
				m.addFailed(s, err)
			}
		}
	}
}

var errDuplicate = errors.New("duplicate mcp server name")

// Add validates s and starts connecting to it in the background. A
// disabled server is listed in Status but not connected.
func (m *Manager) Add(_ context.Context, s config.MCPServer) error {
	if err := ValidateServer(s); err != nil {
		return err
	}
	srv := newServer(m, s)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	for _, other := range m.servers {
		if serverKey(other.name) == serverKey(s.Name) {
			m.mu.Unlock()
			return fmt.Errorf("add mcp server %q: %w (%q normalises alike)", s.Name, errDuplicate, other.name)
		}
	}
	m.servers[s.Name] = srv
	m.order = append(m.order, s.Name)
	if enabled(s) {
		srv.start()
	}
	m.mu.Unlock()
	m.statusChanged()
	if enabled(s) && s.AllowedTools == nil {
		m.log.Warn("mcp server exposes all its tools to agents; set allowed_tools to narrow them", "mcp_server", s.Name)
	}
	m.rebuild()
	return nil
}

// addFailed lists an entry that could not be added, so that Status shows
// why.
func (m *Manager) addFailed(s config.MCPServer, err error) {
	srv := newServer(m, s)
	srv.state = StateFailed
	srv.lastErr = err.Error()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || s.Name == "" {
		return
	}
	if _, dup := m.servers[s.Name]; dup {
		return
	}
	m.servers[s.Name] = srv
	m.order = append(m.order, s.Name)
	m.statusChanged()
}

// Remove disconnects a server (killing its process group) and drops its
// tools. In-flight calls fail with tool.ErrDisconnected.
func (m *Manager) Remove(_ context.Context, name string) error {
	m.mu.Lock()
	srv, ok := m.servers[name]
	if ok {
		delete(m.servers, name)
		m.order = slices.DeleteFunc(m.order, func(n string) bool { return n == name })
	}
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("remove mcp server %q: %w", name, ErrUnknownServer)
	}
	srv.stop()
	m.statusChanged()
	m.rebuild()
	return nil
}

// Tools implements tool.Source: every allowed upstream tool, named
// mcp_{server}_{tool}. It returns a snapshot and is cheap.
func (m *Manager) Tools() []tool.Tool {
	return slices.Clone(*m.snapshot.Load())
}

// ResourceTools returns the tools that give agents the resources and
// prompts of this Manager's servers: mcp_list_resources,
// mcp_read_resource, mcp_list_prompts and mcp_get_prompt. They are not
// part of Tools, so that a registry merging several Managers (an ACP
// session's) can add them once. Their names are reserved: an upstream
// tool that would take one is left out and reported.
func (m *Manager) ResourceTools() []tool.Tool {
	return slices.Clone(m.builtins)
}

// Session returns the live client session of a connected server, for
// gateways that forward resources, prompts and completions; false when
// the server is unknown or not connected. The session may break at any
// time; callers must not close it.
func (m *Manager) Session(server string) (*mcp.ClientSession, bool) {
	s := m.server(server)
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil || s.sess.isBroken() {
		return nil, false
	}
	return s.sess.cs, true
}

// OnToolsChanged registers f to be called, from a goroutine of the
// Manager, after the tool set changed (a server connected, was removed,
// or sent tools/list_changed). Calls are coalesced. f may call any
// Manager method but Close, which waits for that goroutine.
func (m *Manager) OnToolsChanged(f func()) {
	m.mu.Lock()
	m.callbacks = append(m.callbacks, f)
	m.mu.Unlock()
}

// OnStatusChanged registers f to be called, from a goroutine of the
// Manager, after what Status reports may have changed: a server was
// added or removed, connected, dropped, failed or is connecting again.
// Calls are coalesced (a burst of changes may be one call), so f reads
// Status to learn what changed. f may call any Manager method but Close.
func (m *Manager) OnStatusChanged(f func()) {
	m.mu.Lock()
	m.statusCBs = append(m.statusCBs, f)
	m.mu.Unlock()
}

// statusChanged wakes the notifier for the status watchers; it never
// blocks, so a server may call it holding its own lock.
func (m *Manager) statusChanged() {
	select {
	case m.status <- struct{}{}:
	default:
	}
}

// Close disconnects every server, kills every stdio process group and
// waits for all goroutines of the Manager. It is idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	servers := make([]*server, 0, len(m.servers))
	for _, name := range m.order {
		servers = append(servers, m.servers[name])
	}
	m.servers = map[string]*server{}
	m.order = nil
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.stop)
	}
	wg.Wait()
	close(m.quit)
	m.notifier.Wait()
	empty := []tool.Tool{}
	m.snapshot.Store(&empty)
	return nil
}

func (m *Manager) server(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[name]
}

func (m *Manager) serversInOrder() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*server, 0, len(m.order))
	for _, name := range m.order {
		out = append(out, m.servers[name])
	}
	return out
}

// rebuild recomputes the tool snapshot: servers in insertion order, each
// name to its first claimant; built-in names are reserved.
func (m *Manager) rebuild() {
	m.rebuildMu.Lock()
	defer m.rebuildMu.Unlock()
	servers := m.serversInOrder()
	var tools []tool.Tool
	owner := map[string]string{}
	cross := map[string][]string{}
	for _, b := range m.builtins {
		owner[b.Spec().Name] = "" // reserved: registries hold both sets
	}
	for _, s := range servers {
		s.mu.Lock()
		list := s.tools
		s.mu.Unlock()
		for _, t := range list {
			name := t.spec.Name
			if first, taken := owner[name]; taken {
				what := "a built-in tool"
				if first != "" {
					what = fmt.Sprintf("a tool of server %q", first)
				}
				cross[s.name] = append(cross[s.name], fmt.Sprintf("tool %q becomes %q, which is already %s; left out", t.upstream, name, what))
				continue
			}
			owner[name] = s.name
			tools = append(tools, t)
		}
	}
	old := *m.snapshot.Load()
	m.snapshot.Store(&tools)
	prev := m.crossCol.Swap(&cross)
	if prev == nil || !equalCollisions(*prev, cross) {
		for name, list := range cross {
			for _, c := range list {
				m.log.Warn("mcp tool name collision", "mcp_server", name, "detail", c)
			}
		}
	}
	if !sameTools(old, tools) {
		select {
		case m.changed <- struct{}{}:
		default:
		}
	}
}

func equalCollisions(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// sameTools reports whether two snapshots offer the same tools.
func sameTools(a, b []tool.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			sa, sb := a[i].Spec(), b[i].Spec()
			if sa.Name != sb.Name || sa.Description != sb.Description || string(sa.InputSchema) != string(sb.InputSchema) {
				return false
			}
		}
	}
	return true
}

// notify calls the change callbacks; it is the Manager's one notifier
// goroutine, so that a callback never runs under a lock of the Manager
// or on a server's supervisor (it may call Remove, which waits for one).
func (m *Manager) notify() {
	defer m.notifier.Done()
	for {
		select {
		case <-m.quit:
			return
		case <-m.changed:
			m.mu.Lock()
			cbs := slices.Clone(m.callbacks)
			m.mu.Unlock()
			for _, f := range cbs {
				f()
			}
		case <-m.status:
			m.mu.Lock()
			cbs := slices.Clone(m.statusCBs)
			m.mu.Unlock()
			for _, f := range cbs {
				f()
			}
		}
	}
}

// policy is the SSRF policy for server name's URL. Its refusals name the
// server's own allow_private (in [[mcp_servers]] or the JSON config of
// POST /api/mcp/servers alike).
func (m *Manager) policy(name string, allowPrivate bool) *netguard.Policy {
	p := &netguard.Policy{AllowPrivate: allowPrivate}
	if m.opts.Guard != nil {
		if g := m.opts.Guard(allowPrivate); g != nil {
			c := *g // Guard's policy may be shared: the hint is this server's
			p = &c
		}
	}
	p.Hint = fmt.Sprintf("set allow_private = true on MCP server %q to allow it", name)
	return p
}

// nextToken returns a progress token unique within the Manager.
func (m *Manager) nextToken() string {
	return "agentd-" + strconv.FormatUint(m.token.Add(1), 10)
}
