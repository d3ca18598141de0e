// Package agent is agentd's core: the directory of agents, and the loop
// that runs one turn of a conversation (model → tool calls → results →
// repeat) over a persisted session, emitting a stream of typed events.
//
// Every protocol edge (HTTP, MCP, A2A, ACP) calls Kernel.Run and translates
// its events; this package imports no edge and no protocol or vendor SDK.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// Errors of a run.
var (
	ErrSessionNotFound = errors.New("session not found")
	// ErrSessionBusy is returned when a session already has a run in
	// progress: turns of one conversation are strictly sequential.
	ErrSessionBusy = errors.New("session is busy with another turn")
	// ErrNoModel is returned when an agent of a model-free kind (such as
	// the MCP proxy) is asked to run the model loop.
	ErrNoModel = errors.New("agent has no model")
	// ErrWrongAgent is returned when a session is resumed with an agent
	// other than the one that started it.
	ErrWrongAgent = errors.New("session belongs to another agent")

	// ErrForbidden is returned when the run's principal may not run the
	// agent. Edges map it to their "forbidden" answer.
	ErrForbidden = errors.New("forbidden")
	// ErrShuttingDown is returned when the daemon is stopping: by a new
	// run while it drains (Kernel.Drain), and by a run it ended because
	// the drain's time was up (Kernel.FailRuns). It is no fault of the
	// client's, and another replica can take the retry; edges report
	// such a run failed, not canceled.
	ErrShuttingDown = errors.New("replica shutting down, retry")
)

// Providers resolves a provider name from the config to a Provider.
type Providers interface {
	Provider(name string) (llm.Provider, error)
}

// Options are the kernel's dependencies.
type Options struct {
	Agents    *Agents
	Providers Providers
	Runner    *tool.Runner
	Sessions  store.SessionStore
	// RunWrites, if set, is the session store for the writes of a run
	// once it has begun (its replies and tool results, its end): the
	// daemon's waits out a store outage (package storeretry), so that a
	// run in flight survives one. A run's first writes, which store the
	// input it was given, go to Sessions: a request that arrives during
	// an outage is refused at once (store.ErrUnavailable), not kept
	// waiting. nil means Sessions.
	RunWrites store.SessionStore
	Logger    *slog.Logger
	// Workspace returns an agent's absolute workspace directory.
	Workspace func(m manifest.Manifest) string
	// Untrusted is the policy while untrusted data is in the context.
	Untrusted map[string]policy.Action
	// MaxIterations bounds model calls per run when the manifest does not;
	// default 25.
	MaxIterations int
	// MaxDepth bounds nested agent_send calls; default 3.
	MaxDepth int
	// Meter records agent runs and the GenAI client metrics of model
	// calls; nil records nothing.
	Meter metric.MeterProvider
	// Tracer starts an invoke_agent span per run and a chat span per
	// model call; nil starts none.
	Tracer trace.TracerProvider
	// CaptureContent puts prompts and completions on chat spans.
	CaptureContent bool
	// Turns makes a session's turns exclusive across the processes that
	// share the store (replicas); nil means this process is alone, and
	// the kernel's own table of busy sessions is enough.
	Turns TurnLocks
}

// TurnLocks claim sessions for one turn across processes. A claim must
// not outlive its holder for long: when the process dies, its claims are
// released (and the turns recorded as interrupted: InterruptedTurn).
type TurnLocks interface {
	// TryLockTurn claims the session; false if a turn of it runs
	// anywhere.
	TryLockTurn(ctx context.Context, sessionID string) (bool, error)
	// UnlockTurn releases this process's claim.
	UnlockTurn(ctx context.Context, sessionID string) error
}

// Kernel runs agents.
type Kernel struct {
	opts Options
	log  *slog.Logger
	obs  *observer // nil when neither metrics nor traces are on

	mu   sync.Mutex
	busy map[string]*turnClaim // by session id: the turn in progress

	draining atomic.Bool // see Drain

	runs *runLog
	// specs of the kernel's tools, made once (see agentList.Spec).
	specs struct{ list, send tool.Spec }
}

