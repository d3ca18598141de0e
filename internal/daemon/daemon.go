// Package daemon is agentd's composition root: it builds the store, the
// LLM providers, the tool registry and runner, the kernel and every
// protocol edge from a Config, wires them by constructors, and serves them
// on one HTTP listener. Nothing else in agentd constructs components.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/internal/auditlog"
	"github.com/agentd/agentd/internal/oauthrs"
	"github.com/agentd/agentd/internal/principal"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/internal/builtin"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/residency"
	"github.com/agentd/agentd/internal/sandbox"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/storemetrics"
	"github.com/agentd/agentd/internal/store/storeretry"
	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/tool"
	"github.com/agentd/agentd/internal/webui"
)

// Options tune a Daemon beyond its config.
type Options struct {
	Logger *slog.Logger
	// ConnectMCP connects the configured MCP servers in the background;
	// false for one-shot commands that need no upstreams.
	ConnectMCP bool
	// Telemetry, if set, replaces the providers built from the config's
	// [metrics] and [telemetry] (tests); the daemon shuts it down on Close.
	Telemetry *telemetry.Telemetry
	// Adjust, if set, is applied to every config a reload reads, as the
	// caller adjusted the first one (start --listen).
	Adjust func(*config.Config)
}

// Daemon is a running agentd: every component, built and wired.
type Daemon struct {
	// cfg is the running config: Reload swaps it whole, so a reader sees
	// the old config or the new one, never half of each. Read it through
	// Config(), once per use, not field by field across a wait.
	cfg     atomic.Pointer[config.Config]
	log     *slog.Logger
	started time.Time

	Store  store.Store      // the backend [store] chose
	Audit  *auditlog.Writer // the audit log; reads wait for queued records
	Tools  *tool.Registry
	Kernel *agent.Kernel
	MCP    *mcpclient.Manager
	// proxy is the outbound proxy of the environment, nil without one.
	proxy *netguard.Proxy
	// Telemetry holds the meter and tracer providers; its providers are
	// nil for signals that are off.
	Telemetry *telemetry.Telemetry
	// Cluster is this daemon's membership in the replicas sharing its
	// PostgreSQL store; nil with SQLite.
	Cluster *postgres.Cluster
	// Approvals holds the approval requests of runs whose edge cannot
	// ask, until an operator decides in the dashboard.
	Approvals *tool.Approvals
	// Sandbox starts what the daemon runs for a model confined (see
	// docs/security.md); edges that spawn programs use it too.
	Sandbox *sandbox.Launcher
	// Changes is the dashboard's change stream (GET /api/events), fed
	// by the components' notifications (feedChanges).
	Changes *httpapi.Changes

	mux *routeMux
	// publicList is publicRoutes(), fixed at New.
	publicList []publicRoute
	// draining is set once shutdown begins: /readyz then says not ready,
	// so load balancers stop sending new work.
	draining atomic.Bool
	// retry carries the writes of runs across a store outage, up to
	// [cluster] store_retry_secs.
	retry *storeretry.Retrier
	// a2a is the A2A edge, nil when [a2a] is off: drain waits for its
	// tasks and fails those left (Serve).
	a2a *a2aEdge
	// authFailures limits failed authentications per client address, on
	// every route and at the dashboard's login alike.
	authFailures *httpapi.AuthLimiter
	// ui holds the dashboard's browser sessions.
	ui *httpapi.UISessions
	// keys resolve bearer keys to principals; empty = no authentication.
	keys *principal.Keys
	// tokens verifies OAuth access tokens; nil unless [auth.oauth].
	tokens *oauthrs.Verifier
	// closers stop the edges' background work, in reverse order, before
	// the MCP connections and the store close.
	closers []func() error

	// connectMCP says whether this daemon connects upstream MCP servers.
	connectMCP bool
	// mcpMu orders changes to the runtime MCP servers (the API's, and
	// those other replicas make); mcpApplied is the stored config each
	// connected runtime server was added with.
	mcpMu      sync.Mutex
	mcpApplied map[string]json.RawMessage
	// sharedKeys are the replicas' shared secrets (clusterKeys), read
	// once.
	sharedKeys [][]byte
	keysRead   bool

	// reloadMu lets one config reload run at a time; adjust is
	// Options.Adjust; rateLimits changes the admission layer's
	// [limits] rate_per_sec and burst on reload.
	reloadMu   sync.Mutex
	adjust     func(*config.Config)
	rateLimits *httpapi.RateLimits
}

