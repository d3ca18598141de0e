//lint:file-ignore SA1019 upstream log messages (deprecated in 2026-07-28, alive in every earlier version) are forwarded on purpose

package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/jsonrpcwire"
	"github.com/agentd/agentd/internal/tool"
)

// States a server can be in (ServerStatus.State).
const (
	StateConnecting = "connecting" // an attempt is under way (first or after a drop)
	StateConnected  = "connected"
	StateFailed     = "failed" // the last attempt failed; another follows after a backoff
	StateDisabled   = "disabled"
)

// defaultTimeout is timeout_secs when unset.
const defaultTimeout = 30 * time.Second

// minConnectTimeout bounds the handshake from below: starting a server
// (npx fetching a package, say) can take longer than one call may.
const minConnectTimeout = 60 * time.Second

// stableAfter is how long a session must have lived for the backoff to
// start again from its minimum; a server that dies right after every
// connect keeps backing off.
const stableAfter = 10 * time.Second

// maxNoiseLogs bounds the stdout noise lines logged per session.
const maxNoiseLogs = 5

// stuckGrace is how long a call may take to return once its context has
// ended before the session is declared stuck (a server that stopped
// reading its stdin blocks writes, which no context can interrupt).
const stuckGrace = 2 * time.Second

// server supervises one upstream: it connects, lists tools, notices the
// session dying and reconnects with backoff, until it is stopped.
type server struct {
	m    *Manager
	cfg  config.MCPServer
	name string
	log  *slog.Logger
	idle time.Duration // no result and no progress for this long fails a call
	hard time.Duration // no call lasts longer, progress or not

	cancel context.CancelFunc // stops the supervisor
	done   chan struct{}      // closed when the supervisor has returned

	refresh chan struct{} // tools/list_changed arrived (cap 1)
	probe   chan struct{} // the session looks dead: check it (cap 1)

	mu         sync.Mutex
	state      string
	lastErr    string
	reconnects int
	// lastDown and lastDownErr outlive the reconnect that clears lastErr:
	// an upstream killed and back within a poll is otherwise only a
	// counter that moved, with no time and no reason to show.
	lastDown    time.Time
	lastDownErr string
	upSince     time.Time
	everUp      bool
	protocol    string
	info        *mcp.Implementation
	sess        *session
	attempt     *session      // the session being connected, if any
	changed     chan struct{} // closed and replaced on every change of sess/state
	tools       []*mcpTool    // allowed, named, first of each name; by upstream name
	collisions  []string      // within this server
	stopped     bool

	secrets atomic.Pointer[[]string] // resolved header values, for redaction

	oauthMu sync.Mutex
	oauth   *oauthState // built on first connect of a server with an oauth table

	calls sync.Map // progress token → *inflight
	// longTools are the upstream tools a plain call of which ran past
	// task_after_secs: in tasks "auto", their calls are tasks from then on
	// where the server supports it (tasks.go).
	longTools sync.Map
	parking   *parking // calls of 2026-07-28 callers waiting for their input (parked.go)

	logs *logLimiter // bounds what its notifications/message write to the daemon's log
	// urlSecrets are the transport URL's query values and password, which
	// often carry tokens and which a transport error quotes whole.
	urlSecrets []string
}

func newServer(m *Manager, cfg config.MCPServer) *server {
	idle := defaultTimeout
	if cfg.TimeoutSecs > 0 {
		idle = time.Duration(cfg.TimeoutSecs) * time.Second
	}
	s := &server{
		m:       m,
		cfg:     cfg,
		name:    cfg.Name,
		log:     m.log.With("mcp_server", cfg.Name),
		idle:    idle,
		hard:    time.Duration(m.opts.HardCapFactor) * idle,
		done:    make(chan struct{}),
		refresh: make(chan struct{}, 1),
		probe:   make(chan struct{}, 1),
		state:   StateConnecting,
		changed: make(chan struct{}),
		parking: newParking(),
		logs:    newLogLimiter(upstreamLogRate, upstreamLogBurst),

		urlSecrets: urlSecrets(cfg.Transport.URL),
	}
	if !enabled(cfg) {
		s.state = StateDisabled
	}
	return s
}