// New returns a kernel.
func New(opts Options) *Kernel {
	if opts.MaxIterations <= 0 {
		opts.MaxIterations = 25
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 3
	}
	if opts.Workspace == nil {
		opts.Workspace = func(m manifest.Manifest) string { return m.Workspace }
	}
	if opts.RunWrites == nil {
		opts.RunWrites = opts.Sessions
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k := &Kernel{opts: opts, log: log, busy: map[string]*turnClaim{}, obs: newObserver(opts), runs: newRunLog()}
	k.specs.list, k.specs.send = agentListSpec(), agentSendSpec()
	return k
}

// Agents returns the agent directory.
func (k *Kernel) Agents() *Agents { return k.opts.Agents }

// Provider resolves a provider name as runs do, so an edge can check a
// manifest before storing it.
func (k *Kernel) Provider(name string) (llm.Provider, error) { return k.opts.Providers.Provider(name) }

// Runner returns the tool runner, for edges that call tools directly.
func (k *Kernel) Runner() *tool.Runner { return k.opts.Runner }

// Rules returns the policy rules of agent m.
func (k *Kernel) Rules(m manifest.Manifest) *policy.Rules {
	return &policy.Rules{Capabilities: m.Tools, Servers: m.MCPServers, Untrusted: k.opts.Untrusted}
}

// RunRequest asks for one turn of an agent.
type RunRequest struct {
	Agent string
	// SessionID continues a conversation; "" starts a new one. A new
	// session gets NewSessionID unless it is set (edges such as A2A choose
	// their own ids).
	SessionID    string
	NewSessionID string
	Input        llm.Message // Role must be user
	Origin       string      // "http", "mcp", "a2a", "acp", "cli", "agent"
	Approver     tool.Approver
	// ExtraTools are visible to this run only (an editor's tools).
	ExtraTools []tool.Tool
	// Tainted starts the run with untrusted data in context: the edge's
	// own input is untrusted (an editor prompt with user_trust =
	// "untrusted", an A2A message from another agent).
	Tainted bool
	Depth   int
	// Principal is who asked for the run: the run is refused unless it may
	// run the agent, the session is theirs (or they are an admin), and the
	// session and every audit record carry its name. nil is the daemon
	// itself (a delegated run, the CLI's own process).
	Principal *principal.Principal
	// KeepPartial keeps the text that streamed before a stop in the
	// session, as the assistant's reply: set by an edge whose caller is a
	// person reading the stream (the HTTP API's streamed runs: the
	// dashboard's chat, agentd chat), who saw it, expects it after a
	// reload, and whose next message may refer to it. A program's call
	// (an MCP tool call, an A2A task) or an editor that keeps its own
	// transcript (ACP) leaves it unset: their stopped run reads as
	// unanswered, and a cancelled MCP call leaves no answer behind.
	KeepPartial bool
	// OnEvent receives the run's events, serialised, in order. It must not
	// block for long: it runs on the loop's goroutine.
	OnEvent func(Event)
	// OnScope, if set, receives the run's tool scope before the first model
	// call, so an edge can record "allow always" decisions.
	OnScope func(*tool.Scope)
	// FinalTask, if set, lets the edge store the task the turn answers
	// together with the model's last reply, in one transaction
	// (store.SessionTaskWriter): one commit fewer for a run that ends
	// within its request. The kernel calls it at most once, when the
	// reply that ends the turn (no tool calls) is about to be stored and
	// the session store can do both writes at once; res is the run's
	// result as it will be returned. ok false stores the reply alone. A
	// run whose combined write fails ends with an error event, and
	// neither the reply nor the task is stored; so a FinalTask that
	// returned ok followed by EventFinal means the task is stored. With
	// FinalTask set, a new session is stored by the run's first write
	// rather than before the model call (see Kernel.run): a turn that
	// ends at once is one commit.
	FinalTask func(res RunResult) (t store.Task, ok bool)
}

// RunResult is the outcome of a run.
type RunResult struct {
	SessionID  string
	Message    llm.Message // the final assistant message
	StopReason StopReason
	Usage      llm.Usage
	Iterations int
}

// Run runs one turn. A cancelled ctx ends the run with StopCancelled and a
// nil error; the history stays valid for the next turn. A run ended by
// FailRuns(ErrShuttingDown) returns that error instead, and so does a new
// run once the kernel drains.
func (k *Kernel) Run(ctx context.Context, req *RunRequest) (*RunResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	runID := k.runs.start(req, cancel)
	emit := serialise(func(e Event) {
		k.runs.observe(runID, e)
		if req.OnEvent != nil {
			req.OnEvent(e)
		}
	})
	var span trace.Span
	start := time.Now()
	if k.obs != nil {
		ctx, span = k.obs.startRun(ctx, req)
	}
	var res *RunResult
	var err error
	if k.Draining() && req.Depth == 0 {
		err = fmt.Errorf("run agent %q: %w", req.Agent, ErrShuttingDown)
	} else {
		res, err = k.run(ctx, req, emit)
	}
	if k.obs != nil {
		agent := req.Agent
		if errors.Is(err, ErrAgentNotFound) {
			agent = ""
		}
		k.obs.endRun(ctx, span, agent, start, res, err)
	}
	k.runs.finish(runID, res, err)
	if err != nil {
		k.logFailed(ctx, runID, req, res, err)
		emit(Event{Type: EventError, SessionID: sessionOf(res, req), Error: err.Error()})
		return res, err
	}
	msg := res.Message
	emit(Event{Type: EventFinal, SessionID: res.SessionID, Message: &msg, StopReason: res.StopReason, Usage: &res.Usage})
	return res, nil
}

// logFailed logs a run that ended in an error, with its ids, so an
// operator reading the log at the default level sees it: a refusal (no
// such agent or session, no right) at INFO, anything else at WARN.
func (k *Kernel) logFailed(ctx context.Context, runID string, req *RunRequest, res *RunResult, err error) {
	lvl := slog.LevelWarn
	msg := "run failed"
	if errors.Is(err, ErrAgentNotFound) || errors.Is(err, ErrSessionNotFound) || errors.Is(err, ErrForbidden) ||
		errors.Is(err, ErrWrongAgent) || errors.Is(err, ErrSessionBusy) {
		lvl, msg = slog.LevelInfo, "run refused"
	}
	k.log.Log(ctx, lvl, msg, "run", runID, "agent", req.Agent, "session", sessionOf(res, req),
		"origin", req.Origin, "principal", principal.NameOf(req.Principal), "err", err)
}

func sessionOf(res *RunResult, req *RunRequest) string {
	if res != nil {
		return res.SessionID
	}
	return req.SessionID
}

func (k *Kernel) run(ctx context.Context, req *RunRequest, emit func(Event)) (*RunResult, error) {
	entry, err := k.opts.Agents.Get(ctx, req.Agent)
	if err != nil {
		return nil, err
	}
	m := entry.Manifest
	if req.Principal != nil && !req.Principal.MayRunAgent(m.Name) {
		return nil, fmt.Errorf("%w: principal %q may not run agent %q", ErrForbidden, req.Principal.Name, m.Name)
	}
	if m.Kind != "" && m.Kind != manifest.KindLLM {
		return nil, fmt.Errorf("%w: agent %q is of kind %q", ErrNoModel, m.Name, m.Kind)
	}
	if req.Input.Role != llm.RoleUser {
		return nil, fmt.Errorf("run agent %q: input must be a user message", m.Name)
	}
	provider, err := k.opts.Providers.Provider(m.Provider)
	if err != nil {
		return nil, fmt.Errorf("agent %q: %w", m.Name, err)
	}

	input := k.prepareInput(req.Input, m)
	// A run whose edge stores its task with the last reply (FinalTask)
	// creates a new session with that write too: the whole turn is one
	// commit. Until then the session exists only here; a run that ends
	// otherwise (an error, a cancel) stores it with the user's input, as
	// if stored at the start. Only a crash loses it, and then the edge
	// had told its client nothing of the turn.
	_, canCombine := k.opts.RunWrites.(store.SessionTaskWriter)
	sess, history, pending, err := k.openSession(ctx, req, m, input, req.FinalTask != nil && canCombine)
	if err != nil {
		return nil, err
	}
	defer k.release(sess.ID)
	if pending != nil {
		defer func() {
			if pending.sess == nil {
				return
			}
			if err := k.opts.RunWrites.CreateSession(context.WithoutCancel(ctx), *pending.sess, pending.input); err != nil {
				k.log.Error("storing the session of a run that ended early failed", "session", sess.ID, "err", err)
			}
		}()
	}
	emit(Event{Type: EventSession, SessionID: sess.ID})
	if k.obs != nil {
		defer k.obs.activeRun(ctx, m.Name)()
	}

	res := &RunResult{SessionID: sess.ID}
	scope := k.opts.Runner.Scope(tool.ScopeParams{
		Agent: m.Name, SessionID: sess.ID, Principal: req.Principal, Workspace: k.opts.Workspace(m), Depth: req.Depth,
		Rules: k.Rules(m), Approver: req.Approver, Extra: req.ExtraTools, Tainted: req.Tainted || tainted(history),
		OnQueued: func(p tool.PendingApproval) {
			k.log.Info("approval waiting", "approval", p.ID, "agent", p.Agent, "session", p.SessionID,
				"tool", p.Tool, "principal", p.Principal, "deadline", p.Deadline)
			emit(Event{Type: EventApproval, SessionID: sess.ID, ToolCall: toolCallOf(p), Approval: &p})
		},
	})
	if req.OnScope != nil {
		req.OnScope(scope)
	}

	maxIter := m.MaxIterations
	if maxIter <= 0 {
		maxIter = k.opts.MaxIterations
	}
	for res.Iterations < maxIter {
		res.Iterations++
		lreq := &llm.Request{
			Model: m.Model, System: m.SystemPrompt, Messages: history, Tools: scope.Defs(),
			MaxTokens: m.MaxTokens, Temperature: m.Temperature, Reasoning: llm.Effort(m.Reasoning),
		}
		mctx, mc := ctx, (*modelCall)(nil)
		if k.obs != nil {
			mctx, mc = k.obs.startModel(ctx, m.Provider, k.genAIProvider(m.Provider), lreq)
		}
		// What streamed, for a stop mid-reply of a run whose reader keeps it.
		var partial, partialThinking strings.Builder
		resp, err := provider.Generate(mctx, lreq, func(d llm.Delta) {
			if mc != nil {
				mc.delta()
			}
			typ := EventText
			switch {
			case d.Kind == llm.DeltaThinking:
				typ = EventThinking
				if req.KeepPartial {
					partialThinking.WriteString(d.Text)
				}
			case req.KeepPartial:
				partial.WriteString(d.Text)
			}
			emit(Event{Type: typ, SessionID: sess.ID, Text: d.Text})
		})
		if mc != nil {
			mc.end(mctx, resp, err)
		}
		if ctx.Err() != nil {
			if partial.Len() > 0 {
				// The reader saw this much stream before stopping it: it
				// stays in the session (a reload shows it, the next turn's
				// model reads it), as a reply without tool calls, so the
				// history stays valid.
				msg := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: partial.String()}}, Thinking: partialThinking.String()}
				if err := k.persistReply(context.WithoutCancel(ctx), sess.ID, msg, pending); err != nil {
					k.log.Warn("storing the partial reply of a stopped run failed", "session", sess.ID, "err", err)
				}
			}
			return stopped(ctx, res)
		}
		if err != nil {
			return res, fmt.Errorf("model %s/%s: %w", m.Provider, m.Model, err)
		}
		res.Usage.InputTokens += resp.Usage.InputTokens
		res.Usage.OutputTokens += resp.Usage.OutputTokens
		reply := resp.Message
		reply.Role = llm.RoleAssistant
		res.Message = reply
		history = append(history, reply)
		if len(reply.ToolCalls) == 0 {
			switch resp.StopReason {
			case llm.StopMaxTokens:
				res.StopReason = StopMaxTokens
			case llm.StopRefusal:
				res.StopReason = StopRefusal
			default:
				res.StopReason = StopEndTurn
			}
			if err := k.persistLast(ctx, req, res, pending); err != nil {
				res.StopReason = ""
				return res, err
			}
			return res, nil
		}
		if err := k.persistReply(ctx, sess.ID, reply, pending); err != nil {
			return res, err
		}
		results := k.callTools(ctx, scope, sess.ID, reply.ToolCalls, m.Images, emit)
		history = append(history, results)
		// Results are stored even when cancelled, so every tool call in
		// the history has its answer and the next turn is valid.
		if err := k.persist(context.WithoutCancel(ctx), sess.ID, results); err != nil {
			return res, err
		}
		if ctx.Err() != nil {
			return stopped(ctx, res)
		}
		if m.TokenBudget > 0 && res.Usage.InputTokens+res.Usage.OutputTokens >= m.TokenBudget {
			res.StopReason = StopTokenBudget
			return res, nil
		}
	}
	res.StopReason = StopMaxIterations
	return res, nil
}

