package acpagent

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/tool"
)

// run is one turn: one session/prompt, one kernel run.
type run struct {
	sessionID acp.SessionId
	cancel    context.CancelFunc
	done      chan struct{} // closed when the kernel run has returned

	mu    sync.Mutex
	muted bool                    // the prompt was answered: later updates are dropped
	scope *tool.Scope             // the run's tool scope, for "allow always"
	ids   map[string][]string     // call digest → announced call ids not yet claimed by a tool
	keep  map[acp.ToolCallId]bool // calls whose content (a diff, a terminal) outlives their end
}

func newRun(id acp.SessionId, cancel context.CancelFunc) *run {
	return &run{sessionID: id, cancel: cancel, done: make(chan struct{}), ids: map[string][]string{}, keep: map[acp.ToolCallId]bool{}}
}

// send delivers one session/update unless the prompt has been answered:
// ACP allows no update of a turn after its response.
func (r *run) send(ctx context.Context, p peer, u acp.SessionUpdate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.muted {
		return
	}
	// A failed write means the editor is gone; the run ends with the
	// connection's context, so there is nothing else to do here.
	_ = p.SessionUpdate(ctx, acp.SessionNotification{SessionId: r.sessionID, Update: u})
}

// mute stops updates; it returns after any update being written.
func (r *run) mute() {
	r.mu.Lock()
	r.muted = true
	r.mu.Unlock()
}

func (r *run) setScope(sc *tool.Scope) {
	r.mu.Lock()
	r.scope = sc
	r.mu.Unlock()
}

func (r *run) allowAlways(toolName string) {
	r.mu.Lock()
	sc := r.scope
	r.mu.Unlock()
	if sc != nil {
		sc.AllowAlways(toolName)
	}
}

// announce records the id of a call the kernel is about to make, so the
// editor-backed tool that serves it (which sees only name and arguments)
// can attach a diff or a terminal to the right tool call.
func (r *run) announce(c llm.ToolCall) {
	d := tool.Digest(c.Name, normArgs(c.Arguments))
	r.mu.Lock()
	r.ids[d] = append(r.ids[d], string(callID(c)))
	r.mu.Unlock()
}

// claim returns the id of an announced call with this name and these
// arguments. Identical parallel calls are interchangeable.
func (r *run) claim(name string, args []byte) (acp.ToolCallId, bool) {
	d := tool.Digest(name, normArgs(args))
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := r.ids[d]
	if len(ids) == 0 {
		return "", false
	}
	r.ids[d] = ids[1:]
	return acp.ToolCallId(ids[0]), true
}

// markKeep says the call's content shows what it did (a diff, a
// terminal), so its end should not replace it with the result text.
func (r *run) markKeep(id acp.ToolCallId) {
	r.mu.Lock()
	r.keep[id] = true
	r.mu.Unlock()
}

func (r *run) keeps(id acp.ToolCallId) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keep[id]
}

type runOutcome struct {
	res *agent.RunResult
	err error
}

// Prompt implements acp.Agent: prompt in the trace of the request's
// _meta.
func (s *server) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	ctx, span := s.startRequest(ctx, "session/prompt", p.Meta, p.SessionId)
	resp, err := s.prompt(ctx, p)
	span.end("", resp.StopReason, err)
	return resp, err
}

