package a2aedge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/internal/principal"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/tool"
)

// executor is the a2asrv.AgentExecutor over the kernel. A task is one run
// of an agent; the run lives in the server's run table, not in the
// execution, because an execution ends when the task turns input-required
// while the run waits, blocked in its approver, for the next message.
type executor struct{ s *Server }

var _ a2asrv.AgentExecutor = (*executor)(nil)

// Execute implements a2asrv.AgentExecutor.
func (x *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		r, failure := x.s.attach(ctx, ec, false)
		if ec.StoredTask == nil {
			// The first event is the task itself, already working: one
			// event and one store write fewer than submitted → working.
			t := a2a.NewSubmittedTask(ec, ec.Message)
			t.Metadata = startMetadata(ec.Metadata)
			now := time.Now().UTC()
			t.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}
			if failure != "" {
				t.Status.State = a2a.TaskStateFailed
				t.Status.Message = agentText(ec, failure)
			}
			if !yield(t, nil) || failure != "" {
				return
			}
		} else {
			ev := a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil)
			if failure != "" {
				ev = a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentText(ec, failure))
			}
			if !yield(ev, nil) || failure != "" {
				return
			}
		}
		r.relay(ctx, ec, yield)
	}
}

// Cancel implements a2asrv.AgentExecutor: it stops the run (a ctx cancel)
// and reports the task canceled.
func (x *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if r := x.s.run(ec.TaskID); r != nil {
			r.byClient.Store(true)
			r.cancel()
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, agentText(ec, cancelledByClientText)), nil)
	}
}