// stopped ends a run whose ctx ended: cancelled by its client
// (StopCancelled, no error), or failed by a stopping daemon
// (ErrShuttingDown, see FailRuns).
func stopped(ctx context.Context, res *RunResult) (*RunResult, error) {
	if cause := context.Cause(ctx); errors.Is(cause, ErrShuttingDown) {
		return res, cause
	}
	res.StopReason = StopCancelled
	return res, nil
}

// genAIProvider names the vendor behind a configured provider for
// gen_ai.provider.name, or the configured name when it is not known.
func (k *Kernel) genAIProvider(name string) string {
	if g, ok := k.opts.Providers.(GenAIProviders); ok {
		if s := g.GenAIProvider(name); s != "" {
			return s
		}
	}
	return name
}

// callTools runs the calls of one model reply, in parallel, and returns the
// tool message answering all of them in the order they were asked. For a
// text-only model (images false) results keep only their text, which
// names each image; the pictures are neither sent nor stored.
func (k *Kernel) callTools(ctx context.Context, scope *tool.Scope, sessionID string, calls []llm.ToolCall, images bool, emit func(Event)) llm.Message {
	results := make([]llm.ToolResult, len(calls))
	untrusted := make([]bool, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		emit(Event{Type: EventToolStarted, SessionID: sessionID, ToolCall: &c})
		wg.Go(func() {
			out := scope.Call(ctx, c, func(msg string, progress, total float64) {
				emit(Event{Type: EventToolProgress, SessionID: sessionID, ToolCall: &c,
					Progress: &Progress{Message: msg, Progress: progress, Total: total}})
			})
			if !images {
				out.Result.Images = nil
			}
			results[i], untrusted[i] = out.Result, out.Untrusted
			emit(Event{Type: EventToolFinished, SessionID: sessionID, ToolCall: &c, ToolResult: &out.Result, Untrusted: out.Untrusted})
		})
	}
	wg.Wait()
	return llm.Message{Role: llm.RoleTool, ToolResults: results}
}

