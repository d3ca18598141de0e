package acpagent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// Session modes decide what happens when the policy asks for approval.
// They never loosen a deny rule nor tighten an allow.
const (
	modeAsk     = "ask"
	modeApprove = "approve"
	modeReject  = "reject"
)

var sessionModes = []acp.SessionMode{
	{Id: modeAsk, Name: "Ask", Description: acp.Ptr("Ask before tool calls the policy marks for approval.")},
	{Id: modeApprove, Name: "Approve", Description: acp.Ptr("Approve, without asking, the calls the policy would ask about; deny rules still apply.")},
	{Id: modeReject, Name: "Reject", Description: acp.Ptr("Reject, without asking, the calls the policy would ask about.")},
}

func modeState(current string) *acp.SessionModeState {
	return &acp.SessionModeState{AvailableModes: sessionModes, CurrentModeId: acp.SessionModeId(current)}
}

func validMode(id string) bool {
	for _, m := range sessionModes {
		if string(m.Id) == id {
			return true
		}
	}
	return false
}

// listPageSize is how many sessions one session/list page holds.
const listPageSize = 50

// session is an ACP session open on this connection: a kernel session plus
// what the editor gave it (directory, MCP servers, capabilities) and what
// the user decided in it.
type session struct {
	id    string
	cwd   string
	mcp   MCPSet      // the editor's MCP servers; nil when none
	tools []tool.Tool // workspace tools bound to cwd or to the editor

	mu      sync.Mutex
	mode    string
	stored  bool            // the kernel has the session (a turn ran or it was loaded)
	always  map[string]bool // tools the user allowed "always" in this session
	notices []string        // problems to tell the user at the next turn
	run     *run            // the turn in progress
	pending map[*permission]struct{}
}

func (ss *session) currentMode() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.mode
}

func (ss *session) isStored() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.stored
}

func (ss *session) markStored() {
	ss.mu.Lock()
	ss.stored = true
	ss.mu.Unlock()
}

func (ss *session) remember(toolName string) {
	ss.mu.Lock()
	ss.always[toolName] = true
	ss.mu.Unlock()
}

func (ss *session) alwaysAllowed() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]string, 0, len(ss.always))
	for t := range ss.always {
		out = append(out, t)
	}
	return out
}

func (ss *session) takeNotices() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := ss.notices
	ss.notices = nil
	return n
}

// begin makes r the session's turn, first waiting for a previous turn that
// is still winding down after a cancel. It fails only when ctx ends first.
func (ss *session) begin(ctx context.Context, r *run) error {
	for {
		ss.mu.Lock()
		prev := ss.run
		if prev == nil {
			ss.run = r
			ss.mu.Unlock()
			return nil
		}
		ss.mu.Unlock()
		select {
		case <-prev.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finish ends turn r.
func (ss *session) finish(r *run) {
	ss.mu.Lock()
	if ss.run == r {
		ss.run = nil
	}
	ss.mu.Unlock()
	close(r.done)
}

func (ss *session) currentRun() *run {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.run
}

// cancelRun interrupts the turn in progress, if any. It does not block.
func (ss *session) cancelRun() {
	if r := ss.currentRun(); r != nil {
		r.cancel()
	}
}

// close releases the editor's MCP servers.
func (ss *session) close() error {
	if ss.mcp == nil {
		return nil
	}
	if err := ss.mcp.Close(); err != nil {
		return fmt.Errorf("close mcp servers of session %s: %w", ss.id, err)
	}
	return nil
}

// session returns the open session id.
func (s *server) session(id acp.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[string(id)]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownSession, id)
	}
	return ss, nil
}

// openSession returns the open session id, or opens it: binds the
// workspace tools to cwd and connects the editor's MCP servers. A session
// already open on this connection keeps its state and connections.
func (s *server) openSession(ctx context.Context, id, cwd string, servers []acp.McpServer) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("%w: %q", ErrBadCwd, cwd)
	}
	s.mu.Lock()
	if ss, ok := s.sessions[id]; ok {
		s.mu.Unlock()
		return ss, nil
	}
	s.mu.Unlock()

	ss := &session{
		id: id, cwd: filepath.Clean(cwd), mode: modeAsk,
		always: map[string]bool{}, pending: map[*permission]struct{}{},
	}
	ss.tools = s.workspaceTools(ss)
	var notReady []string
	if s.opts.Ready != nil {
		for _, err := range s.opts.Ready(ctx) {
			notReady = append(notReady, "⚠ "+err.Error())
		}
	}
	ss.mcp, ss.notices = s.connectMCP(ctx, ss, servers)
	ss.notices = append(notReady, ss.notices...)

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ss.close()
		return nil, errors.New("the connection is closing")
	}
	if prev, ok := s.sessions[id]; ok {
		// Opened concurrently by another request: keep the first.
		s.mu.Unlock()
		_ = ss.close()
		return prev, nil
	}
	s.sessions[id] = ss
	s.mu.Unlock()
	s.log.Info("session opened", "session", id, "cwd", ss.cwd, "editor_mcp_servers", len(servers))
	return ss, nil
}