// cancelViaSDK cancels a task through a2a-go. When a cancel races with an
// execution that just ended in input-required, a2a-go hands the cancel to
// the ending execution and fails ("not cancelable", "queue is closed");
// the task is still cancelable, so try again once a2a-go has let go of it.
//
// The retries are bounded by time, not by count, because how long a2a-go
// takes to let go depends on the machine's load. A cancel that loses the
// race against the task's own end gets the protocol's "not cancelable"
// error rather than an internal one.
func (h dispatcher) cancelViaSDK(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if req == nil {
		return h.RequestHandler.CancelTask(ctx, req)
	}
	deadline := time.Now().Add(5 * time.Second)
	for attempt := 1; ; attempt++ {
		t, err := h.RequestHandler.CancelTask(ctx, req)
		if err == nil {
			return t, nil
		}
		st, gerr := h.s.opts.Tasks.Get(ctx, req.ID)
		if gerr != nil {
			return t, err
		}
		if st.Task.Status.State.Terminal() {
			if errors.Is(err, a2a.ErrTaskNotCancelable) {
				return t, err
			}
			if st.Task.Status.State == a2a.TaskStateCanceled {
				// This cancel reached the run before a2a-go let go.
				return st.Task, nil
			}
			return nil, fmt.Errorf("%w: task %s is already %s", a2a.ErrTaskNotCancelable, req.ID, st.Task.Status.State)
		}
		if time.Now().After(deadline) {
			return t, err
		}
		select {
		case <-time.After(time.Duration(min(attempt, 10)) * 10 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// cancelledByClient is ctx with a cancel for the task's client: the
// calls it ends are audited as cancelled by the A2A client.
func cancelledByClient(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, func() { cancel(&tool.CancelledError{By: "the A2A client (CancelTask)"}) }
}

// attach starts the run for a new task, or hands a follow-up message on
// an input-required task to the run waiting for it. A non-empty failure
// explains why the task fails at once. fast marks the blocking fast
// path's run, which may store its finished task with the model's reply.
func (s *Server) attach(ctx context.Context, ec *a2asrv.ExecutorContext, fast bool) (*run, string) {
	if ec.StoredTask != nil {
		r := s.run(ec.TaskID)
		if r == nil {
			return nil, "this task is no longer running, so it cannot take another message; start a new task in the same context to continue the conversation"
		}
		if !r.answer(ec.Message, answererFrom(ctx)) {
			return nil, "this task is not waiting for input"
		}
		return r, ""
	}
	if r := s.claimHandoff(ctx, ec); r != nil {
		return r, ""
	}
	launch, failure := s.plan(ctx, ec, fast)
	if failure != "" {
		return nil, failure
	}
	return launch(), ""
}

// plan prepares the run of a new task without starting it: launch starts
// it. A non-empty failure explains why the task fails at once.
func (s *Server) plan(ctx context.Context, ec *a2asrv.ExecutorContext, fast bool) (launch func() *run, failure string) {
	name := agentFrom(ctx)
	e, err := s.opts.Kernel.Agents().Get(ctx, name)
	if err == nil && e.Manifest.Kind == manifest.KindMCPProxy {
		return func() *run { return s.startProxy(ec.TaskID, ec.ContextID, e.Manifest, ec.Message) }, ""
	}
	input, err := toLLMMessage(ec.Message)
	if err != nil {
		return nil, err.Error()
	}
	req := &agent.RunRequest{Agent: name, Input: input, Origin: "a2a", Principal: principal.FromContext(ctx)}
	if ec.Message.ContextID == "" {
		// a2a-go made up the context id: certainly a new conversation.
		req.NewSessionID = ec.ContextID
	} else {
		_, err := s.opts.Sessions.GetSession(ctx, ec.ContextID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			req.NewSessionID = ec.ContextID
		case err != nil:
			s.log.Error("load session for a2a context", "context_id", ec.ContextID, "err", err)
			return nil, "internal error loading the conversation"
		default:
			req.SessionID = ec.ContextID
		}
	}
	if fast {
		return func() *run { return s.start(ctx, ec.TaskID, req, ec) }, ""
	}
	return func() *run { return s.start(ctx, ec.TaskID, req, nil) }, ""
}

// run is one run serving one task: a kernel run, or a model-free run
// such as the MCP proxy's.
type run struct {
	taskID a2a.TaskID // guarded by Server.mu: a hand-off changes it
	// handoff is the key under which the blocking fast path offered the
	// run to a2a-go's execution (Server.handoffs), while it is on offer;
	// guarded by Server.mu.
	handoff *handoffKey
	cancel  context.CancelFunc

	mu       sync.Mutex
	queue    []item
	signal   chan struct{} // 1-buffered: items were queued
	done     bool          // the run returned
	awaiting *question     // the question the task is input-required for
	streamed bool          // text went out as artifact chunks
	artifact a2a.ArtifactID
	// The blocking fast path's hand-over: final is the finished task the
	// kernel stores with the model's reply (finalTask), handedOff the run
	// given to a2a-go, which then stores the task itself. Whichever comes
	// first excludes the other.
	final     *a2a.Task
	handedOff bool
	// byClient is set when an A2A client's CancelTask stopped the run:
	// the run's own end then reports the cancel as Cancel does, whichever
	// of the two a2a-go stores last.
	byClient atomic.Bool
}

// How a task's end reads when a client cancelled it, and when it stopped
// otherwise (agentd shutting down, the run's context gone).
const (
	cancelledByClientText = "canceled at the client's request"
	stoppedText           = "the run was stopped before it finished (canceled, or agentd shut down)"
)

// item is one thing the run reports: a kernel event, a question, or the
// end of a model-free run.
type item struct {
	ev  *agent.Event
	ask *question
	end *outcome
}

// question is what an input-required task asks: an approval, or more
// input for a model-free run. The next message on the task answers it.
type question struct {
	message func(ec *a2asrv.ExecutorContext) *a2a.Message
	// deliver hands the answer over, with the name of the principal that
	// sent it ("" for the daemon's own calls); it must not block.
	deliver func(m *a2a.Message, by string)
}

// outcome is the end of a model-free run: its terminal state and the
// parts of its last message.
type outcome struct {
	state a2a.TaskState
	parts []*a2a.Part
}

// start launches the kernel run for a task; the server owns the goroutine.
// The run outlives the request that started it (reqCtx), but stays in its
// trace and keeps its request id. A non-nil fast is the blocking fast
// path's request: the run may then store its finished task in the same
// transaction as the model's reply (agent.RunRequest.FinalTask).
func (s *Server) start(reqCtx context.Context, id a2a.TaskID, req *agent.RunRequest, fast *a2asrv.ExecutorContext) *run {
	// Only the trace and the request id carry over: the run must not see
	// the request's other values, nor end with it.
	base := trace.ContextWithSpanContext(context.Background(), trace.SpanContextFromContext(reqCtx))
	if rid := telemetry.RequestID(reqCtx); rid != "" {
		base = telemetry.WithRequestID(base, rid)
	}
	ctx, cancel := s.owned.detach(base)
	ctx, byClient := cancelledByClient(ctx)
	r := &run{taskID: id, cancel: byClient, signal: make(chan struct{}, 1)}
	req.Approver = r
	req.OnEvent = func(e agent.Event) { r.push(item{ev: &e}) }
	if fast != nil {
		agentName, owner := agentFrom(reqCtx), ownerFrom(reqCtx)
		req.FinalTask = func(res agent.RunResult) (store.Task, bool) {
			return r.finalTask(s.opts.Tasks, agentName, owner, fast, res)
		}
	}
	s.mu.Lock()
	s.runs[id] = r
	s.mu.Unlock()
	s.owned.wg.Go(func() {
		defer cancel()
		_, err := s.opts.Kernel.Run(ctx, req)
		if err != nil && !errors.Is(err, context.Canceled) {
			s.log.Debug("a2a task run failed", "task", id, "agent", req.Agent, "err", err)
		}
		s.ended(r)
	})
	return r
}

// ended marks r's run as returned and forgets it.
func (s *Server) ended(r *run) {
	// Lock order: Server.mu, then run.mu (adoption reads done under both).
	s.mu.Lock()
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
	if s.runs[r.taskID] == r {
		delete(s.runs, r.taskID)
	}
	if r.handoff != nil {
		// Offered, never claimed (the client left before a2a-go's
		// execution began, and it never did): the offer ends with the run.
		delete(s.handoffs, *r.handoff)
		r.handoff = nil
	}
	s.mu.Unlock()
	r.wake()
}

func (s *Server) run(id a2a.TaskID) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

func (r *run) push(it item) {
	r.mu.Lock()
	r.queue = append(r.queue, it)
	r.mu.Unlock()
	r.wake()
}

func (r *run) wake() {
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// Approve implements tool.Approver: a policy "ask" turns the task
// input-required, and the next message on the task answers it.
func (r *run) Approve(ctx context.Context, req tool.ApprovalRequest) (bool, error) {
	a, err := r.ApproveAnswer(ctx, req)
	return a.Approved, err
}

// ApproveAnswer implements tool.AnsweringApprover. Only the task's owner
// or an admin can send the answering message (the task is not found for
// anyone else), and the audit names which of them did.
func (r *run) ApproveAnswer(ctx context.Context, req tool.ApprovalRequest) (tool.Answer, error) {
	answer := make(chan tool.Answer, 1)
	r.push(item{ask: &question{
		message: func(ec *a2asrv.ExecutorContext) *a2a.Message { return approvalMessage(ec, req) },
		deliver: func(m *a2a.Message, by string) { answer <- tool.Answer{Approved: approvalAnswer(m), By: by} },
	}})
	select {
	case a := <-answer:
		return a, nil
	case <-ctx.Done():
		return tool.Answer{}, ctx.Err()
	}
}

// ask turns the task input-required with the question msg builds and
// returns the next message on the task.
func (r *run) ask(ctx context.Context, msg func(ec *a2asrv.ExecutorContext) *a2a.Message) (*a2a.Message, error) {
	answer := make(chan *a2a.Message, 1)
	r.push(item{ask: &question{message: msg, deliver: func(m *a2a.Message, _ string) { answer <- m }}})
	select {
	case m := <-answer:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answer delivers a follow-up message, sent by principal by, to the
// pending question.
func (r *run) answer(m *a2a.Message, by string) bool {
	r.mu.Lock()
	q := r.awaiting
	r.awaiting = nil
	r.mu.Unlock()
	if q == nil {
		return false
	}
	q.deliver(m, by)
	return true
}

// relay translates the run's items into A2A events until the task reaches
// a terminal state or needs input. Consecutive text deltas are merged into
// one artifact chunk, so a fast model costs fewer events (and fewer task
// copies in a2a-go) under load.
func (r *run) relay(ctx context.Context, ec *a2asrv.ExecutorContext, yield func(a2a.Event, error) bool) {
	var text strings.Builder
	flush := func(last bool) bool {
		if text.Len() == 0 && !last {
			return true
		}
		var ev *a2a.TaskArtifactUpdateEvent
		part := a2a.NewTextPart(text.String())
		text.Reset()
		if r.artifact == "" {
			ev = a2a.NewArtifactEvent(ec, part)
			ev.Artifact.Name = "response"
			r.artifact = ev.Artifact.ID
		} else {
			ev = a2a.NewArtifactUpdateEvent(ec, r.artifact, part)
		}
		ev.LastChunk = last
		r.streamed = true
		return yield(ev, nil)
	}
	for {
		r.mu.Lock()
		items := r.queue
		r.queue = nil
		done := r.done
		r.mu.Unlock()
		for i, it := range items {
			switch {
			case it.ask != nil:
				if !flush(false) {
					return
				}
				r.mu.Lock()
				r.awaiting = it.ask
				// Later items wait for the next execution.
				r.queue = append(items[i+1:len(items):len(items)], r.queue...)
				r.mu.Unlock()
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, it.ask.message(ec)), nil)
				return
			case it.end != nil:
				if flush(false) {
					yield(a2a.NewStatusUpdateEvent(ec, it.end.state, a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, it.end.parts...)), nil)
				}
				return
			}
			e := it.ev
			switch e.Type {
			case agent.EventText:
				text.WriteString(e.Text)
				continue
			case agent.EventToolStarted, agent.EventToolFinished:
				if !flush(false) || !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, toolMessage(ec, e)), nil) {
					return
				}
			case agent.EventToolProgress:
				if supersededProgress(items[i+1:], e) {
					// A later report of the same call is already here:
					// under a burst, only the newest one goes out.
					continue
				}
				if !flush(false) || !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, progressMessage(ec, e)), nil) {
					return
				}
			case agent.EventFinal:
				if !r.finish(ec, e, &text, flush, yield) {
					return
				}
				return
			case agent.EventError:
				if !flush(false) {
					return
				}
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentText(ec, "the agent failed: "+e.Error)), nil)
				return
			}
		}
		if !flush(false) {
			return
		}
		if done && len(items) == 0 {
			// The run ended without a final or error event: the kernel
			// always sends one, so this is only a safety net.
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, agentText(ec, "the run ended without a result")), nil)
			return
		}
		select {
		case <-r.signal:
		case <-ctx.Done():
			return
		}
	}
}