// New builds a daemon from cfg. ctx bounds start-up work only.
func New(ctx context.Context, cfg *config.Config, opts Options) (*Daemon, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{log: log, adjust: opts.Adjust, rateLimits: httpapi.NewRateLimits(), started: time.Now(), mux: newRouteMux(), connectMCP: opts.ConnectMCP, mcpApplied: map[string]json.RawMessage{}}
	d.cfg.Store(cfg)
	d.publicList = d.publicRoutes()
	d.authFailures = httpapi.NewAuthLimiter(httpapi.DefaultAuthFailuresPerSec, httpapi.DefaultAuthFailureBurst, nil)
	keys, err := cfg.PrincipalKeys()
	if err != nil {
		return nil, fmt.Errorf("principals: %w", err)
	}
	d.keys = keys
	// The standard proxy variables route every guarded outbound request
	// (web_fetch, MCP and A2A peers, webhooks, JWKS); each destination is
	// still checked by its policy (netguard.Proxy).
	if d.proxy, err = netguard.ProxyFromEnv(cfg.LookupSecret); err != nil {
		return nil, err
	}
	if err := d.mountOAuth(); err != nil {
		return nil, err
	}
	d.Telemetry = opts.Telemetry
	if d.Telemetry == nil {
		settings, err := cfg.TelemetrySettings()
		if err != nil {
			return nil, err
		}
		if d.Telemetry, err = telemetry.New(ctx, settings, telemetry.Options{Version: buildinfo.Version(), Logger: log.With("component", "telemetry")}); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
	}
	// Every record the daemon and its components log names this process
	// as its spans and metrics do: replicas on one host, or a pod's
	// restarts, are told apart in a log search.
	log = log.With("service.instance.id", d.Telemetry.InstanceID())
	d.log = log
	meter, tracer, capture := d.Telemetry.MeterProvider(), d.Telemetry.TracerProvider(), d.Telemetry.CaptureContent()
	if h := d.Telemetry.MetricsHandler(); h != nil {
		d.mux.Handle("GET /metrics", d.metricsAccess(h))
	}

	db, err := openStore(ctx, cfg, log.With("component", "store"))
	if err != nil {
		_ = d.Telemetry.Shutdown(context.WithoutCancel(ctx))
		return nil, err
	}
	d.Cluster, err = joinReplicas(ctx, cfg, db, log.With("component", "replicas"))
	if err != nil {
		db.Close()
		return nil, err
	}
	// Everything but the replicas' own bookkeeping goes through the store
	// timed (db.client.operation.duration); without metrics this is db.
	db = storemetrics.Wrap(db, storeSystem(cfg), meter)
	d.Store = db
	d.retry = storeretry.New(storeretry.Options{Bound: cfg.Cluster.StoreRetry(), Logger: log.With("component", "store")})

	// Audit records are written in batches (group commit): a tool call's
	// answer waits for the commit of the batch holding its record, so a
	// kill -9 loses no record of an answered call; the API's reads wait
	// for what was queued before them.
	d.Audit = auditlog.New(db, &auditlog.Options{Durable: true, Logger: log.With("component", "audit")})
	d.Changes = httpapi.NewChanges(httpapi.ChangesOptions{Logger: log.With("component", "changes")})
	d.Tools = tool.NewRegistry()
	d.Approvals = tool.NewApprovals(time.Duration(cfg.Tools.ApprovalTimeoutSecs) * time.Second)
	runner := tool.NewRunner(d.Tools, tool.RunnerOptions{
		Operator:       d.Approvals,
		Timeout:        time.Duration(cfg.Tools.TimeoutSecs) * time.Second,
		Timeouts:       cfg.Tools.Timeouts,
		MaxResultChars: cfg.Tools.MaxResultChars,
		MaxImageBytes:  cfg.Tools.MaxResultImageBytes,
		LoopGuard:      cfg.Tools.LoopGuard,
		Audit:          auditFeed{d.Audit, d.Changes},
		AuditAhead:     d.Audit.Ahead,
		Logger:         log.With("component", "tools"),
		Meter:          meter,
		Tracer:         tracer,
		CaptureContent: capture,
	})
	untrusted := map[string]policy.Action{}
	for pat, s := range cfg.Tools.Untrusted {
		a, err := policy.ParseAction(s)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("tools.untrusted[%q]: %w", pat, err)
		}
		untrusted[pat] = a
	}
	d.Kernel = agent.New(agent.Options{
		Agents:    agent.NewAgents(cfg.Agents, db),
		Providers: newProviders(d.Config, log, telemetry.Transport),
		Runner:    runner,
		Sessions:  db,
		// A run's writes wait out a store outage (up to the bound)
		// rather than end the run at the first refused write.
		RunWrites: storeretry.Sessions(db, d.retry),
		Logger:    log.With("component", "agent"),
		Workspace: func(m manifest.Manifest) string { return d.Config().WorkspaceDir(m.Name, m) },
		Untrusted: untrusted,
		MaxDepth:  cfg.Tools.AgentSendMax,
		Meter:     meter,
		Tracer:    tracer,

		CaptureContent: capture,
		Turns:          d.turnLocks(),
	})
	if d.Cluster != nil {
		// A dead replica's turn is recorded as interrupted, in the
		// session, by whichever replica notices.
		d.Cluster.SetTurnReaper(d.Kernel.InterruptedTurn)
	}

	box, err := newSandbox(cfg, log.With("component", "sandbox"), meter)
	if err != nil {
		d.Close()
		return nil, err
	}
	d.Sandbox = box
	d.Tools.Add(builtin.FileTools()...)
	d.Tools.Add(builtin.ShellExec(builtin.ShellOptions{
		Timeout:        time.Duration(cfg.Tools.Shell.TimeoutSecs) * time.Second,
		MaxOutputBytes: cfg.Tools.Shell.MaxOutputBytes,
		Sandbox:        box,
		// Through Config(): a reload's [sandbox.shell] and
		// [sandbox.agents] apply from the next command.
		Policy: func(name, ws string) sandbox.Policy { return d.Config().ShellSandbox(name, ws) },
	}))
	d.Tools.Add(builtin.WebFetch(builtin.WebFetchOptions{
		Policy: &netguard.Policy{AllowPrivate: cfg.Tools.WebFetch.AllowPrivate, AllowHosts: cfg.Tools.WebFetch.AllowHosts, Proxy: d.proxy,
			Hint: "set allow_private = true or allow_hosts in [tools.web_fetch] to allow it"},
		MaxBytes: cfg.Tools.WebFetch.MaxBytes,
		Timeout:  30 * time.Second,
	}))
	d.Tools.Add(builtin.MemoryTools(db)...)
	d.Tools.Add(d.Kernel.Tools()...)

	callbacks := mcpclient.NewCallbacks()
	d.mux.Handle("GET "+mcpclient.CallbackPath, callbacks)
	d.MCP = mcpclient.NewManager(mcpclient.Options{
		Logger:    log.With("component", "mcp-client"),
		LookupEnv: cfg.LookupSecret,
		Guard: func(allowPrivate bool) *netguard.Policy {
			return &netguard.Policy{AllowPrivate: allowPrivate, Proxy: d.proxy}
		},
		Home: cfg.Home,
		OAuth: mcpclient.OAuthOptions{
			RedirectURL: callbackURL(cfg),
			Authorize:   callbacks.Authorize,
			TokenDir:    filepath.Join(cfg.Home, "oauth"),
		},
		Meter:         meter,
		Tracer:        tracer,
		Sandbox:       box,
		SandboxPolicy: func(s config.MCPServer, path string) sandbox.Policy { return d.Config().MCPSandbox(s, path) },
	})
	d.Tools.AddSource(d.MCP)
	d.Tools.Add(d.MCP.ResourceTools()...)
	d.MCP.OnToolsChanged(d.Tools.Changed)
	d.closers = append(d.closers, d.feedChanges())
	if opts.ConnectMCP {
		servers, err := d.mcpServers(ctx)
		if err != nil {
			d.Close()
			return nil, err
		}
		// Connections happen in the background: the daemon is healthy
		// before slow servers finish, and one failure blocks nothing.
		d.MCP.Start(context.WithoutCancel(ctx), servers)
		for _, s := range servers {
			if !d.configServer(s.Name) {
				data, _ := json.Marshal(s)
				d.mcpApplied[s.Name] = data
			}
		}
	}
	if d.Cluster != nil {
		// What other replicas change through the API, this one applies.
		d.closers = append(d.closers, d.followReplicas().Close)
	}

	// The dashboard logs in with the same keys as the API; its cookie is
	// Secure whenever the daemon is reached over https.
	// Keys minted through the API live in the store (their hash): the
	// admission layer and the dashboard's login look them up there.
	d.keys.SetMinted(mintedKeys{keys: db, cfg: d.Config})
	d.ui = httpapi.NewUISessions(httpapi.UISessionsOptions{Keys: d.keys, Secure: strings.HasPrefix(cfg.PublicURL, "https://"), AuthFailures: d.authFailures})
	api := httpapi.New(httpapi.Options{
		Kernel: d.Kernel, Store: apiStore{db, d.Audit}, Tools: d.Tools, MCP: mcpAdmin{d},
		Version: buildinfo.Version(), Logger: log.With("component", "api"), Started: d.started, Replica: d.replicaID(), HomeID: cfg.HomeID(), ConfigID: cfg.FileID(), UI: d.ui, Approvals: d.Approvals, Changes: d.Changes,
		Principals: func() []httpapi.PrincipalInfo { return principalInfos(d.Config()) },
	})
	api.Register(d.mux)
	d.mountProbes()
	d.mux.HandleFunc("POST /api/admin/reload", d.serveReload)
	webui.New().Register(d.mux)
	mcpSrv, err := d.mountMCP(ctx)
	if err != nil {
		d.Close()
		return nil, err
	}
	edgeA2A, err := d.mountA2A(ctx)
	if err != nil {
		d.Close()
		return nil, err
	}
	d.closers = append(d.closers, edgeA2A.Close)
	d.a2a = edgeA2A
	// The MCP edge was built first; the A2A agents join it as tools now.
	edgeA2A.bridgeToMCP(mcpSrv)
	return d, nil
}

