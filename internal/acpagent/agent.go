package acpagent

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/tool"
)

// Kernel is what the edge needs of the agent kernel; *agent.Kernel
// satisfies it.
type Kernel interface {
	Run(ctx context.Context, req *agent.RunRequest) (*agent.RunResult, error)
	Session(ctx context.Context, id string) (store.Session, []llm.Message, error)
	Agents() *agent.Agents
}

// SessionLister lists stored sessions for session/list; store.SessionStore
// satisfies it.
type SessionLister interface {
	ListSessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error)
}

var _ Kernel = (*agent.Kernel)(nil)

// AuthMethodID is the id of the one authentication method offered when a
// token is required: the editor calls authenticate with it and the token
// in _meta.token.
const AuthMethodID = "agentd-token"

// Options configure Serve. Kernel, Sessions and Agent are required.
type Options struct {
	Kernel   Kernel
	Sessions SessionLister
	// Agent names the agent every session of the connection talks to.
	Agent string
	// Name and Version are the agentInfo of initialize (the [acp] block).
	Name    string
	Version string
	// UntrustedUser labels editor prompt content untrusted (user_trust =
	// "untrusted"): embedded context is wrapped as data and every run
	// starts tainted.
	UntrustedUser bool
	// AuthToken, when not empty, must be presented with authenticate
	// before any session method is served.
	AuthToken string
	// Tools looks up the daemon's tools, so that the workspace tools
	// (file_read, file_write, file_list, shell_exec) can be rebound to the
	// editor's working directory or replaced by editor-backed ones with
	// the same specs. nil leaves the daemon's tools as they are.
	Tools tool.Lookup
	// ConnectMCP connects the MCP servers an editor passes with
	// session/new and session/load; nil refuses them (the editor is told).
	ConnectMCP ConnectMCP
	// Ready waits, with a bound of its own, for the daemon's tools that
	// come up in the background (its configured MCP servers' first
	// connections), so that a session's first turn can call them; each
	// error it returns names what is not ready, and is told to the
	// editor. Opening a session calls it; nil waits for nothing.
	Ready func(ctx context.Context) []error
	// Workspace is the directory reported as the cwd of sessions whose
	// editor directory is not known here (started over another protocol
	// or by another process): where their tools ran. Optional.
	Workspace string
	// CancelGrace bounds how long a cancelled prompt waits for its run to
	// wind down before it answers "cancelled" anyway; default 50 ms. The
	// run keeps its session busy until it has finished.
	CancelGrace time.Duration
	// Tracer records a server span for each session/new, session/load,
	// session/resume and session/prompt, the parent of the run's spans;
	// nil records none. Either way a request's _meta traceparent is the
	// parent of what the request does.
	Tracer trace.TracerProvider
	Logger *slog.Logger
}

// Errors of the edge. They reach the editor as JSON-RPC errors.
var (
	// ErrUnknownSession is returned for a session id this connection has
	// neither created nor loaded.
	ErrUnknownSession = errors.New("unknown session: create it with session/new or open it with session/load")
	// ErrBadCwd is returned when the editor's cwd is not an absolute path.
	ErrBadCwd = errors.New("cwd must be an absolute path")
)

// peer is the editor side of the connection; *acp.AgentSideConnection
// satisfies it. Tests may substitute their own.
type peer interface {
	SessionUpdate(ctx context.Context, n acp.SessionNotification) error
	RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error)
	ReadTextFile(ctx context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error)
	CreateTerminal(ctx context.Context, p acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error)
	TerminalOutput(ctx context.Context, p acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error)
	WaitForTerminalExit(ctx context.Context, p acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error)
	KillTerminal(ctx context.Context, p acp.KillTerminalRequest) (acp.KillTerminalResponse, error)
	ReleaseTerminal(ctx context.Context, p acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error)
}

var _ peer = (*acp.AgentSideConnection)(nil)

// Serve speaks ACP as the agent on r and w (the process's stdin and
// stdout) until the editor disconnects or ctx ends. It returns after every
// run it started has finished and every editor MCP server is closed. When
// ctx ends first and r is an io.Closer, r is closed to stop the reader.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	s, err := newServer(opts)
	if err != nil {
		return err
	}
	// The SDK starts reading as soon as the connection exists; the gate
	// holds the first read until s knows its peer.
	gate := make(chan struct{})
	conn := acp.NewAgentSideConnection(s, w, &gatedReader{r: r, gate: gate})
	conn.SetLogger(s.log.With("component", "acp-jsonrpc"))
	s.peer = conn
	close(gate)

	select {
	case <-conn.Done():
	case <-ctx.Done():
		if c, ok := r.(io.Closer); ok {
			_ = c.Close()
		}
	}
	return s.shutdown()
}

type gatedReader struct {
	r    io.Reader
	gate <-chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.gate
	return g.r.Read(p)
}