// prompt runs the turn on its own goroutine: the SDK already serves each
// request off its read loop, and prompt itself only waits, so
// session/cancel (which cancels ctx) answers "cancelled" at once even if
// the run takes longer to wind down.
func (s *server) prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	if err := s.requireAuth(); err != nil {
		return acp.PromptResponse{}, err
	}
	ss, err := s.session(p.SessionId)
	if err != nil {
		return acp.PromptResponse{}, wireError(err)
	}
	input, err := userMessage(p.Prompt, s.opts.UntrustedUser)
	if err != nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := newRun(p.SessionId, cancel)
	if err := ss.begin(ctx, r); err != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	// Updates still go out after a cancel, until the prompt is answered.
	sendCtx := context.WithoutCancel(ctx)
	for _, n := range ss.takeNotices() {
		r.send(sendCtx, s.peer, acp.UpdateAgentMessageText(n+"\n\n"))
	}

	req := &agent.RunRequest{
		Agent: s.opts.Agent, Input: input, Origin: "acp",
		Approver:   s.approver(ss, r),
		ExtraTools: s.extraTools(ss),
		OnEvent:    func(e agent.Event) { s.translate(sendCtx, ss, r, e) },
		OnScope: func(sc *tool.Scope) {
			r.setScope(sc)
			for _, t := range ss.alwaysAllowed() {
				sc.AllowAlways(t)
			}
		},
	}
	startTainted(req, s.opts.UntrustedUser)
	if ss.isStored() {
		req.SessionID = ss.id
	} else {
		req.NewSessionID = ss.id
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ss.finish(r)
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	s.runs.Add(1)
	s.mu.Unlock()
	results := make(chan runOutcome, 1)
	go func() {
		defer s.runs.Done()
		defer ss.finish(r)
		res, err := s.opts.Kernel.Run(runCtx, req)
		results <- runOutcome{res, err}
	}()

	var out runOutcome
	select {
	case out = <-results:
	case <-runCtx.Done():
		t := time.NewTimer(s.opts.CancelGrace)
		select {
		case out = <-results:
		case <-t.C:
			s.log.Debug("answering cancelled before the run wound down", "session", ss.id)
		}
		t.Stop()
	}
	r.mute()
	if runCtx.Err() != nil {
		// Whatever the run ended with, the user asked it to stop.
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	if out.err != nil {
		s.log.Warn("turn failed", "session", ss.id, "err", out.err)
		return acp.PromptResponse{}, wireError(out.err)
	}
	s.log.Debug("turn ended", "session", ss.id, "stop_reason", out.res.StopReason, "iterations", out.res.Iterations)
	return acp.PromptResponse{StopReason: stopReason(out.res.StopReason)}, nil
}

// stopReason maps the kernel's reasons to ACP's. Both run bounds (model
// calls and tokens per turn) are ACP's max_turn_requests: the turn was cut
// by the agent's own limit, not by the model.
func stopReason(r agent.StopReason) acp.StopReason {
	switch r {
	case agent.StopMaxTokens:
		return acp.StopReasonMaxTokens
	case agent.StopMaxIterations, agent.StopTokenBudget:
		return acp.StopReasonMaxTurnRequests
	case agent.StopRefusal:
		return acp.StopReasonRefusal
	case agent.StopCancelled:
		return acp.StopReasonCancelled
	}
	return acp.StopReasonEndTurn
}

// translate turns one kernel event into session/update notifications.
func (s *server) translate(ctx context.Context, ss *session, r *run, e agent.Event) {
	switch e.Type {
	case agent.EventSession:
		ss.markStored()
	case agent.EventText:
		if e.Text != "" {
			r.send(ctx, s.peer, acp.UpdateAgentMessageText(e.Text))
		}
	case agent.EventThinking:
		if e.Text != "" {
			r.send(ctx, s.peer, acp.UpdateAgentThoughtText(e.Text))
		}
	case agent.EventToolStarted:
		if e.ToolCall != nil {
			r.announce(*e.ToolCall)
			r.send(ctx, s.peer, startUpdate(ss.cwd, *e.ToolCall))
		}
	case agent.EventToolProgress:
		if e.ToolCall != nil && e.Progress != nil {
			r.send(ctx, s.peer, progressUpdate(*e.ToolCall, e.Progress.Message, e.Progress.Progress, e.Progress.Total))
		}
	case agent.EventToolFinished:
		if e.ToolCall != nil && e.ToolResult != nil {
			r.send(ctx, s.peer, finishUpdate(*e.ToolCall, *e.ToolResult, r.keeps(callID(*e.ToolCall))))
		}
	}
}

// userMessage converts the editor's prompt to the kernel's user message.
// Text is the user's instruction and passes as is. Embedded context (files
// the editor attached) is data: under user_trust = "untrusted" it is
// wrapped like an upstream tool result so the model does not take its
// content for instructions.
func userMessage(blocks []acp.ContentBlock, untrusted bool) (llm.Message, error) {
	msg := llm.Message{Role: llm.RoleUser}
	text := func(t string) { msg.Parts = append(msg.Parts, llm.Part{Text: t}) }
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			text(b.Text.Text)
		case b.Image != nil:
			data, err := base64.StdEncoding.DecodeString(b.Image.Data)
			if err != nil {
				return msg, fmt.Errorf("prompt[%d]: image data is not base64: %w", i, err)
			}
			// The kernel replaces images with a note for models that
			// cannot see them.
			msg.Parts = append(msg.Parts, llm.Part{Image: &llm.Image{MIMEType: b.Image.MimeType, Data: data}})
		case b.Audio != nil:
			text("\n[audio omitted: agentd cannot pass audio to models]\n")
		case b.ResourceLink != nil:
			text(fmt.Sprintf("\n[referenced resource %q: %s]\n", b.ResourceLink.Name, b.ResourceLink.Uri))
		case b.Resource != nil:
			part, err := embedded(b.Resource.Resource, untrusted)
			if err != nil {
				return msg, fmt.Errorf("prompt[%d]: %w", i, err)
			}
			msg.Parts = append(msg.Parts, part)
		default:
			return msg, fmt.Errorf("prompt[%d]: unsupported content block", i)
		}
	}
	if len(msg.Parts) == 0 {
		return msg, errors.New("prompt is empty")
	}
	return msg, nil
}

func embedded(res acp.EmbeddedResourceResource, untrusted bool) (llm.Part, error) {
	switch {
	case res.TextResourceContents != nil:
		t := res.TextResourceContents
		body := t.Text
		if untrusted {
			body = tool.WrapUntrusted("editor:"+t.Uri, body)
		}
		return llm.Part{Text: fmt.Sprintf("\n<context uri=%q>\n%s\n</context>\n", t.Uri, body)}, nil
	case res.BlobResourceContents != nil:
		b := res.BlobResourceContents
		mime := ""
		if b.MimeType != nil {
			mime = *b.MimeType
		}
		if strings.HasPrefix(mime, "image/") {
			data, err := base64.StdEncoding.DecodeString(b.Blob)
			if err != nil {
				return llm.Part{}, fmt.Errorf("resource %s: blob is not base64: %w", b.Uri, err)
			}
			return llm.Part{Image: &llm.Image{MIMEType: mime, Data: data}}, nil
		}
		return llm.Part{Text: fmt.Sprintf("\n[binary resource %s (%s) omitted]\n", b.Uri, orUnknown(mime))}, nil
	}
	return llm.Part{}, errors.New("embedded resource has neither text nor blob")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
