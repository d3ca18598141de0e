// The blocking fast path: a blocking, non-streaming send that starts a
// task (dispatch.go decides which; fastEligible) is run and answered
// here, without a2a-go's event pipeline (per event a gob copy of the task
// and a store update). The client learns the task id only from the
// answer. If the run ends within the server's window, the task is stored
// once, finished (by the kernel, with the model's reply, in one
// transaction: finalTask), and returned; a run that outlasts the window
// is handed to a2a-go's own execution of the same message (handOff).
// Until then the task is not stored: a listing of its context shows it
// only from then on, where a2a-go's path stores it at once.
// TestBlockingFastPathMatchesSDK and TestBlockingLongRunMatchesSDK send
// the same messages down this path and a2a-go's and compare.

package a2aedge

import (
	"context"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/store"
)

// fastEligible reports whether the fast path may answer req: a blocking
// send that starts a task of an agent named by the endpoint, with
// nothing a2a-go would treat specially (an immediate answer, a push
// config, referenced tasks) and nothing it would refuse (the fields it
// requires), so that a2a-go's errors stay a2a-go's.
func (s *Server) fastEligible(ctx context.Context, req *a2a.SendMessageRequest) bool {
	if agentFrom(ctx) == "" || s.fastWindow <= 0 || req == nil || req.Message == nil {
		return false
	}
	msg := req.Message
	if c := req.Config; c != nil && (c.ReturnImmediately || c.PushConfig != nil) {
		return false
	}
	return msg.TaskID == "" && msg.ID != "" && msg.Role != "" && len(msg.Parts) > 0 && len(msg.ReferenceTasks) == 0
}

// sendFast starts the task's run and answers with the finished task if
// the run ends within the window; otherwise a2a-go answers (handOff).
func (h dispatcher) sendFast(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	msg := req.Message
	ec := &a2asrv.ExecutorContext{Message: msg, TaskID: a2a.NewTaskID(), ContextID: msg.ContextID, Metadata: req.Metadata}
	if ec.ContextID == "" {
		ec.ContextID = a2a.NewContextID()
	}
	r, failure := h.s.attach(ctx, ec, true)
	var end *item
	if failure != "" {
		end = &item{ev: &agent.Event{Type: agent.EventError, Error: failure}}
	} else if end = r.waitEnd(ctx, h.s.fastWindow); end == nil {
		if !r.markHandedOff() {
			// The client left while the finished task was being stored
			// with the reply: it is stored, or the run failed.
			return nil, ctx.Err()
		}
		return h.handOff(ctx, req, ec, r)
	}
	if end.ev != nil && end.ev.Type == agent.EventFinal && r.stored() != nil {
		// Stored by the kernel with the model's reply, in one transaction.
		t := r.stored()
		h.s.opts.Tasks.created(ctx, agentFrom(ctx), t.Status.State)
		h.s.opts.Tasks.told(string(t.ID), agentFrom(ctx), ownerFrom(ctx), t.Status.State)
		trimHistory(t, historyLength(req))
		return t, nil
	}
	t := finishedTask(ec, end)
	if failure != "" {
		t.Status.Message = agentText(ec, failure)
	}
	if _, err := h.s.opts.Tasks.Create(ctx, t); err != nil {
		return nil, err
	}
	trimHistory(t, historyLength(req))
	return t, nil
}

// waitEnd waits up to window for the run's last item (a final or error
// event, or a model-free run's outcome) and takes the whole queue if it
// came. It returns nil, consuming nothing, if the run needs longer or asks
// a question.
func (r *run) waitEnd(ctx context.Context, window time.Duration) *item {
	timer := time.NewTimer(window)
	defer timer.Stop()
	for {
		r.mu.Lock()
		var end *item
		for _, it := range r.queue {
			if it.ask != nil {
				r.mu.Unlock()
				return nil
			}
			if it.end != nil || it.ev.Type == agent.EventFinal || it.ev.Type == agent.EventError {
				end = &it
				break
			}
		}
		if end != nil {
			r.queue = nil
		}
		r.mu.Unlock()
		if end != nil {
			return end
		}
		select {
		case <-r.signal:
		case <-timer.C:
			if !r.markHandedOff() {
				continue // its task is being stored: the end is near
			}
			r.wake() // the relay that takes over needs the wake-up
			return nil
		case <-ctx.Done():
			r.wake()
			return nil
		}
	}
}

// markHandedOff marks the run as given to a2a-go (handOff), unless its
// finished task is being stored with the model's reply (then its end is
// imminent).
func (r *run) markHandedOff() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.final != nil {
		return false
	}
	r.handedOff = true
	return true
}