// NewSession implements acp.Agent: newSession in the trace of the
// request's _meta.
func (s *server) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	ctx, span := s.startRequest(ctx, "session/new", p.Meta, "")
	resp, err := s.newSession(ctx, p)
	span.end(resp.SessionId, "", err)
	return resp, err
}

// newSession opens a session. The kernel session is created by the first
// prompt, with this id, so an empty session leaves no record.
func (s *server) newSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	if err := s.requireAuth(); err != nil {
		return acp.NewSessionResponse{}, err
	}
	if _, err := s.manifest(ctx); err != nil {
		return acp.NewSessionResponse{}, wireError(err)
	}
	ss, err := s.openSession(ctx, agent.NewID(), p.Cwd, p.McpServers)
	if err != nil {
		return acp.NewSessionResponse{}, wireError(err)
	}
	return acp.NewSessionResponse{SessionId: acp.SessionId(ss.id), Modes: modeState(ss.currentMode())}, nil
}

// resume opens a stored session (or one this connection created) and
// returns it with its history.
func (s *server) resume(ctx context.Context, id acp.SessionId, cwd string, servers []acp.McpServer) (*session, []llm.Message, error) {
	if err := s.requireAuth(); err != nil {
		return nil, nil, err
	}
	st, msgs, err := s.opts.Kernel.Session(ctx, string(id))
	stored := err == nil
	switch {
	case errors.Is(err, agent.ErrSessionNotFound):
		// A session created here but not prompted yet has no record.
		if _, openErr := s.session(id); openErr != nil {
			return nil, nil, wireError(err)
		}
	case err != nil:
		return nil, nil, wireError(err)
	case st.Agent != s.opts.Agent:
		return nil, nil, wireError(fmt.Errorf("%w: session %s belongs to agent %q; run `agentd acp --agent %s` to open it", agent.ErrWrongAgent, id, st.Agent, st.Agent))
	}
	ss, err := s.openSession(ctx, string(id), cwd, servers)
	if err != nil {
		return nil, nil, wireError(err)
	}
	if stored {
		ss.markStored()
	}
	return ss, msgs, nil
}

// LoadSession implements acp.AgentLoader: it replays the stored history as
// session/update notifications, then sends again any permission request
// still waiting for an answer, since the editor that reloads has lost it.
func (s *server) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (_ acp.LoadSessionResponse, err error) {
	ctx, span := s.startRequest(ctx, "session/load", p.Meta, p.SessionId)
	defer func() { span.end("", "", err) }()
	ss, history, err := s.resume(ctx, p.SessionId, p.Cwd, p.McpServers)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	if err := s.replay(ctx, ss, history); err != nil {
		return acp.LoadSessionResponse{}, wireError(fmt.Errorf("replay session %s: %w", ss.id, err))
	}
	ss.resendPending()
	return acp.LoadSessionResponse{Modes: modeState(ss.currentMode())}, nil
}