// prepareInput drops images for models that cannot take them, saying so in
// the text, instead of failing the vendor call.
func (k *Kernel) prepareInput(in llm.Message, m manifest.Manifest) llm.Message {
	if m.Images {
		return in
	}
	out := llm.Message{Role: in.Role}
	dropped := 0
	for _, p := range in.Parts {
		if p.Image != nil {
			dropped++
			continue
		}
		out.Parts = append(out.Parts, p)
	}
	if dropped > 0 {
		out.Parts = append(out.Parts, llm.Part{Text: fmt.Sprintf("\n[%d image(s) omitted: agent %q's model does not accept images]", dropped, m.Name)})
	}
	return out
}

// openSession claims the run's session (ErrSessionBusy if another turn
// holds it), stores the user's input in it before any model call, so that
// an accepted message survives a crash (unless deferNew, below), and
// returns the session with its history, input included. A new session is
// created together with its input in one transaction. On error the
// session is not claimed.
//
// With deferNew, a new session is not stored: it comes back pending, for
// the run's first write to store (see run).
func (k *Kernel) openSession(ctx context.Context, req *RunRequest, m manifest.Manifest, input llm.Message, deferNew bool) (store.Session, []llm.Message, *pendingSession, error) {
	id := req.SessionID
	if id == "" {
		id = req.NewSessionID
		if id == "" {
			id = NewID()
		}
	}
	// Claimed before the history is read, so that no other turn of the
	// session can append to it between the read and this turn's writes.
	// From here the turn is accepted: a stop that comes now (a client's
	// cancel right after the start) ends the run, but does not cut off the
	// claim or the storing of the user's input, which the session keeps
	// as with a stop any later.
	if err := k.acquire(ctx, id); err != nil {
		return store.Session{ID: id}, nil, nil, err
	}
	ctx = context.WithoutCancel(ctx)
	if deferNew && req.SessionID == "" {
		s := k.newSession(req, m, id)
		first, err := storedMessage(input)
		if err != nil {
			k.release(id)
			return s, nil, nil, err
		}
		return s, []llm.Message{input}, &pendingSession{sess: &s, input: first}, nil
	}
	s, history, err := k.loadOrCreate(ctx, req, m, id, input)
	if err != nil {
		k.release(id)
		return s, nil, nil, err
	}
	return s, history, nil, nil
}