// answererKey carries, into the replica that runs a task, the name of the
// principal whose message another replica relayed (relayCall.Answerer):
// the relayed call has no principal of its own here, and the audit names
// who answered.
type answererKey struct{}

// answererFrom is the principal that sent a message on a task: the
// request's, else the relaying replica's word for it.
func answererFrom(ctx context.Context) string {
	if p := principal.FromContext(ctx); p != nil {
		return p.Name
	}
	name, _ := ctx.Value(answererKey{}).(string)
	return name
}

// finish reports a run's final event: the rest of the text as the last
// artifact chunk, then the terminal status carrying the whole answer.
func (r *run) finish(ec *a2asrv.ExecutorContext, e *agent.Event, text *strings.Builder, flush func(bool) bool, yield func(a2a.Event, error) bool) bool {
	answer := ""
	if e.Message != nil {
		answer = e.Message.Text()
	}
	if !r.streamed && text.Len() == 0 && answer != "" {
		// The provider did not stream: the answer is the artifact.
		text.WriteString(answer)
	}
	// Text already sent needs no empty closing chunk: lastChunk is
	// optional, and an empty part would stay in the artifact.
	if text.Len() > 0 && !flush(true) {
		return false
	}
	if e.StopReason == agent.StopCancelled {
		why := stoppedText
		if r.byClient.Load() {
			why = cancelledByClientText
		}
		return yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, agentText(ec, why)), nil)
	}
	var msg *a2a.Message
	if answer != "" {
		msg = agentText(ec, answer)
	}
	ev := a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, msg)
	ev.Metadata = map[string]any{"agentd": map[string]any{"stopReason": string(e.StopReason)}}
	return yield(ev, nil)
}