// start runs the supervisor; the Manager waits for it through done.
func (s *server) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.run(ctx)
}

// stop ends the supervisor (closing the session and killing the process)
// and waits for it.
func (s *server) stop() {
	s.mu.Lock()
	s.stopped = true
	s.notifyLocked()
	s.mu.Unlock()
	s.parking.close()
	if s.cancel == nil {
		return // never started (disabled or invalid)
	}
	s.cancel()
	<-s.done
}

// notifyLocked wakes callers waiting for a session, and tells the
// Manager's status watchers that this server's state may have changed.
func (s *server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
	if s.m != nil {
		s.m.statusChanged()
	}
}

func (s *server) setState(state string, err error) {
	s.mu.Lock()
	s.state = state
	if err != nil {
		s.lastErr = s.redact(err.Error())
		if state == StateFailed {
			s.lastDown, s.lastDownErr = time.Now(), s.lastErr
		}
	}
	s.notifyLocked()
	s.mu.Unlock()
}

// redact hides resolved header values in a message (an error may quote a
// request).
func (s *server) redact(msg string) string {
	for _, v := range s.urlSecrets {
		msg = strings.ReplaceAll(msg, v, "[redacted]")
	}
	p := s.secrets.Load()
	if p == nil {
		return msg
	}
	for _, v := range *p {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "[redacted]")
		}
	}
	return msg
}

func (s *server) run(ctx context.Context) {
	defer close(s.done)
	attempt := 0
	for {
		sess, tools, err := s.connect(ctx)
		if ctx.Err() != nil {
			if sess != nil {
				sess.close()
			}
			return
		}
		if err != nil {
			s.log.Warn("mcp server connect failed", "attempt", attempt+1, "error", s.redact(err.Error()))
			s.setState(StateFailed, err)
			if !s.sleep(ctx, attempt) {
				return
			}
			attempt++
			s.setState(StateConnecting, nil)
			continue
		}
		s.up(sess, tools)
		s.serve(ctx, sess)
		if ctx.Err() != nil {
			s.down(sess, nil)
			sess.close()
			return
		}
		reason := sess.reason()
		if sess.proc != nil {
			// Prefer how the process ended over the EOF that reported it.
			select {
			case <-sess.proc.exited:
				reason = sess.proc.exitError()
			case <-time.After(200 * time.Millisecond):
			}
		}
		s.log.Warn("mcp server disconnected; reconnecting", "error", s.redact(fmt.Sprint(reason)))
		s.down(sess, fmt.Errorf("disconnected: %w", reason))
		sess.close()
		if time.Since(sess.started) >= stableAfter {
			attempt = 0
		}
		if !s.sleep(ctx, attempt) {
			return
		}
		attempt++
	}
}

// backoff returns the wait before reconnect attempt n (0-based): doubling
// from ReconnectMin up to ReconnectMax, with half of it random so that
// many servers dropped at once do not come back in lockstep.
func (s *server) backoff(n int) time.Duration {
	d := s.m.opts.ReconnectMin
	for i := 0; i < n && d < s.m.opts.ReconnectMax; i++ {
		d *= 2
	}
	d = min(d, s.m.opts.ReconnectMax)
	half := d / 2
	return half + rand.N(half+1)
}

