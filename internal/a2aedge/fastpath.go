package a2aedge

import (
	"context"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

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
func (h fastHandler) handOff(ctx context.Context, req *a2a.SendMessageRequest, ec *a2asrv.ExecutorContext, r *run) (a2a.SendMessageResult, error) {
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
