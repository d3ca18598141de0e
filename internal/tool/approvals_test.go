package tool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/principal"
)

// queued waits until the queue holds n requests and returns them.
func queued(t *testing.T, a *Approvals, n int) []PendingApproval {
	t.Helper()
	ch := make(chan struct{}, 1)
	stop := a.OnChange(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	defer stop()
	timeout := time.After(10 * time.Second)
	for {
		if p := a.Pending(); len(p) == n {
			return p
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("the queue holds %d requests, want %d", len(a.Pending()), n)
		}
	}
}

// TestOperatorApprovals: a call that needs approval in a run whose edge
// cannot ask (no Approver) waits in the operator's queue, and runs or not
// as the operator decides; the timeout denies it with a reason; an
// approval for the session covers later calls of that tool there.
func TestOperatorApprovals(t *testing.T) {
	rules := &policy.Rules{Capabilities: []string{"*"}, Untrusted: map[string]policy.Action{"file_write": policy.Ask}}
	alice := &principal.Principal{Name: "alice", Agents: []string{"*"}}
	start := func(t *testing.T, r *Runner, session string) <-chan Outcome {
		t.Helper()
		s := r.Scope(ScopeParams{Agent: "writer", SessionID: session, Principal: alice, Tainted: true, Rules: rules})
		out := make(chan Outcome, 1)
		go func() { out <- s.Call(context.Background(), call("file_write", `{"path":"a.txt"}`), nil) }()
		return out
	}

	t.Run("approve once", func(t *testing.T) {
		ops := NewApprovals(time.Minute)
		fw := newTool("file_write", OriginBuiltin)
		r, audit := setup(t, RunnerOptions{Operator: ops}, fw)
		out := start(t, r, "s1")
		p := queued(t, ops, 1)[0]
		if p.Tool != "file_write" || p.Agent != "writer" || p.SessionID != "s1" || p.Principal != "alice" || string(p.Args) != `{"path":"a.txt"}` ||
			!strings.Contains(p.Reason, "untrusted") || p.Deadline.Sub(p.Created) != time.Minute {
			t.Fatalf("pending %+v", p)
		}
		if fw.calls != 0 {
			t.Fatal("the tool ran before the decision")
		}
		if err := ops.Decide(p.ID, ApproveOnce, nil); err != nil {
			t.Fatal(err)
		}
		o := <-out
		if o.Result.IsError || o.Decision != "approved" || fw.calls != 1 || audit.recs[0].Decision != "approved" {
			t.Fatalf("outcome %+v, calls %d, audit %+v", o, fw.calls, audit.recs)
		}
		if err := ops.Decide(p.ID, ApproveOnce, nil); !errors.Is(err, ErrNoSuchApproval) {
			t.Fatalf("deciding twice: %v", err)
		}
		// Once means once: the next call asks again.
		start(t, r, "s1")
		p = queued(t, ops, 1)[0]
		ops.Decide(p.ID, Reject, nil)
	})

	t.Run("the scope hears that a call waits, with its id", func(t *testing.T) {
		ops := NewApprovals(time.Minute)
		fw := newTool("file_write", OriginBuiltin)
		r, _ := setup(t, RunnerOptions{Operator: ops}, fw)
		heard := make(chan PendingApproval, 2)
		s := r.Scope(ScopeParams{Agent: "writer", SessionID: "s1", Principal: alice, Tainted: true, Rules: rules,
			OnQueued: func(p PendingApproval) { heard <- p }})
		out := make(chan Outcome, 1)
		go func() { out <- s.Call(context.Background(), call("file_write", `{"path":"a.txt"}`), nil) }()
		p := <-heard
		// Announced once it is in the queue: the id decides it.
		if q, ok := ops.Get(p.ID); !ok || q.Tool != "file_write" || q.SessionID != "s1" || string(q.Args) != `{"path":"a.txt"}` {
			t.Fatalf("announced %+v, queued %+v (%v)", p, q, ok)
		}
		if err := ops.Decide(p.ID, ApproveAll, nil); err != nil {
			t.Fatal(err)
		}
		if o := <-out; o.Result.IsError || fw.calls != 1 {
			t.Fatalf("outcome %+v", o)
		}
		// Approved for the session: the next call does not wait, so
		// nothing is announced.
		if o := s.Call(context.Background(), call("file_write", `{"path":"b.txt"}`), nil); o.Result.IsError || fw.calls != 2 {
			t.Fatalf("second call %+v", o)
		}
		if len(heard) != 0 {
			t.Fatalf("a call that did not wait was announced: %+v", <-heard)
		}
	})

	t.Run("reject", func(t *testing.T) {
		ops := NewApprovals(time.Minute)
		fw := newTool("file_write", OriginBuiltin)
		r, audit := setup(t, RunnerOptions{Operator: ops}, fw)
		out := start(t, r, "s1")
		if err := ops.Decide(queued(t, ops, 1)[0].ID, Reject, nil); err != nil {
			t.Fatal(err)
		}
		o := <-out
		if !o.Result.IsError || o.Decision != "rejected" || fw.calls != 0 || !strings.Contains(o.Result.Content, "rejected") || audit.recs[0].Outcome != "denied" {
			t.Fatalf("outcome %+v, calls %d", o, fw.calls)
		}
	})

	t.Run("timeout denies with a reason", func(t *testing.T) {
		ops := NewApprovals(50 * time.Millisecond)
		fw := newTool("file_write", OriginBuiltin)
		r, _ := setup(t, RunnerOptions{Operator: ops}, fw)
		o := <-start(t, r, "s1")
		if !o.Result.IsError || o.Decision != "rejected" || fw.calls != 0 || !strings.Contains(o.Result.Content, "no operator decided within 50ms") {
			t.Fatalf("outcome %+v", o)
		}
		if n := len(ops.Pending()); n != 0 {
			t.Fatalf("%d requests left after the timeout", n)
		}
	})

	t.Run("always for this session", func(t *testing.T) {
		ops := NewApprovals(time.Minute)
		fw := newTool("file_write", OriginBuiltin)
		r, _ := setup(t, RunnerOptions{Operator: ops}, fw)
		out := start(t, r, "s1")
		if err := ops.Decide(queued(t, ops, 1)[0].ID, ApproveAll, nil); err != nil {
			t.Fatal(err)
		}
		<-out
		// A later run of the same session: no question.
		if o := <-start(t, r, "s1"); o.Result.IsError || o.Decision != "approved" || fw.calls != 2 {
			t.Fatalf("second call in the session: %+v", o)
		}
		// Another session asks.
		start(t, r, "s2")
		p := queued(t, ops, 1)[0]
		if p.SessionID != "s2" {
			t.Fatalf("pending %+v", p)
		}
		ops.Decide(p.ID, Reject, nil)
	})

	t.Run("the run ending withdraws the request", func(t *testing.T) {
		ops := NewApprovals(time.Minute)
		fw := newTool("file_write", OriginBuiltin)
		r, _ := setup(t, RunnerOptions{Operator: ops}, fw)
		ctx, cancel := context.WithCancel(context.Background())
		s := r.Scope(ScopeParams{Agent: "writer", SessionID: "s1", Tainted: true, Rules: rules})
		out := make(chan Outcome, 1)
		go func() { out <- s.Call(ctx, call("file_write", `{}`), nil) }()
		p := queued(t, ops, 1)[0]
		cancel()
		if o := <-out; !o.Result.IsError || fw.calls != 0 {
			t.Fatalf("outcome %+v", o)
		}
		queued(t, ops, 0)
		if err := ops.Decide(p.ID, ApproveOnce, nil); !errors.Is(err, ErrNoSuchApproval) {
			t.Fatalf("deciding a withdrawn request: %v", err)
		}
	})

	t.Run("an edge that asks is asked, not the operator", func(t *testing.T) {
		ops := NewApprovals(time.Minute)
		fw := newTool("file_write", OriginBuiltin)
		r, _ := setup(t, RunnerOptions{Operator: ops}, fw)
		s := r.Scope(ScopeParams{Tainted: true, Rules: rules, Approver: ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })})
		if o := s.Call(context.Background(), call("file_write", `{}`), nil); o.Result.IsError || len(ops.Pending()) != 0 {
			t.Fatalf("outcome %+v", o)
		}
	})

	t.Run("only the run's principal or an admin decides", func(t *testing.T) {
		ops := NewApprovals(time.Minute)
		fw := newTool("file_write", OriginBuiltin)
		r, audit := setup(t, RunnerOptions{Operator: ops}, fw)
		out := start(t, r, "s1")
		p := queued(t, ops, 1)[0]
		bob := &principal.Principal{Name: "bob", Agents: []string{"*"}}
		for _, d := range []Decision{ApproveOnce, ApproveAll, Reject} {
			if err := ops.Decide(p.ID, d, bob); !errors.Is(err, ErrNoSuchApproval) {
				t.Fatalf("bob decides %s on alice's request: %v", d, err)
			}
		}
		if fw.calls != 0 || len(ops.Pending()) != 1 {
			t.Fatalf("after bob's answers: %d calls, %d pending", fw.calls, len(ops.Pending()))
		}
		admin := &principal.Principal{Name: "admin", Admin: true}
		if err := ops.Decide(p.ID, ApproveOnce, admin); err != nil {
			t.Fatal(err)
		}
		if o := <-out; o.Result.IsError || fw.calls != 1 {
			t.Fatalf("outcome %+v", o)
		}
		// The record is alice's call, approved by the admin: not by her.
		if rec := audit.recs[0]; rec.Principal != "alice" || rec.Decision != "approved" || rec.Detail != "approved by admin" {
			t.Fatalf("audit %+v", rec)
		}
		out = start(t, r, "s1")
		if err := ops.Decide(queued(t, ops, 1)[0].ID, Reject, &principal.Principal{Name: "alice"}); err != nil {
			t.Fatal(err)
		}
		<-out
		audit.mu.Lock()
		defer audit.mu.Unlock()
		if rec := audit.recs[1]; rec.Decision != "rejected" || !strings.HasPrefix(rec.Detail, "rejected by alice; denied") {
			t.Fatalf("audit %+v", rec)
		}
	})

	t.Run("bad decision", func(t *testing.T) {
		if err := NewApprovals(0).Decide("x", "maybe", nil); err == nil || !strings.Contains(err.Error(), "decision") {
			t.Fatalf("err %v", err)
		}
	})
}