// agentText is an agent message with one text part, bound to the task.
func agentText(ec *a2asrv.ExecutorContext, text string) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
}

// toolMessage describes tool activity for a working status update: a text
// line for people and a data part for programs.
func toolMessage(ec *a2asrv.ExecutorContext, e *agent.Event) *a2a.Message {
	c := e.ToolCall
	data := map[string]any{"type": string(e.Type), "tool": c.Name, "callId": c.ID}
	line := "calling tool " + c.Name
	if e.Type == agent.EventToolFinished {
		line = "tool " + c.Name + " finished"
		isErr := e.ToolResult != nil && e.ToolResult.IsError
		data["isError"] = isErr
		data["untrusted"] = e.Untrusted
		if isErr {
			line += " with an error"
		}
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(line), a2a.NewDataPart(data))
}

// progressMessage reports a long tool call's progress: a text line for
// people and a data part for programs.
func progressMessage(ec *a2asrv.ExecutorContext, e *agent.Event) *a2a.Message {
	p := e.Progress
	if p == nil {
		p = &agent.Progress{}
	}
	data := map[string]any{"type": string(e.Type), "progress": p.Progress}
	line := fmt.Sprintf("progress %g", p.Progress)
	if p.Total > 0 {
		data["total"] = p.Total
		line += fmt.Sprintf("/%g", p.Total)
	}
	if e.ToolCall != nil {
		data["tool"], data["callId"] = e.ToolCall.Name, e.ToolCall.ID
		line = "tool " + e.ToolCall.Name + ": " + line
	}
	if p.Message != "" {
		data["message"] = p.Message
		line += ": " + p.Message
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(line), a2a.NewDataPart(data))
}