// newSession is the record of a new session of req's.
func (k *Kernel) newSession(req *RunRequest, m manifest.Manifest, id string) store.Session {
	now := time.Now().UTC()
	return store.Session{ID: id, Agent: m.Name, Title: title(req.Input), Origin: req.Origin, Principal: principal.NameOf(req.Principal), CreatedAt: now, UpdatedAt: now}
}

// loadOrCreate does openSession's work once the session is claimed.
func (k *Kernel) loadOrCreate(ctx context.Context, req *RunRequest, m manifest.Manifest, id string, input llm.Message) (store.Session, []llm.Message, error) {
	if req.SessionID == "" {
		s := k.newSession(req, m, id)
		first, err := storedMessage(input)
		if err != nil {
			return s, nil, err
		}
		if err := k.opts.Sessions.CreateSession(ctx, s, first); err != nil {
			return s, nil, fmt.Errorf("create session: %w", err)
		}
		return s, []llm.Message{input}, nil
	}
	s, history, err := k.Session(ctx, id)
	if err != nil {
		return s, nil, err
	}
	if req.Principal != nil && !req.Principal.MaySee(s.Principal) {
		// Someone else's session does not exist, as far as they know.
		return store.Session{ID: id}, nil, fmt.Errorf("%w: %s", ErrSessionNotFound, id)
	}
	if s.Agent != m.Name {
		return s, nil, fmt.Errorf("%w: session %s belongs to %q, not %q", ErrWrongAgent, s.ID, s.Agent, m.Name)
	}
	if fix, ok := unanswered(history); ok {
		// The process died while tools ran: answer the dangling calls so
		// the history is valid again (vendors reject a tool call without
		// its result) and say truthfully what happened.
		if err := k.append(ctx, k.opts.Sessions, s.ID, fix); err != nil {
			return s, nil, err
		}
		history = append(history, fix)
	}
	if err := k.append(ctx, k.opts.Sessions, s.ID, input); err != nil {
		return s, nil, err
	}
	return s, append(history, input), nil
}