func (s *server) sleep(ctx context.Context, attempt int) bool {
	t := time.NewTimer(s.backoff(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// up publishes a new session and its tools: the tools first, so that
// whoever sees the server connected also finds its tools.
func (s *server) up(sess *session, tools []*mcpTool) {
	s.setTools(tools)
	res := sess.cs.InitializeResult()
	s.mu.Lock()
	again := s.everUp
	if again {
		s.reconnects++
	}
	reconnects := s.reconnects
	s.everUp = true
	s.sess = sess
	s.state = StateConnected
	s.lastErr = ""
	s.upSince = time.Now()
	if res != nil {
		s.protocol = res.ProtocolVersion
		s.info = res.ServerInfo
	}
	protocol := s.protocol
	s.notifyLocked()
	s.mu.Unlock()
	if again {
		// A restart the dashboard may never show as down (it can be back
		// within a poll): the log says it happened, and how often.
		s.log.Info("mcp server reconnected", "reconnects", reconnects, "protocol", protocol, "tools", len(tools))
		return
	}
	s.log.Info("mcp server connected", "protocol", protocol, "tools", len(tools))
}

// down withdraws a session; the server is connecting again from here.
// The tools stay listed: a reconnect usually brings them back, and a
// tool set that flickers on every drop confuses models more than a call
// that fails with ErrDisconnected.
func (s *server) down(sess *session, reason error) {
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
	}
	s.state = StateConnecting
	if reason != nil {
		s.lastErr = s.redact(reason.Error())
		s.lastDown, s.lastDownErr = time.Now(), s.lastErr
	}
	s.notifyLocked()
	s.mu.Unlock()
}

// serve waits for the session to end, refreshing tools and probing the
// session on request.
func (s *server) serve(ctx context.Context, sess *session) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sess.broken:
			return
		case <-s.refresh:
			tools, err := s.listTools(ctx, sess)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.log.Warn("mcp tools refresh failed", "error", s.redact(err.Error()))
				s.requestProbe()
				continue
			}
			s.setTools(tools)
		case <-s.probe:
			s.check(ctx, sess)
		}
	}
}

// check pings a session suspected dead and breaks it if the ping fails.
// A stateless (2026-07-28) session has no ping and nothing to lose: it is
// simply rebuilt, which re-discovers the server. Stdio sessions report
// their own death.
func (s *server) check(ctx context.Context, sess *session) {
	if sess.proc != nil {
		return
	}
	if isStateless(sess) {
		sess.fail(errors.New("a request failed on the link"))
		return
	}
	pctx, cancel := context.WithTimeout(ctx, min(s.idle, 10*time.Second))
	defer cancel()
	if err := sess.cs.Ping(pctx, nil); err != nil && ctx.Err() == nil {
		sess.fail(fmt.Errorf("ping after a failed request: %w", err))
	}
}

// sessPgid returns the process group of the current or connecting stdio
// session, or 0.
func (s *server) sessPgid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range []*session{s.sess, s.attempt} {
		if sess != nil && sess.proc != nil {
			return sess.proc.pgid
		}
	}
	return 0
}

func isStateless(sess *session) bool {
	res := sess.cs.InitializeResult()
	return res != nil && res.ProtocolVersion >= "2026-07-28"
}

func (s *server) requestProbe() {
	select {
	case s.probe <- struct{}{}:
	default:
	}
}

func (s *server) requestRefresh() {
	select {
	case s.refresh <- struct{}{}:
	default:
	}
}

// connect starts the transport, does the handshake and lists the tools.
func (s *server) connect(ctx context.Context) (*session, []*mcpTool, error) {
	var cctx context.Context
	var cancel context.CancelFunc
	if s.cfg.OAuth != nil {
		// The authorization flow pauses this deadline while the user
		// decides.
		cctx, cancel = withConnectDeadline(ctx, max(s.idle, minConnectTimeout))
	} else {
		cctx, cancel = context.WithTimeout(ctx, max(s.idle, minConnectTimeout))
	}
	defer cancel()
	sess := newSession()
	transport, err := s.transport(cctx, sess)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	s.attempt = sess
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.attempt = nil
		s.mu.Unlock()
	}()
	// Sampling and elicitation are offered for the callers of gateway
	// calls (see Caller); no roots.
	client := s.newClient(sess, linkCapabilities())
	cs, err := client.Connect(cctx, &captureTransport{inner: transport, sess: sess}, nil)
	if err != nil {
		err = s.connectError(sess, err)
		sess.close()
		return nil, nil, err
	}
	sess.cs = cs
	sess.watch()
	if res := cs.InitializeResult(); res != nil && res.Capabilities != nil && res.Capabilities.Logging != nil && !isStateless(sess) {
		// Servers send no log messages until asked to.
		if err := cs.SetLoggingLevel(cctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			s.log.Debug("mcp logging/setLevel refused", "error", s.redact(err.Error()))
		}
	}
	tools, err := s.listTools(cctx, sess)
	if err != nil {
		sess.close()
		return nil, nil, fmt.Errorf("list tools: %w", err)
	}
	return sess, tools, nil
}