// ResumeSession implements acp.Agent: session/load without the replay.
func (s *server) ResumeSession(ctx context.Context, p acp.ResumeSessionRequest) (_ acp.ResumeSessionResponse, err error) {
	ctx, span := s.startRequest(ctx, "session/resume", p.Meta, p.SessionId)
	defer func() { span.end("", "", err) }()
	ss, _, err := s.resume(ctx, p.SessionId, p.Cwd, p.McpServers)
	if err != nil {
		return acp.ResumeSessionResponse{}, err
	}
	ss.resendPending()
	return acp.ResumeSessionResponse{Modes: modeState(ss.currentMode())}, nil
}

// CloseSession implements acp.Agent: it cancels the turn in progress,
// waits for it, and releases the session's MCP servers.
func (s *server) CloseSession(ctx context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	s.mu.Lock()
	ss, ok := s.sessions[string(p.SessionId)]
	delete(s.sessions, string(p.SessionId))
	s.mu.Unlock()
	if !ok {
		return acp.CloseSessionResponse{}, wireError(fmt.Errorf("%w: %s", ErrUnknownSession, p.SessionId))
	}
	if r := ss.currentRun(); r != nil {
		r.cancel()
		select {
		case <-r.done:
		case <-ctx.Done():
			return acp.CloseSessionResponse{}, wireError(ctx.Err())
		}
	}
	if err := ss.close(); err != nil {
		s.log.Warn("closing session", "session", ss.id, "err", err)
	}
	return acp.CloseSessionResponse{}, nil
}

// Cancel implements acp.Agent. The SDK has already cancelled the prompt's
// context; this also stops a turn that outlived its prompt.
func (s *server) Cancel(ctx context.Context, p acp.CancelNotification) error {
	if ss, err := s.session(p.SessionId); err == nil {
		ss.cancelRun()
	}
	return nil
}

// SetSessionMode implements acp.Agent.
func (s *server) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	if err := s.requireAuth(); err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	ss, err := s.session(p.SessionId)
	if err != nil {
		return acp.SetSessionModeResponse{}, wireError(err)
	}
	if !validMode(string(p.ModeId)) {
		return acp.SetSessionModeResponse{}, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown mode %q (modes: ask, approve, reject)", p.ModeId)})
	}
	ss.mu.Lock()
	ss.mode = string(p.ModeId)
	ss.mu.Unlock()
	return acp.SetSessionModeResponse{}, nil
}

// ListSessions implements acp.Agent: the served agent's stored sessions,
// most recently updated first, whatever protocol started them. The store
// does not record an editor's directory, so sessions not open on this
// connection are reported in the agent's workspace and are kept by a cwd
// filter, which can only exclude sessions known to be elsewhere.
func (s *server) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	if err := s.requireAuth(); err != nil {
		return acp.ListSessionsResponse{}, err
	}
	offset := 0
	if p.Cursor != nil && *p.Cursor != "" {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return acp.ListSessionsResponse{}, acp.NewInvalidParams(map[string]any{"error": "cursor is not one this agent returned"})
		}
		offset = n
	}
	recs, err := s.opts.Sessions.ListSessions(ctx, store.SessionFilter{Agent: s.opts.Agent, Limit: listPageSize + 1, Offset: offset})
	if err != nil {
		return acp.ListSessionsResponse{}, wireError(fmt.Errorf("list sessions: %w", err))
	}
	resp := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	if len(recs) > listPageSize {
		recs = recs[:listPageSize]
		resp.NextCursor = acp.Ptr(strconv.Itoa(offset + listPageSize))
	}
	for _, r := range recs {
		cwd, known := s.opts.Workspace, false
		if ss, err := s.session(acp.SessionId(r.ID)); err == nil {
			cwd, known = ss.cwd, true
		}
		if p.Cwd != nil && known && filepath.Clean(*p.Cwd) != cwd {
			continue
		}
		info := acp.SessionInfo{SessionId: acp.SessionId(r.ID), Cwd: cwd, UpdatedAt: acp.Ptr(r.UpdatedAt.UTC().Format(time.RFC3339))}
		if r.Title != "" {
			info.Title = acp.Ptr(r.Title)
		}
		resp.Sessions = append(resp.Sessions, info)
	}
	return resp, nil
}