// Session returns a stored session and its messages.
func (k *Kernel) Session(ctx context.Context, id string) (store.Session, []llm.Message, error) {
	s, err := k.opts.Sessions.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return s, nil, fmt.Errorf("%w: %s", ErrSessionNotFound, id)
	}
	if err != nil {
		return s, nil, fmt.Errorf("load session %s: %w", id, err)
	}
	stored, err := k.opts.Sessions.Messages(ctx, id)
	if err != nil {
		return s, nil, fmt.Errorf("load messages of session %s: %w", id, err)
	}
	msgs := make([]llm.Message, 0, len(stored))
	for _, sm := range stored {
		var msg llm.Message
		if err := json.Unmarshal(sm.Content, &msg); err != nil {
			return s, nil, fmt.Errorf("decode message %d of session %s: %w", sm.Seq, id, err)
		}
		msgs = append(msgs, msg)
	}
	return s, msgs, nil
}

// persist appends a message of a run under way (RunWrites).
func (k *Kernel) persist(ctx context.Context, sessionID string, msg llm.Message) error {
	return k.append(ctx, k.opts.RunWrites, sessionID, msg)
}

func (k *Kernel) append(ctx context.Context, st store.SessionStore, sessionID string, msg llm.Message) error {
	sm, err := storedMessage(msg)
	if err != nil {
		return err
	}
	if _, err := st.AppendMessages(ctx, sessionID, []store.Message{sm}); err != nil {
		return fmt.Errorf("save message to session %s: %w", sessionID, err)
	}
	return nil
}

// pendingSession is a new session not stored yet (see run): the session
// and its user message, encoded when it arrived. sess is nil once stored.
type pendingSession struct {
	sess  *store.Session
	input store.Message
}