// newClient is the SDK client of sess, offering caps.
func (s *server) newClient(sess *session, caps *mcp.ClientCapabilities) *mcp.Client {
	opts := &mcp.ClientOptions{
		Logger:       s.log,
		Capabilities: caps,
		// Input requests (SEP-2322) are answered per call, by its caller
		// (inputRounds), not by the link.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.requestRefresh()
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			defer sess.logs.done()
			s.upstreamLog(ctx, req.Params)
			s.callerLog(req.Session, req.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			defer sess.logs.done()
			s.progress(req.Params)
		},
	}
	if sess.proc == nil && s.m.opts.KeepAlive > 0 {
		opts.KeepAlive = s.m.opts.KeepAlive
	}
	if caps != nil && caps.Sampling != nil {
		// The SDK declares sampling whenever a handler is set, so it is
		// set only when caps offer it: a call session of a 2026-07-28
		// client that declared no sampling must not tell the server it
		// can sample (the server would rely on it, SEP-2575).
		opts.CreateMessageWithToolsHandler = s.createMessage
	}
	client := mcp.NewClient(&mcp.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion}, opts)
	client.AddReceivingMiddleware(s.relayElicitation, s.relayRoots)
	registerTaskMethods(client)
	return client
}

// callSession opens a session of its own for one call made for a
// 2026-07-28 caller with caps on an initialize-era HTTP link: the server
// then sees exactly the caller's capabilities, and its requests during the
// call belong to that call without doubt. It is closed after the call.
func (s *server) callSession(ctx context.Context, caps *mcp.ClientCapabilities) (*session, error) {
	cctx, cancel := context.WithTimeout(ctx, max(s.idle, minConnectTimeout))
	defer cancel()
	sess := newSession()
	transport, err := s.transport(cctx, sess)
	if err != nil {
		return nil, err
	}
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	client := s.newClient(sess, caps)
	cs, err := client.Connect(cctx, &captureTransport{inner: transport, sess: sess}, nil)
	if err != nil {
		err = s.connectError(sess, err)
		sess.close()
		return nil, err
	}
	sess.cs = cs
	sess.watch()
	if res := cs.InitializeResult(); res != nil && res.Capabilities != nil && res.Capabilities.Logging != nil {
		// As on the link: servers send no log messages until asked to.
		if err := cs.SetLoggingLevel(cctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			s.log.Debug("mcp logging/setLevel refused", "error", s.redact(err.Error()))
		}
	}
	return sess, nil
}

// connectError explains a failed handshake; for a stdio server that died
// on the way, its exit status and last stderr line say more than EOF.
func (s *server) connectError(sess *session, err error) error {
	if r := sess.reason(); r != nil && r != errClosing && sess.proc == nil {
		// Why the transport broke the session (a request refused on
		// the way, the session forgotten) says more than the SDK's
		// "client is closing".
		return fmt.Errorf("connect: %w", r)
	}
	if sess.proc != nil {
		select {
		case <-sess.proc.exited:
		case <-time.After(200 * time.Millisecond):
		}
		if perr := sess.proc.exitError(); perr != nil {
			// Its last words may still be in the pipe: the child has
			// exited, so its stderr ends soon.
			select {
			case <-sess.proc.stderrDone:
			case <-time.After(200 * time.Millisecond):
			}
			if line := sess.proc.lastStderr(); line != "" {
				return fmt.Errorf("connect: %w (stderr: %s)", perr, line)
			}
			return fmt.Errorf("connect: %w", perr)
		}
	}
	return fmt.Errorf("connect: %w", err)
}