// server implements the ACP agent for one connection.
type server struct {
	opts   Options
	log    *slog.Logger
	peer   peer
	tracer trace.Tracer // nil: no spans

	runs sync.WaitGroup // kernel runs started by prompts

	mu         sync.Mutex
	clientCaps acp.ClientCapabilities
	authed     bool
	sessions   map[string]*session
	closed     bool
}

var (
	_ acp.Agent       = (*server)(nil)
	_ acp.AgentLoader = (*server)(nil)
)

func newServer(opts Options) (*server, error) {
	if opts.Kernel == nil || opts.Sessions == nil || opts.Agent == "" {
		return nil, errors.New("acpagent: Options need Kernel, Sessions and Agent")
	}
	if opts.Name == "" {
		opts.Name = "agentd"
	}
	if opts.CancelGrace <= 0 {
		opts.CancelGrace = 50 * time.Millisecond
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &server{opts: opts, log: log, sessions: map[string]*session{}}
	if opts.Tracer != nil {
		s.tracer = opts.Tracer.Tracer(telemetry.Scope)
	}
	return s, nil
}

// shutdown cancels every run, waits for them, and closes every session's
// MCP servers.
func (s *server) shutdown() error {
	s.mu.Lock()
	s.closed = true
	sessions := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.cancelRun()
	}
	s.runs.Wait()
	var errs []error
	for _, ss := range sessions {
		errs = append(errs, ss.close())
	}
	return errors.Join(errs...)
}

// manifest returns the served agent's manifest.
func (s *server) manifest(ctx context.Context) (manifest.Manifest, error) {
	e, err := s.opts.Kernel.Agents().Get(ctx, s.opts.Agent)
	if err != nil {
		return manifest.Manifest{}, err
	}
	return e.Manifest, nil
}

// Initialize implements acp.Agent.
func (s *server) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	m, err := s.manifest(ctx)
	if err != nil {
		return acp.InitializeResponse{}, wireError(err)
	}
	s.mu.Lock()
	s.clientCaps = p.ClientCapabilities
	s.mu.Unlock()

	methods := []acp.AuthMethod{}
	if s.opts.AuthToken != "" {
		methods = append(methods, acp.AuthMethod{Agent: &acp.AuthMethodAgent{
			Id:          AuthMethodID,
			Name:        "agentd token",
			Description: acp.Ptr("Send the token agentd expects (the value of [acp] auth_token_env) as _meta.token."),
		}})
	}
	caps := acp.AgentCapabilities{
		LoadSession: true,
		PromptCapabilities: acp.PromptCapabilities{
			Image: m.Images,
			// Audio has no representation in agentd's model vocabulary.
			Audio:           false,
			EmbeddedContext: true,
		},
		SessionCapabilities: acp.SessionCapabilities{
			List:   &acp.SessionListCapabilities{},
			Resume: &acp.SessionResumeCapabilities{},
			Close:  &acp.SessionCloseCapabilities{},
		},
	}
	if s.opts.ConnectMCP != nil {
		caps.McpCapabilities = acp.McpCapabilities{Http: true, Sse: true}
	}
	return acp.InitializeResponse{
		// Version 1 is the only one; a client asking for another gets ours
		// and decides whether it can speak it.
		ProtocolVersion:   acp.ProtocolVersionNumber,
		AgentCapabilities: caps,
		AgentInfo:         &acp.Implementation{Name: s.opts.Name, Version: s.opts.Version},
		AuthMethods:       methods,
	}, nil
}

// Authenticate implements acp.Agent. Without a configured token every
// call succeeds.
func (s *server) Authenticate(ctx context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	if s.opts.AuthToken == "" {
		return acp.AuthenticateResponse{}, nil
	}
	if p.MethodId != AuthMethodID {
		return acp.AuthenticateResponse{}, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown authentication method %q; use %q", p.MethodId, AuthMethodID)})
	}
	token, _ := p.Meta["token"].(string)
	if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.AuthToken)) != 1 {
		return acp.AuthenticateResponse{}, acp.NewAuthRequired(map[string]any{"error": "the token in _meta.token is missing or wrong"})
	}
	s.mu.Lock()
	s.authed = true
	s.mu.Unlock()
	return acp.AuthenticateResponse{}, nil
}

// requireAuth fails session methods until authenticate succeeded, when a
// token is configured.
func (s *server) requireAuth() error {
	if s.opts.AuthToken == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.authed {
		return acp.NewAuthRequired(map[string]any{"error": "call authenticate with method " + AuthMethodID + " first"})
	}
	return nil
}

// Logout implements acp.Agent; agentd does not advertise it.
func (s *server) Logout(ctx context.Context, p acp.LogoutRequest) (acp.LogoutResponse, error) {
	return acp.LogoutResponse{}, acp.NewMethodNotFound("logout")
}

// SetSessionConfigOption implements acp.Agent; agentd offers no config
// options.
func (s *server) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound("session/set_config_option")
}

func (s *server) caps() acp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientCaps
}