// persistReply stores a reply that does not end the turn, creating the
// pending session with it.
func (k *Kernel) persistReply(ctx context.Context, sessionID string, msg llm.Message, p *pendingSession) error {
	if p == nil || p.sess == nil {
		return k.persist(ctx, sessionID, msg)
	}
	sm, err := storedMessage(msg)
	if err != nil {
		return err
	}
	if err := k.opts.RunWrites.CreateSession(ctx, *p.sess, p.input, sm); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	p.sess = nil
	return nil
}

// persistLast stores the reply that ends the turn, with the edge's task
// in the same transaction when the edge asks (req.FinalTask) and the
// store can, and the pending session, if any, with both.
func (k *Kernel) persistLast(ctx context.Context, req *RunRequest, res *RunResult, p *pendingSession) error {
	w, can := k.opts.RunWrites.(store.SessionTaskWriter)
	var t store.Task
	withTask := false
	if req.FinalTask != nil && can {
		t, withTask = req.FinalTask(*res)
	}
	if !withTask {
		return k.persistReply(ctx, res.SessionID, res.Message, p)
	}
	sm, err := storedMessage(res.Message)
	if err != nil {
		return err
	}
	if p != nil && p.sess != nil {
		if err := w.CreateSessionWithTask(ctx, *p.sess, []store.Message{p.input, sm}, t); err != nil {
			return fmt.Errorf("create session %s with task %s: %w", res.SessionID, t.ID, err)
		}
		p.sess = nil
		return nil
	}
	if _, err := w.AppendMessagesCreateTask(ctx, res.SessionID, []store.Message{sm}, t); err != nil {
		return fmt.Errorf("save message to session %s with task %s: %w", res.SessionID, t.ID, err)
	}
	return nil
}

// storedMessage encodes msg for the store. Untrusted flags of tool results
// travel inside the message.
func storedMessage(msg llm.Message) (store.Message, error) {
	data, err := json.Marshal(msg)
	if err != nil {
		return store.Message{}, fmt.Errorf("encode message: %w", err)
	}
	return store.Message{Role: string(msg.Role), Content: data, CreatedAt: time.Now().UTC()}, nil
}

// turnClaim is a session's claim by the turn of it that runs in this
// process.
type turnClaim struct {
	// stopped is the done channel of the turn's context: once it is
	// closed, the turn is being stopped (its client went away or
	// cancelled) and will end without another model call.
	stopped <-chan struct{}
	// released is closed when the claim is given back.
	released chan struct{}
}

// stoppedTurnWait bounds how long a new turn waits for the stopped turn
// of its session to end (see acquire). A stopped turn ends within a tool
// call's end and a store write; one that takes longer is reported busy.
const stoppedTurnWait = 10 * time.Second