// transport builds the session's transport: a started process for stdio,
// a guarded HTTP client for http and sse.
func (s *server) transport(ctx context.Context, sess *session) (mcp.Transport, error) {
	max := s.m.opts.MaxResultBytes
	var noisy atomic.Int32
	ev := frameEvents{
		noise: func(line []byte) {
			// A server that logs to stdout would flood the daemon log.
			switch n := noisy.Add(1); {
			case n <= maxNoiseLogs:
				s.log.Warn("mcp server wrote a non-JSON line to stdout; skipped", "line", truncate(strings.TrimSpace(string(line)), 200))
			case n == maxNoiseLogs+1:
				s.log.Warn("mcp server keeps writing non-JSON lines to stdout; no longer logged for this session")
			}
		},
		oversize: func(size int64, kind jsonrpcwire.Kind, replaced bool) {
			s.log.Warn("mcp message over the size cap dropped", "bytes_at_least", size, "limit", max, "failed_call", replaced, "notification", kind == jsonrpcwire.KindRequest)
		},
		callNotification: sess.logs.saw,
		response:         sess.tasks.observe,
	}
	switch s.cfg.Transport.Type {
	case TransportStdio:
		env := childEnv(s.cfg.Env, s.m.opts.LookupEnv, s.m.opts.Home)
		// The listed variables are usually tokens: a server that prints
		// one to stderr must not put it in the log or the status.
		var secrets []string
		for _, name := range s.cfg.Env {
			if v := envValue(env, name); v != "" {
				secrets = append(secrets, v)
			}
		}
		s.secrets.Store(&secrets)
		proc, err := startProcess(s.cfg, env, s.m.opts.KillGrace, s.log, s.redact, confinement{s.m.opts.Sandbox, s.m.opts.SandboxPolicy})
		if err != nil {
			return nil, err
		}
		sess.proc = proc
		// The lineReader enforces the size cap, per message.
		return &stdioLink{r: newLineReader(proc.stdout, max, ev), w: proc.stdin, sent: sess.tasks.sentCall}, nil
	case TransportHTTP, TransportSSE:
		return s.httpTransport(ctx, sess, ev)
	}
	return nil, fmt.Errorf("unknown transport type %q", s.cfg.Transport.Type)
}

func (s *server) httpTransport(ctx context.Context, sess *session, ev frameEvents) (mcp.Transport, error) {
	pol := s.m.policy(s.cfg.Name, s.cfg.AllowPrivate)
	u, err := pol.CheckURL(ctx, s.cfg.Transport.URL)
	if err != nil {
		return nil, err
	}
	headers, secrets, err := expandHeaders(s.cfg.Headers, s.m.opts.LookupEnv)
	if err != nil {
		return nil, err
	}
	s.secrets.Store(&secrets)
	base := pol.Transport()
	sess.closeIdle = base.CloseIdleConnections
	rt := &roundTripper{
		base:    base,
		origin:  origin(u),
		headers: headers,
		max:     s.m.opts.MaxResultBytes,
		ev:      ev,
		sess:    sess,
		streamBroken: func() {
			s.requestProbe()
		},
		rejected: func(status int) {
			sess.rejected.Store(true)
			if status == 404 {
				sess.fail(errors.New("the server no longer knows the session (HTTP 404)"))
				return
			}
			s.requestProbe()
		},
	}
	hc := pol.Client(0)
	hc.Transport = rt
	maxEvent := int(min(s.m.opts.MaxResultBytes+(64<<10), 1<<40))
	if s.cfg.Transport.Type == TransportSSE {
		return &mcp.SSEClientTransport{Endpoint: s.cfg.Transport.URL, HTTPClient: hc, MaxEventSize: maxEvent}, nil
	}
	t := &mcp.StreamableClientTransport{Endpoint: s.cfg.Transport.URL, HTTPClient: hc, MaxEventSize: maxEvent}
	if s.cfg.OAuth != nil {
		// Discovery, registration and token requests go to other
		// hosts than the MCP server, through the same SSRF guard.
		h, err := s.oauthHandler(pol.Client(0))
		if err != nil {
			return nil, err
		}
		t.OAuthHandler = h
	}
	return t, nil
}