// finalTask builds the finished task of a fast-path run for the kernel to
// store with the model's reply, unless the run was already handed to
// a2a-go.
func (r *run) finalTask(ts *TaskStore, agentName, owner string, ec *a2asrv.ExecutorContext, res agent.RunResult) (store.Task, bool) {
	msg := res.Message
	t := finishedTask(ec, &item{ev: &agent.Event{Type: agent.EventFinal, SessionID: res.SessionID, Message: &msg, StopReason: res.StopReason}})
	rec, err := ts.record(agentName, owner, t)
	if err != nil {
		return store.Task{}, false // the fast path stores it the usual way
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handedOff {
		return store.Task{}, false
	}
	r.final = t
	return rec, true
}

// stored is the finished task the kernel stored with the model's reply,
// if it did: the run's final event came after finalTask built it.
func (r *run) stored() *a2a.Task {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.final
}

// finishedTask is a new task in its final state, from the run's last item.
func finishedTask(ec *a2asrv.ExecutorContext, it *item) *a2a.Task {
	t := a2a.NewSubmittedTask(ec, ec.Message)
	now := time.Now().UTC()
	if it.end != nil {
		t.Status = a2a.TaskStatus{State: it.end.state, Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, it.end.parts...), Timestamp: &now}
		return t
	}
	e := it.ev
	switch {
	case e.Type == agent.EventError:
		t.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Message: agentText(ec, "the agent failed: "+e.Error), Timestamp: &now}
		return t
	case e.StopReason == agent.StopCancelled:
		t.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled, Message: agentText(ec, stoppedText), Timestamp: &now}
		return t
	}
	answer := ""
	if e.Message != nil {
		answer = e.Message.Text()
	}
	t.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &now}
	if answer != "" {
		t.Artifacts = []*a2a.Artifact{{ID: a2a.NewArtifactID(), Name: "response", Parts: a2a.ContentParts{a2a.NewTextPart(answer)}}}
		t.Status.Message = agentText(ec, answer)
	}
	t.Metadata = map[string]any{"agentd": map[string]any{"stopReason": string(e.StopReason)}}
	return t
}

// historyLength is how much of the history a send asked for.
func historyLength(req *a2a.SendMessageRequest) *int {
	if req.Config != nil {
		return req.Config.HistoryLength
	}
	return nil
}

// handoffKey names a run the blocking fast path offers to a2a-go's
// execution of the same message: the message's id, which the protocol
// makes part of the message a2a-go hands to the executor
// (ExecutorContext.Message), and the agent and principal the request was
// admitted for, so that no other principal's message, nor a message to
// another agent, can claim the run even if it reuses the id.
type handoffKey struct {
	agent, owner, message string
}

// handOff passes a run the fast path started, and that outlasted its
// window, to a2a-go: the run is offered in the server's table under the
// message's handoffKey, and a2a-go's own SendMessage, whose execution
// claims it (claimHandoff) instead of starting another, answers. The
// task then lives in a2a-go like any other: stored as it goes, visible
// to GetTask, cancelable, subscribable. Nothing travels through the
// request's context: the link is the message a2a-go must pass on.
//
// The offer ends on every path: claimed by the execution; withdrawn here
// when a2a-go answered without executing (it refused the request), the
// run then being stopped since nothing would report it; or, when the
// client left before a2a-go's execution began, dropped when the run ends
// (Server.ended), as a2a-go may still start the execution after the
// client's request is gone.
func (h dispatcher) handOff(ctx context.Context, req *a2a.SendMessageRequest, ec *a2asrv.ExecutorContext, r *run) (a2a.SendMessageResult, error) {
	key := handoffKey{agent: agentFrom(ctx), owner: ownerFrom(ctx), message: req.Message.ID}
	if !h.s.offer(key, r) {
		r.cancel()
		return nil, fmt.Errorf("%w: message.messageId %q is already being sent to this agent by another request; every message needs an id of its own", a2a.ErrInvalidParams, key.message)
	}
	// The context chosen here (possibly made up) is the task's.
	m := *req.Message
	m.ContextID = ec.ContextID
	r2 := *req
	r2.Message = &m
	res, err := h.RequestHandler.SendMessage(ctx, &r2)
	if ctx.Err() == nil && h.s.withdraw(key, r) {
		r.cancel()
	}
	return res, err
}

// offer puts r in the server's hand-off table under key, unless another
// run is on offer there.
func (s *Server) offer(key handoffKey, r *run) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.handoffs[key]; taken {
		return false
	}
	s.handoffs[key] = r
	r.handoff = &key
	return true
}

// withdraw takes r off offer, reporting whether it still was.
func (s *Server) withdraw(key handoffKey, r *run) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handoffs[key] != r {
		return false
	}
	delete(s.handoffs, key)
	r.handoff = nil
	return true
}

// claimHandoff takes the run the fast path offered for ec's message, if
// it did, and files it under the task id a2a-go chose (a2a-go takes no
// id from outside, so the fast path's own id is replaced; no client ever
// saw it). It returns nil when no run is on offer: a2a-go's execution
// then starts its own.
func (s *Server) claimHandoff(ctx context.Context, ec *a2asrv.ExecutorContext) *run {
	if ec.Message == nil {
		return nil
	}
	key := handoffKey{agent: agentFrom(ctx), owner: ownerFrom(ctx), message: ec.Message.ID}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.handoffs[key]
	if !ok {
		return nil
	}
	delete(s.handoffs, key)
	r.handoff = nil
	// Lock order: Server.mu, then run.mu (as in Server.ended).
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if s.runs[r.taskID] == r {
		delete(s.runs, r.taskID)
	}
	r.taskID = ec.TaskID
	if !done {
		s.runs[ec.TaskID] = r
	}
	return r
}