// acquire claims session id for a turn whose context is ctx: in this
// process first (cheap, and enough when alone), then across replicas.
//
// A session held by a turn that is running fails at once (ErrSessionBusy).
// A session held by a turn that is being stopped is waited for: a person
// who stops an answer (Ctrl-C in the terminal, Stop in the dashboard) and
// sends the next message at once must not be told the session is busy
// with the turn they just stopped, which only has to record its stop.
func (k *Kernel) acquire(ctx context.Context, id string) error {
	var timeout <-chan time.Time
	for {
		k.mu.Lock()
		held := k.busy[id]
		if held == nil {
			k.busy[id] = &turnClaim{stopped: ctx.Done(), released: make(chan struct{})}
			k.mu.Unlock()
			break
		}
		k.mu.Unlock()
		select {
		case <-held.stopped:
		default:
			return fmt.Errorf("%w: %s", ErrSessionBusy, id)
		}
		if timeout == nil {
			k.log.Debug("a turn waits for the stopped turn of its session to end", "session", id)
			t := time.NewTimer(stoppedTurnWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-held.released:
		case <-timeout:
			return fmt.Errorf("%w: %s (its stopped turn has not ended after %v)", ErrSessionBusy, id, stoppedTurnWait)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if k.opts.Turns == nil {
		return nil
	}
	ok, err := k.opts.Turns.TryLockTurn(context.WithoutCancel(ctx), id)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %s (a turn of it runs on another replica)", ErrSessionBusy, id)
	}
	if err != nil {
		k.unclaim(id)
		return err
	}
	return nil
}

func (k *Kernel) release(id string) {
	if k.opts.Turns != nil {
		// Released even when the run was cancelled: a claim left behind
		// would hold the session until this replica stops.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := k.opts.Turns.UnlockTurn(ctx, id); err != nil {
			k.log.Error("releasing a session's turn failed; it stays busy until this replica stops", "session", id, "err", err)
		}
		cancel()
	}
	k.unclaim(id)
}

// unclaim gives back this process's claim of session id.
func (k *Kernel) unclaim(id string) {
	k.mu.Lock()
	held := k.busy[id]
	delete(k.busy, id)
	k.mu.Unlock()
	if held != nil {
		close(held.released)
	}
}

// InterruptedTurn records in session id that its turn was interrupted
// and why (reason), when the process running it died: the dangling tool
// calls get error results, and an assistant message says what happened,
// so that the history is valid for the next turn and truthful to whoever
// reads it. A session whose turn had finished, or that was never
// written, is left as it is. The caller holds the session's turn.
func (k *Kernel) InterruptedTurn(ctx context.Context, id, reason string) error {
	_, history, err := k.Session(ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(history) == 0 {
		return nil
	}
	last := history[len(history)-1]
	if last.Role == llm.RoleAssistant && len(last.ToolCalls) == 0 {
		return nil // the turn had ended; only its release was lost
	}
	note := "The turn failed: " + reason + ". It did not finish; send the message again to retry."
	var msgs []llm.Message
	if last.Role == llm.RoleAssistant {
		fix := llm.Message{Role: llm.RoleTool}
		for _, c := range last.ToolCalls {
			fix.ToolResults = append(fix.ToolResults, llm.ToolResult{
				CallID: c.ID, Name: c.Name, IsError: true,
				Content: "interrupted: " + reason + "; this call's effects, if any, are unknown",
			})
		}
		msgs = append(msgs, fix)
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: note}}})
	stored := make([]store.Message, 0, len(msgs))
	for _, m := range msgs {
		sm, err := storedMessage(m)
		if err != nil {
			return err
		}
		stored = append(stored, sm)
	}
	if _, err := k.opts.Sessions.AppendMessages(ctx, id, stored); err != nil {
		return fmt.Errorf("record the interrupted turn of session %s: %w", id, err)
	}
	k.log.Warn("recorded an interrupted turn", "session", id, "reason", reason)
	return nil
}

// unanswered returns the tool message that answers the tool calls of a
// history's last message, when that message is an assistant's tool calls
// with no results after them: what a crash during tool execution leaves.
func unanswered(history []llm.Message) (llm.Message, bool) {
	if len(history) == 0 {
		return llm.Message{}, false
	}
	last := history[len(history)-1]
	if last.Role != llm.RoleAssistant || len(last.ToolCalls) == 0 {
		return llm.Message{}, false
	}
	fix := llm.Message{Role: llm.RoleTool}
	for _, c := range last.ToolCalls {
		fix.ToolResults = append(fix.ToolResults, llm.ToolResult{
			CallID: c.ID, Name: c.Name, IsError: true,
			Content: "interrupted: agentd stopped before this call finished; its effects, if any, are unknown",
		})
	}
	return fix, true
}

// tainted reports whether a stored history already holds untrusted data,
// so a resumed conversation keeps its taint.
func tainted(history []llm.Message) bool {
	for _, m := range history {
		for _, r := range m.ToolResults {
			if tool.IsUntrustedBlock(r.Content) {
				return true
			}
		}
	}
	return false
}

func title(m llm.Message) string {
	t := []rune(m.Text())
	if len(t) > 80 {
		t = append(t[:77], '.', '.', '.')
	}
	return string(t)
}

// serialise makes f safe to call from the parallel tool goroutines and
// keeps event order per emitter.
func serialise(f func(Event)) func(Event) {
	if f == nil {
		return func(Event) {}
	}
	var mu sync.Mutex
	return func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		f(e)
	}
}

// toolCallOf is the call an approval request is about, for edges that
// show approvals next to their tool call.
func toolCallOf(p tool.PendingApproval) *llm.ToolCall {
	return &llm.ToolCall{ID: p.CallID, Name: p.Tool, Arguments: p.Args}
}