// listTools fetches every page of tools and turns the allowed ones into
// tool.Tools. Tools are taken in upstream name order, so that of two
// names that normalise alike the same one is kept every time.
func (s *server) listTools(ctx context.Context, sess *session) ([]*mcpTool, error) {
	lctx, cancel := context.WithTimeout(ctx, s.idle)
	defer cancel()
	var all []*mcp.Tool
	for t, err := range sess.cs.Tools(lctx, nil) {
		if err != nil {
			return nil, err
		}
		if t != nil {
			all = append(all, t)
		}
	}
	slices.SortStableFunc(all, func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	var (
		tools      []*mcpTool
		collisions []string
		byName     = map[string]string{}
	)
	for _, t := range all {
		if !allowedTool(s.cfg.AllowedTools, t.Name) {
			continue
		}
		name := ToolName(s.name, t.Name)
		if first, dup := byName[name]; dup {
			if first == t.Name {
				collisions = append(collisions, fmt.Sprintf("upstream listed tool %q twice; kept the first", t.Name))
			} else {
				collisions = append(collisions, fmt.Sprintf("tools %q and %q both become %q; kept %q", first, t.Name, name, first))
			}
			continue
		}
		byName[name] = t.Name
		tools = append(tools, s.newTool(t, name))
	}
	for _, c := range collisions {
		s.log.Warn("mcp tool name collision", "detail", c)
	}
	s.mu.Lock()
	s.collisions = collisions
	s.mu.Unlock()
	return tools, nil
}

func (s *server) newTool(t *mcp.Tool, name string) *mcpTool {
	var schema json.RawMessage
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil {
			schema = b
		}
	}
	desc := t.Description
	if desc == "" {
		desc = cmp.Or(t.Title, t.Name)
	}
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	return &mcpTool{
		srv:      s,
		upstream: t.Name,
		spec: tool.Spec{
			Name:        name,
			Description: "[MCP:" + s.name + "] " + desc,
			InputSchema: NormalizeSchema(schema),
			Origin:      tool.OriginMCP,
			Server:      s.name,
			Untrusted:   true,
			ReadOnly:    readOnly,
			// The runner's own timeout must not cut short a call that
			// keeps reporting progress: this package enforces the idle
			// timeout and the hard cap itself.
			TimeoutSecs: int((s.hard + time.Second - 1) / time.Second),
		},
	}
}

func (s *server) setTools(tools []*mcpTool) {
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
	s.m.rebuild()
}

// awaitSession returns the live session; while a connection attempt is
// under way it waits for it, up to the idle timeout.
func (s *server) awaitSession(ctx context.Context) (*session, error) {
	var timeout <-chan time.Time
	for {
		s.mu.Lock()
		sess, state, stopped, ch, lastErr := s.sess, s.state, s.stopped, s.changed, s.lastErr
		s.mu.Unlock()
		switch {
		case stopped:
			return nil, fmt.Errorf("mcp server %q was removed: %w", s.name, tool.ErrDisconnected)
		case sess != nil && !sess.isBroken():
			return sess, nil
		case state != StateConnecting && state != StateConnected:
			if lastErr != "" {
				return nil, fmt.Errorf("mcp server %q is %s (%s): %w", s.name, state, lastErr, tool.ErrDisconnected)
			}
			return nil, fmt.Errorf("mcp server %q is %s: %w", s.name, state, tool.ErrDisconnected)
		}
		if timeout == nil {
			t := time.NewTimer(s.idle)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, fmt.Errorf("mcp server %q did not connect within %s: %w", s.name, s.idle, tool.ErrDisconnected)
		}
	}
}

// upstreamLog forwards a notifications/message to the daemon log.
func (s *server) upstreamLog(ctx context.Context, p *mcp.LoggingMessageParams) {
	if p == nil {
		return
	}
	level := slog.LevelInfo
	switch p.Level {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	data, _ := json.Marshal(p.Data)
	var text string
	if str, ok := p.Data.(string); ok {
		text = str
	} else {
		text = string(data)
	}
	ok, dropped := s.logs.allow(time.Now())
	if !ok {
		return
	}
	attrs := []any{"upstream_level", string(p.Level), "logger", p.Logger, "data", truncate(text, upstreamLogMax)}
	if dropped > 0 {
		attrs = append(attrs, "suppressed", dropped)
	}
	s.log.Log(ctx, level, "mcp server log", attrs...)
}

// progress routes a progress notification to its call, extending the
// call's idle deadline.
func (s *server) progress(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	v, ok := s.calls.Load(fmt.Sprint(p.ProgressToken))
	if !ok {
		return
	}
	in := v.(*inflight)
	in.touch()
	if in.progress != nil {
		in.progress(p.Message, p.Progress, p.Total)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