// metricsAccess serves the metrics to admins only, or to anyone with
// [metrics] public = true (a scraper inside the network): their labels
// name every agent, tool and server, which a principal may not all see.
func (d *Daemon) metricsAccess(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := principal.FromContext(r.Context()); !d.Config().Metrics.Public && (p == nil || !p.Admin) {
			httpapi.WriteError(w, http.StatusForbidden, "forbidden", "the metrics are for admins: use an admin key, or set [metrics] public = true")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// mcpServers merges the config's servers with those registered at runtime.
func (d *Daemon) mcpServers(ctx context.Context) ([]config.MCPServer, error) {
	servers := slices.Clone(d.Config().MCPServers)
	stored, err := d.Store.ListMCPServers(ctx)
	if err != nil {
		return nil, fmt.Errorf("load mcp servers: %w", err)
	}
	for _, s := range stored {
		var c config.MCPServer
		if err := json.Unmarshal(s.Config, &c); err != nil {
			d.log.Error("skipping stored mcp server with bad config", "server", s.Name, "err", err)
			continue
		}
		servers = append(servers, c)
	}
	return servers, nil
}

// Config returns the daemon's configuration.
func (d *Daemon) Config() *config.Config { return d.cfg.Load() }

// Handler returns the daemon's HTTP handler with its middleware.
func (d *Daemon) Handler() http.Handler {
	protected := httpapi.Protect(d.mux, httpapi.ProtectOptions{
		Principals: d.keys,
		Tokens:     d.tokenVerifier(),
		ResourceMetadata: func(r *http.Request) string {
			return d.baseURL(r) + oauthrs.WellKnown + resourcePath(r.URL.Path)
		},
		Public:         d.public,
		Hosts:          d.hostPolicy(),
		TrustedOrigins: d.trustedOrigin,
		Clients:        httpapi.ClientAddrs{Trusted: d.Config().TrustedProxies()},
		AuthFailures:   d.authFailures,
		RatePerSec:     d.Config().Limits.RatePerSec,
		Burst:          d.Config().Limits.Burst,
		Limits:         d.rateLimits,
		LimitLoopback:  d.Config().Limits.LimitLoopback,
		Unlimited: func(p string) bool {
			return slices.Contains(httpapi.UnlimitedPaths, p) || p == "/livez" || p == "/readyz"
		},
		JSONRPC:      d.jsonRPC,
		MaxBodyBytes: d.Config().Limits.MaxBodyBytes,
		Meter:        d.Telemetry.MeterProvider(),
		UI:           d.ui,
		Logger:       d.log,
	})
	// Outermost: the request id, trace context and duration cover the
	// refusals of the middleware too.
	return httpapi.Observe(protected, httpapi.ObserveOptions{
		Meter:  d.Telemetry.MeterProvider(),
		Tracer: d.Telemetry.TracerProvider(),
		Route:  d.routeOf,
		Logger: d.log.With("component", "http"),
	})
}

// routeOf is the route pattern r would match: for requests refused before
// routing, which no handler tagged.
func (d *Daemon) routeOf(r *http.Request) string {
	_, pattern := d.mux.ServeMux.Handler(r)
	return httpapi.RoutePath(pattern)
}

// jsonRPC reports whether r is a JSON-RPC request: a POST to an MCP
// endpoint (/mcp, gateways) or to an A2A JSON-RPC endpoint (the default
// agent, one agent, the legacy tasks/send).
func (d *Daemon) jsonRPC(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	p := r.URL.Path
	if p == "/mcp" || strings.HasPrefix(p, "/mcp/") {
		return true
	}
	lp := strings.TrimRight(d.Config().A2A.ListenPath, "/")
	if p == lp || p == lp+"/tasks/send" {
		return true
	}
	name, ok := strings.CutPrefix(p, lp+"/agents/")
	return ok && name != "" && !strings.Contains(name, "/")
}

// callbackURL is where authorization servers send the browser back: the
// public URL if one is configured, else the listen address on loopback.
func callbackURL(cfg *config.Config) string {
	if cfg.PublicURL != "" {
		return strings.TrimRight(cfg.PublicURL, "/") + mcpclient.CallbackPath
	}
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + mcpclient.CallbackPath
}

// publicCards reports whether Agent Cards are served without auth.
func (d *Daemon) publicCards() bool {
	return d.Config().A2A.PublicCard == nil || *d.Config().A2A.PublicCard
}

// publicCard reports whether p is an Agent Card path served without auth.
func (d *Daemon) publicCard(p string) bool {
	if !d.publicCards() {
		return false
	}
	prefix := strings.TrimRight(d.Config().A2A.ListenPath, "/") + "/agents/"
	return p == "/.well-known/agent-card.json" || p == "/.well-known/agent.json" ||
		(strings.HasPrefix(p, prefix) && (strings.HasSuffix(p, "/.well-known/agent-card.json") || strings.HasSuffix(p, "/.well-known/agent.json")))
}

// ErrInsecureListen is returned when asked to listen beyond loopback
// without an API key.
var ErrInsecureListen = errors.New("refusing to listen on a non-loopback address without an api_key or principals")

// Listen opens the daemon's listener after the loopback check.
func (d *Daemon) Listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = d.Config().Listen
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if !isLoopback(host) && d.keys.Len() == 0 && d.tokens == nil {
		return nil, fmt.Errorf("%w (%s): set api_key_env (or [[principals]]) in %s", ErrInsecureListen, addr, d.Config().File)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// DashboardURL is where a person opens the dashboard of a daemon
// listening on addr: public_url when set, else the listener's address,
// with a wildcard host (0.0.0.0, ::) shown as loopback, which reaches it.
func DashboardURL(publicURL string, addr net.Addr) string {
	if publicURL != "" {
		return strings.TrimRight(publicURL, "/") + "/"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve serves HTTP on ln until ctx is cancelled, then shuts down
// gracefully: stop accepting, let requests finish for a grace period, then
// cancel the rest.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener) error {
	baseCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	srv := &http.Server{
		Handler:           d.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Duration(d.Config().Limits.ReadTimeoutSec) * time.Second,
		// Streams (SSE, A2A, MCP) clear their own write deadline.
		WriteTimeout: 5 * time.Minute,
		IdleTimeout:  time.Duration(d.Config().Limits.IdleTimeoutSec) * time.Second,
		BaseContext:  func(net.Listener) context.Context { return baseCtx },
		ErrorLog:     slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	d.log.Info("agentd listening", "addr", ln.Addr().String(), "version", buildinfo.Version(), "home", d.Config().Home)
	d.log.Info("dashboard", "url", DashboardURL(d.Config().PublicURL, ln.Addr()))
	released := make(chan struct{})
	go func() {
		defer close(released)
		d.releaseStartupPages(baseCtx)
	}()
	defer func() { cancelRuns(); <-released }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	d.draining.Store(true)
	d.drain()
	// The dashboards' change streams end now (after the drain told them
	// of the runs it ended): Shutdown waits for open requests.
	d.Changes.Close()
	d.log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		// After a short grace, cancel runs still streaming so Shutdown
		// does not wait the full period for long agent turns.
		select {
		case <-time.After(3 * time.Second):
			cancelRuns()
		case <-shutCtx.Done():
		}
	}()
	err := srv.Shutdown(shutCtx)
	<-errc
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// drain is the first part of a graceful stop: the replica is unready
// (draining, for /readyz) and takes no new runs (agent.ErrShuttingDown:
// 503, or a JSON-RPC error, at every edge), while the HTTP server still
// serves, so that a load balancer that has not yet seen the probe fail
// gets a retryable answer rather than a refused connection. The runs
// under way get [cluster] drain_timeout_secs to finish; those left then
// fail with agent.ErrShuttingDown ("replica shutting down": their A2A
// tasks FAILED, not CANCELED, since no client canceled them), while the
// requests that stream them are still open to carry the news, and their
// writes still reach the store.
func (d *Daemon) drain() {
	d.Kernel.Drain()
	running := func() int {
		n := d.Kernel.Active()
		if d.a2a != nil {
			n = max(n, d.a2a.server.Running())
		}
		return n
	}
	timeout := d.Config().Cluster.DrainTimeout()
	start := time.Now()
	if n := running(); n > 0 {
		d.log.Info("draining: new runs are refused; waiting for the runs under way (a second signal stops at once)", "runs", n, "drain_timeout", timeout)
	}
	if waitIdle(timeout, running) {
		if time.Since(start) > 100*time.Millisecond {
			d.log.Info("drained: every run finished", "took", time.Since(start).Round(time.Millisecond))
		}
		return
	}
	n := d.Kernel.FailRuns(agent.ErrShuttingDown)
	if d.a2a != nil {
		d.a2a.server.FailRuns(agent.ErrShuttingDown)
	}
	// A run failed now whose last writes meet a store outage must not
	// hold the stop up for store_retry_secs.
	d.retry.Stop()
	d.log.Warn("drain timed out: failing the runs still under way (replica shutting down)", "runs", max(n, running()), "drain_timeout", timeout)
	// They end at once (a cancelled model call or tool); their last
	// writes and events take a moment.
	waitIdle(5*time.Second, running)
}

// waitIdle polls running until it is 0 (true) or timeout passes (false).
func waitIdle(timeout time.Duration, running func() int) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for running() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// releaseStartupPages drops the daemon's mappings of its executable's
// pages (see package residency) once start-up work is over, unless ctx
// ends first: a moment after listening, when the burst of work that
// follows it is done (released during it, most pages came straight back),
// and again once the MCP servers still connecting then have connected or
// failed (npx servers take seconds), for at most 30 s. Pages are mapped
// again as they are used, so what stays resident while idle is what
// idling touches: 11-16 MB instead of 44 MB with no MCP server, 20 MB
// instead of 54 MB with ten stdio servers (go run ./bench -only 4).
func (d *Daemon) releaseStartupPages(ctx context.Context) {
	const settle = 250 * time.Millisecond
	tick := time.NewTicker(settle)
	defer tick.Stop()
	wait := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
			return true
		}
	}
	release := func() {
		rel, err := residency.ReleaseExecutable()
		if err != nil {
			d.log.Warn("release start-up pages", "err", err)
			return
		}
		d.log.Debug("released start-up pages", "mappings", rel.Mappings, "bytes", rel.Bytes)
	}
	if !wait() {
		return
	}
	connecting := d.mcpConnecting()
	release()
	if !connecting {
		return
	}
	for end := time.Now().Add(30 * time.Second); connecting && time.Now().Before(end); {
		if !wait() {
			return
		}
		connecting = d.mcpConnecting()
	}
	// One more settle: the last connection's follow-up work (listing
	// its tools, rebuilding the catalog) runs after its state changed.
	// A whole settle from here: a tick that came due while this
	// goroutine was late (a loaded machine) would otherwise end it at
	// once, releasing during that work. Reset drops such a tick.
	tick.Reset(settle)
	if wait() {
		release()
	}
}

// mcpConnecting reports whether an MCP server is still connecting.
func (d *Daemon) mcpConnecting() bool {
	if d.MCP == nil {
		return false
	}
	for _, st := range d.MCP.Status() {
		if st.State == mcpclient.StateConnecting {
			return true
		}
	}
	return false
}

// Close releases everything: MCP connections (and their child processes)
// first, then the store.
func (d *Daemon) Close() error {
	if d.Changes != nil {
		d.Changes.Close()
	}
	if d.retry != nil {
		d.retry.Stop() // the runs' writes wait for the store no longer
	}
	var errs []error
	for i := len(d.closers) - 1; i >= 0; i-- {
		errs = append(errs, d.closers[i]())
	}
	d.closers = nil
	if d.MCP != nil {
		errs = append(errs, d.MCP.Close())
	}
	if d.Audit != nil {
		// After the edges and upstreams stopped: no more calls, so the
		// queue is drained completely before the store closes.
		errs = append(errs, d.Audit.Close())
	}
	if d.Cluster != nil {
		// After the edges: their runs have ended and released their
		// turns. Leaving lets the other replicas fail at once whatever
		// did not end.
		errs = append(errs, d.Cluster.Close())
	}
	if d.Store != nil {
		errs = append(errs, d.Store.Close())
	}
	if d.Telemetry != nil {
		// Last: the spans of everything above have ended.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, d.Telemetry.Shutdown(ctx))
		cancel()
		d.Telemetry = nil
	}
	return errors.Join(errs...)
}

// turnLocks is what makes a session's turns exclusive across replicas:
// the cluster, or nil when this daemon is alone.
func (d *Daemon) turnLocks() agent.TurnLocks {
	if d.Cluster == nil {
		return nil
	}
	return d.Cluster
}

// replicaID is this daemon's replica id, "" when it is alone.
func (d *Daemon) replicaID() string {
	if d.Cluster == nil {
		return ""
	}
	return d.Cluster.ID()
}

// apiStore is the store as the API sees it: the audit log read through
// the queued writer, so a query sees every call made before it.
type apiStore struct {
	store.Store
	audit *auditlog.Writer
}

func (s apiStore) QueryAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	return s.audit.QueryAudit(ctx, f)
}

func (s apiStore) CountAudit(ctx context.Context, f store.AuditFilter) (int, error) {
	return s.audit.CountAudit(ctx, f)
}

func (s apiStore) AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error) {
	return s.audit.AppendAudit(ctx, r)
}

// mcpAdmin adapts the MCP client manager and the store to the API.
type mcpAdmin struct{ d *Daemon }

func (a mcpAdmin) Servers(ctx context.Context, who *principal.Principal) (any, error) {
	status := a.d.MCP.Status()
	configured, err := a.d.mcpServers(ctx)
	if err != nil {
		return nil, err
	}
	if who == nil || !who.Admin {
		// Least disclosure: a principal sees which servers exist, their
		// state and the tools it may call; how they are reached
		// (commands, arguments, URLs, headers) and what their errors
		// quote stay with the admins.
		byName := map[string]mcpclient.ServerStatus{}
		for _, s := range status {
			byName[s.Name] = s
		}
		out := make([]mcpclient.ServerStatus, 0, len(configured))
		for _, c := range configured {
			s, ok := byName[c.Name]
			if !ok {
				s = mcpclient.ServerStatus{Name: c.Name, Transport: c.Transport.Type, State: mcpclient.StateConnecting}
			}
			out = append(out, mcpclient.ServerStatus{
				Name: s.Name, Transport: s.Transport, State: s.State, Connected: s.Connected,
				Tools:      slices.DeleteFunc(slices.Clone(s.Tools), func(t mcpclient.ToolStatus) bool { return !who.MayCallTool(t.Name) }),
				ToolsCount: s.ToolsCount, Reconnects: s.Reconnects, ProtocolVersion: s.ProtocolVersion, ServerInfo: s.ServerInfo,
			})
		}
		return map[string]any{"configured": []any{}, "connected": []any{}, "servers": out, "total_configured": 0, "total_connected": 0}, nil
	}
	type entry struct {
		config.MCPServer
		Source string `json:"source"`
	}
	stored := map[string]bool{}
	if recs, err := a.d.Store.ListMCPServers(ctx); err == nil {
		for _, r := range recs {
			stored[r.Name] = true
		}
	}
	cfgOut := make([]entry, 0, len(configured))
	for _, c := range configured {
		c = mcpclient.RedactedConfig(c)
		src := "config"
		if stored[c.Name] {
			src = "api"
		}
		cfgOut = append(cfgOut, entry{c, src})
	}
	connected := make([]mcpclient.ServerStatus, 0, len(status))
	for _, s := range status {
		if s.State == mcpclient.StateConnected {
			connected = append(connected, s)
		}
	}
	return map[string]any{"configured": cfgOut, "connected": connected, "servers": status, "total_configured": len(cfgOut), "total_connected": len(connected)}, nil
}

func (a mcpAdmin) Add(ctx context.Context, raw json.RawMessage) error {
	var c config.MCPServer
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("mcp server config: %w", err)
	}
	if err := config.ValidateMCPServer(c); err != nil {
		return err
	}
	if c.Transport.URL != "" {
		// Refuse a blocked destination now, with a 400, rather than
		// accept it and fail every reconnect attempt in the background.
		pol := &netguard.Policy{AllowPrivate: c.AllowPrivate, Hint: `set "allow_private": true in the server's config to allow it`}
		if _, err := pol.CheckURL(ctx, c.Transport.URL); err != nil {
			return fmt.Errorf("transport.url: %w", err)
		}
	}
	for _, s := range a.d.Config().MCPServers {
		if s.Name == c.Name {
			return fmt.Errorf("%w: mcp server %q is defined in the config file", store.ErrExists, c.Name)
		}
	}
	for _, s := range a.d.MCP.Status() {
		if strings.EqualFold(strings.ReplaceAll(s.Name, "-", "_"), strings.ReplaceAll(c.Name, "-", "_")) {
			return fmt.Errorf("%w: name: an mcp server named %q exists; remove it first or choose another name", store.ErrExists, s.Name)
		}
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	a.d.mcpMu.Lock()
	defer a.d.mcpMu.Unlock()
	if err := a.d.MCP.Add(ctx, c); err != nil {
		return err
	}
	if err := a.d.Store.PutMCPServer(ctx, store.MCPServer{Name: c.Name, Config: data, CreatedAt: time.Now().UTC()}); err != nil {
		_ = a.d.MCP.Remove(ctx, c.Name)
		return fmt.Errorf("persist mcp server %q: %w", c.Name, err)
	}
	a.d.mcpApplied[c.Name] = data
	return nil
}

func (a mcpAdmin) Remove(ctx context.Context, name string) error {
	for _, s := range a.d.Config().MCPServers {
		if s.Name == name {
			return fmt.Errorf("%w: mcp server %q is defined in the config file", agent.ErrReadOnly, name)
		}
	}
	a.d.mcpMu.Lock()
	defer a.d.mcpMu.Unlock()
	if err := a.d.Store.DeleteMCPServer(ctx, name); err != nil {
		return err
	}
	delete(a.d.mcpApplied, name)
	return a.d.MCP.Remove(ctx, name)
}

// SetEnabled reconnects or disconnects a server registered through the
// API and persists the choice, so a restart keeps it. Servers of the
// config file are the file's business.
func (a mcpAdmin) SetEnabled(ctx context.Context, name string, enabled bool) error {
	for _, s := range a.d.Config().MCPServers {
		if s.Name == name {
			return fmt.Errorf("%w: mcp server %q: set enabled in the config file instead", agent.ErrReadOnly, name)
		}
	}
	recs, err := a.d.Store.ListMCPServers(ctx)
	if err != nil {
		return fmt.Errorf("load mcp servers: %w", err)
	}
	for _, rec := range recs {
		if rec.Name != name {
			continue
		}
		var c config.MCPServer
		if err := json.Unmarshal(rec.Config, &c); err != nil {
			return fmt.Errorf("decode stored mcp server %q: %w", name, err)
		}
		if c.Enabled == nil || *c.Enabled != enabled {
			c.Enabled = &enabled
			data, err := json.Marshal(c)
			if err != nil {
				return err
			}
			rec.Config = data
			if err := a.d.Store.PutMCPServer(ctx, rec); err != nil {
				return fmt.Errorf("persist mcp server %q: %w", name, err)
			}
		}
		// Replace the connection: a disabled entry stays listed, idle.
		_ = a.d.MCP.Remove(ctx, name)
		return a.d.MCP.Add(ctx, c)
	}
	return fmt.Errorf("%w: mcp server %q", store.ErrNotFound, name)
}

// ensureDir creates dir with owner-only permissions.
func ensureDir(dir string) error {
	return os.MkdirAll(filepath.Clean(dir), 0o700)
}
