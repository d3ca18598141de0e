package tool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/principal"
)

// Approvals is the operator's queue: when a call needs approval and the
// edge that started the run cannot ask anyone (the HTTP API, an MCP
// client without elicitation), the request waits here until someone
// decides in the dashboard, or the timeout denies it with a reason the
// model reads. It is the Runner's fallback Approver (RunnerOptions.Operator).
type Approvals struct {
	timeout time.Duration

	mu       sync.Mutex
	next     int
	pending  map[string]*pending
	always   map[[2]string]bool // {session, tool} approved for the session
	watchers map[int]func()
	nextW    int
}

// DefaultApprovalTimeout is how long a request waits for a decision when
// no timeout is configured.
const DefaultApprovalTimeout = 5 * time.Minute

// PendingApproval is a request waiting for the operator.
type PendingApproval struct {
	ID string `json:"id"`
	ApprovalRequest
	Created  time.Time `json:"created"`
	Deadline time.Time `json:"deadline"`
}

type pending struct {
	PendingApproval
	decided chan decided // buffered; the first decision wins
}

// decided is a decision and the principal that made it.
type decided struct {
	d  Decision
	by string
}

// Decision is the operator's answer.
type Decision string

// Decisions.
const (
	ApproveOnce Decision = "once"    // this call
	ApproveAll  Decision = "session" // this call and every later call of the tool in the session
	Reject      Decision = "reject"
)

// ErrNoSuchApproval is returned by Decide for an id that is not pending
// (decided, timed out, its run cancelled, or never there).
var ErrNoSuchApproval = errors.New("no such pending approval")

// NewApprovals returns an empty queue whose requests wait at most timeout
// (DefaultApprovalTimeout if not positive).
func NewApprovals(timeout time.Duration) *Approvals {
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	return &Approvals{timeout: timeout, pending: map[string]*pending{}, always: map[[2]string]bool{}, watchers: map[int]func(){}}
}

// OnChange registers f, called (without locks held) after a request is
// queued or leaves the queue; the returned function unregisters it. f
// must not block.
func (a *Approvals) OnChange(f func()) (cancel func()) {
	a.mu.Lock()
	id := a.nextW
	a.nextW++
	a.watchers[id] = f
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		delete(a.watchers, id)
		a.mu.Unlock()
	}
}

func (a *Approvals) changed() {
	a.mu.Lock()
	fs := make([]func(), 0, len(a.watchers))
	for _, f := range a.watchers {
		fs = append(fs, f)
	}
	a.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// Timeout is how long a request waits.
func (a *Approvals) Timeout() time.Duration { return a.timeout }

// Approve implements Approver: it queues req and waits for a decision,
// the timeout, or the end of the run.
func (a *Approvals) Approve(ctx context.Context, req ApprovalRequest) (bool, error) {
	ans, err := a.ApproveAnswer(ctx, req)
	return ans.Approved, err
}

// ApproveAnswer implements AnsweringApprover: Approve, saying who decided.
func (a *Approvals) ApproveAnswer(ctx context.Context, req ApprovalRequest) (Answer, error) {
	return a.ApproveQueued(ctx, req, nil)
}

// ApproveQueued implements QueueingApprover: ApproveAnswer, calling
// queued with the pending request once it is in the queue (not for a
// call the session already approved "always").
func (a *Approvals) ApproveQueued(ctx context.Context, req ApprovalRequest, queued func(PendingApproval)) (Answer, error) {
	now := time.Now().UTC()
	a.mu.Lock()
	if req.SessionID != "" && a.always[[2]string{req.SessionID, req.Tool}] {
		a.mu.Unlock()
		return Answer{Approved: true}, nil
	}
	a.next++
	p := &pending{
		PendingApproval: PendingApproval{ID: fmt.Sprintf("ap-%d-%d", now.UnixNano(), a.next), ApprovalRequest: req,
			Created: now, Deadline: now.Add(a.timeout)},
		decided: make(chan decided, 1),
	}
	a.pending[p.ID] = p
	a.mu.Unlock()
	a.changed()
	if queued != nil {
		queued(p.PendingApproval)
	}
	defer func() {
		a.mu.Lock()
		_, still := a.pending[p.ID]
		delete(a.pending, p.ID)
		a.mu.Unlock()
		if still { // timed out or cancelled; Decide announced its own removal
			a.changed()
		}
	}()
	timer := time.NewTimer(a.timeout)
	defer timer.Stop()
	select {
	case d := <-p.decided:
		return Answer{Approved: d.d != Reject, By: d.by}, nil
	case <-timer.C:
		return Answer{}, fmt.Errorf("no operator decided within %s (the run's edge cannot ask, so the request waited in the dashboard's Approvals)", a.timeout)
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
}

// Pending lists the waiting requests, oldest first.
func (a *Approvals) Pending() []PendingApproval {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]PendingApproval, 0, len(a.pending))
	for _, p := range a.pending {
		out = append(out, p.PendingApproval)
	}
	slices.SortFunc(out, func(x, y PendingApproval) int { return x.Created.Compare(y.Created) })
	return out
}

// Get returns one waiting request.
func (a *Approvals) Get(id string) (PendingApproval, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pending[id]
	if !ok {
		return PendingApproval{}, false
	}
	return p.PendingApproval, true
}

// Decide answers the request id as principal by, which must be the
// principal whose run asked, or an admin: anyone else gets
// ErrNoSuchApproval, as for an id that is not there, so ids of other
// principals' requests say nothing. A nil by is the daemon itself.
// ApproveAll also approves, without asking, every later call of the same
// tool in the same session (while the daemon runs).
func (a *Approvals) Decide(id string, d Decision, by *principal.Principal) error {
	switch d {
	case ApproveOnce, ApproveAll, Reject:
	default:
		return fmt.Errorf("decision: %q is not one of %q, %q, %q", d, ApproveOnce, ApproveAll, Reject)
	}
	a.mu.Lock()
	p, ok := a.pending[id]
	if !ok || by != nil && !by.MaySee(p.Principal) {
		a.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNoSuchApproval, id)
	}
	p.decided <- decided{d, principal.NameOf(by)} // buffered, and only ever sent here, under the lock, once
	delete(a.pending, id)
	if d == ApproveAll && p.SessionID != "" {
		a.always[[2]string{p.SessionID, p.Tool}] = true
	}
	a.mu.Unlock()
	a.changed()
	return nil
}

var _ QueueingApprover = (*Approvals)(nil)