// supersededProgress reports whether later holds a newer progress report
// of e's call.
func supersededProgress(later []item, e *agent.Event) bool {
	for _, it := range later {
		if it.ev != nil && it.ev.Type == agent.EventToolProgress && sameCall(it.ev.ToolCall, e.ToolCall) {
			return true
		}
	}
	return false
}

func sameCall(a, b *llm.ToolCall) bool {
	return a == nil && b == nil || a != nil && b != nil && a.ID == b.ID
}

// approvalMessage asks the client to approve a tool call.
func approvalMessage(ec *a2asrv.ExecutorContext, req tool.ApprovalRequest) *a2a.Message {
	var args any = map[string]any{}
	if len(req.Args) > 0 {
		_ = json.Unmarshal(req.Args, &args)
	}
	text := fmt.Sprintf("Approval needed: the agent wants to call %s (%s). Reply \"yes\" to allow it or \"no\" to refuse.", req.Tool, req.Reason)
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text), a2a.NewDataPart(map[string]any{
		"type": "approval_request", "tool": req.Tool, "callId": req.CallID, "arguments": args, "reason": req.Reason,
	}))
}

// approvalAnswer reads a follow-up message as yes or no: a data part
// {"approved": bool} wins, else the text must start with an affirmative
// word. Anything else refuses, the safe default.
func approvalAnswer(m *a2a.Message) bool {
	if m == nil {
		return false
	}
	var text strings.Builder
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if obj, ok := d.Value.(map[string]any); ok {
				if v, ok := obj["approved"].(bool); ok {
					return v
				}
			}
		}
		text.WriteString(p.Text())
	}
	w := strings.ToLower(strings.TrimSpace(text.String()))
	w = strings.TrimRight(strings.Fields(w + " x")[0], ".!,")
	switch w {
	case "yes", "y", "approve", "approved", "allow", "ok", "okay", "true":
		return true
	}
	return false
}

// toLLMMessage converts an A2A user message to the kernel's input: text
// parts as text, images as images, other data and files described in text.
func toLLMMessage(m *a2a.Message) (llm.Message, error) {
	out := llm.Message{Role: llm.RoleUser}
	for _, p := range m.Parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			out.Parts = append(out.Parts, llm.Part{Text: string(c)})
		case a2a.Data:
			b, err := json.Marshal(c.Value)
			if err != nil {
				return out, fmt.Errorf("data part: %w", err)
			}
			out.Parts = append(out.Parts, llm.Part{Text: "```json\n" + string(b) + "\n```"})
		case a2a.Raw:
			switch {
			case strings.HasPrefix(p.MediaType, "image/"):
				out.Parts = append(out.Parts, llm.Part{Image: &llm.Image{MIMEType: p.MediaType, Data: []byte(c)}})
			case strings.HasPrefix(p.MediaType, "text/") || p.MediaType == "application/json":
				out.Parts = append(out.Parts, llm.Part{Text: fmt.Sprintf("[file %s]\n%s", p.Filename, string(c))})
			default:
				out.Parts = append(out.Parts, llm.Part{Text: fmt.Sprintf("[file %q of type %s, %d bytes, base64]\n%s", p.Filename, p.MediaType, len(c), base64.StdEncoding.EncodeToString(c))})
			}
		case a2a.URL:
			out.Parts = append(out.Parts, llm.Part{Text: fmt.Sprintf("[file %q of type %s at %s]", p.Filename, p.MediaType, string(c))})
		}
	}
	if len(out.Parts) == 0 {
		return out, errors.New("the message has no content the agent can read")
	}
	return out, nil
}
