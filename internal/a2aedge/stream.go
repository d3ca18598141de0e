package a2aedge

import (
	"context"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// The streaming fast path. Through a2a-go, a stream's first event (the
// new task, working) crosses three goroutines (execution, producer,
// consumer) and two gob deep copies of the task before the SSE writer
// sees it, while the run, started first, competes for the CPU: on two
// cores that was over half of the time to the first event. streamNew
// stores the task itself (durably: GetTask, ListTasks and other
// replicas see it as soon as the client does), sends it, only then
// starts the run, and hands the stream to a2a-go, which adopts the run
// as the task's execution and relays its events as usual.

// streamAdoptKey carries a run started by the streaming fast path into
// the a2a-go execution that takes its task over.
type streamAdoptKey struct{}

// streamable reports whether a streaming send takes the fast path: a new
// task on an agent's endpoint, with nothing for a2a-go to do before the
// task exists (no push config to save).
func (s *Server) streamable(ctx context.Context, req *a2a.SendMessageRequest) bool {
	if agentFrom(ctx) == "" || req == nil || req.Message == nil {
		return false
	}
	msg := req.Message
	if c := req.Config; c != nil && c.PushConfig != nil {
		return false
	}
	return msg.TaskID == "" && msg.ID != "" && msg.Role != "" && len(msg.Parts) > 0 && len(msg.ReferenceTasks) == 0
}

// streamNew serves a streaming send that starts a task: the task is
// stored and sent first, then its run starts and a2a-go takes it over.
// A task that fails at once (an unreadable message) goes through a2a-go
// unchanged.
func (h fastHandler) streamNew(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		s := h.s
		msg := req.Message
		ec := &a2asrv.ExecutorContext{Message: msg, TaskID: a2a.NewTaskID(), ContextID: msg.ContextID, Metadata: req.Metadata, Tenant: req.Tenant}
		if ec.ContextID == "" {
			ec.ContextID = a2a.NewContextID()
		}
		launch, failure := s.plan(ctx, ec, false)
		if failure != "" {
			for ev, err := range h.RequestHandler.SendStreamingMessage(ctx, req) {
				if !yield(ev, err) {
					return
				}
			}
			return
		}
		t := a2a.NewSubmittedTask(ec, msg)
		now := time.Now().UTC()
		t.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}
		// Until a2a-go has adopted the run, a cancel, a subscription or
		// another message on the task waits (handOverGuard): a2a-go
		// would not know the task is running.
		release := s.handingOver(ec.TaskID)
		defer release()
		if _, err := s.opts.Tasks.Create(ctx, cloneTask(t)); err != nil {
			yield(nil, err)
			return
		}
		// Over HTTP the run starts once its task is on the wire: started
		// before, it competed with the first event for the CPU (on two
		// cores, a run started as the event was handed to the SSE writer
		// doubled the time the client waited for it). A caller in this
		// process (package bridge) may take its time over the event (it
		// reports progress to an MCP client): its run starts first.
		var r *run
		if !flushNotified(ctx) {
			r = launch()
		}
		listening := yield(t, nil)
		if r == nil {
			if listening {
				awaitFlush(ctx)
			}
			r = launch()
		}
		m := *msg
		m.TaskID, m.ContextID = ec.TaskID, ec.ContextID
		r2 := *req
		r2.Message = &m
		hctx := context.WithValue(ctx, streamAdoptKey{}, r)
		if !listening {
			// The client left: a2a-go still adopts the run, whose task
			// must end as usual, but nobody reads its events.
			var cancel context.CancelFunc
			hctx, cancel = context.WithCancel(hctx)
			cancel()
		}
		refused := false
		for ev, err := range s.a2a.SendStreamingMessage(hctx, &r2) {
			if err != nil && !refused && !r.isAdopted() {
				refused = true
				// a2a-go refused the task before adopting its run: stop
				// the run and fail the task, which nothing else would end.
				r.cancel()
				s.failUnadopted(ctx, t)
			}
			if !listening {
				continue
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// failUnadopted stores task t failed: a2a-go refused to take it over.
func (s *Server) failUnadopted(ctx context.Context, t *a2a.Task) {
	f := cloneTask(t)
	now := time.Now().UTC()
	f.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, f, a2a.NewTextPart("the task could not be started")), Timestamp: &now}
	if _, err := s.opts.Tasks.Update(context.WithoutCancel(ctx), &taskstore.UpdateRequest{Task: f, Event: f, PrevVersion: taskstore.TaskVersionMissing}); err != nil {
		s.log.Warn("fail a streamed task a2a-go did not take over", "task", t.ID, "err", err)
	}
}

// adoptStream returns the run the streaming fast path started for ec's
// task, if this execution is its hand-over, and marks it adopted.
func (s *Server) adoptStream(ctx context.Context, ec *a2asrv.ExecutorContext) *run {
	r, ok := ctx.Value(streamAdoptKey{}).(*run)
	if !ok || ec.StoredTask == nil || ec.TaskID == "" {
		return nil
	}
	s.mu.Lock()
	same := r.taskID == ec.TaskID
	s.mu.Unlock()
	if !same {
		return nil
	}
	r.mu.Lock()
	r.adopted = true
	r.mu.Unlock()
	s.handedOver(ec.TaskID)
	return r
}

func (r *run) isAdopted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.adopted
}

// handingOver marks task id as being handed to a2a-go; release ends the
// mark if handedOver has not.
func (s *Server) handingOver(id a2a.TaskID) (release func()) {
	s.mu.Lock()
	s.handing[id] = make(chan struct{})
	s.mu.Unlock()
	return func() { s.handedOver(id) }
}

// handedOver ends task id's hand-over and wakes those waiting for it.
func (s *Server) handedOver(id a2a.TaskID) {
	s.mu.Lock()
	c := s.handing[id]
	delete(s.handing, id)
	s.mu.Unlock()
	if c != nil {
		close(c)
	}
}

// awaitHandOver waits until task id, if it is being handed to a2a-go,
// has been.
func (s *Server) awaitHandOver(ctx context.Context, id a2a.TaskID) error {
	if id == "" {
		return nil
	}
	s.mu.Lock()
	c := s.handing[id]
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// handOverGuard is a2a-go's handler behind a wait: a request on a task
// whose stream streamNew is handing to a2a-go waits for the hand-over,
// so that a2a-go knows the task is running (a cancel reaches its run, a
// subscription finds its execution, a message is refused as for any
// running task).
type handOverGuard struct {
	a2asrv.RequestHandler
	s *Server
}

// SendMessage implements a2asrv.RequestHandler.
func (g handOverGuard) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	if req != nil && req.Message != nil {
		if err := g.s.awaitHandOver(ctx, req.Message.TaskID); err != nil {
			return nil, err
		}
	}
	return g.RequestHandler.SendMessage(ctx, req)
}

// SendStreamingMessage implements a2asrv.RequestHandler.
func (g handOverGuard) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if req != nil && req.Message != nil {
			if err := g.s.awaitHandOver(ctx, req.Message.TaskID); err != nil {
				yield(nil, err)
				return
			}
		}
		for ev, err := range g.RequestHandler.SendStreamingMessage(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// CancelTask implements a2asrv.RequestHandler.
func (g handOverGuard) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if req != nil {
		if err := g.s.awaitHandOver(ctx, req.ID); err != nil {
			return nil, err
		}
	}
	return g.RequestHandler.CancelTask(ctx, req)
}

// SubscribeToTask implements a2asrv.RequestHandler.
func (g handOverGuard) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if req != nil {
			if err := g.s.awaitHandOver(ctx, req.ID); err != nil {
				yield(nil, err)
				return
			}
		}
		for ev, err := range g.RequestHandler.SubscribeToTask(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// flushedKey carries the channel a flushNotifier closes at its first
// flush.
type flushedKey struct{}

// flushNotifier tells the streaming fast path when the stream's first
// event has been flushed to the client.
type flushNotifier struct {
	http.ResponseWriter
	once    sync.Once
	flushed chan struct{}
}

// notifyFlush wraps w for a streaming send served by a2a-go, whose SSE
// writers flush every event: the request's context then lets
// awaitFlush wait for the first.
func notifyFlush(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	if _, ok := w.(http.Flusher); !ok {
		return w, r
	}
	f := &flushNotifier{ResponseWriter: w, flushed: make(chan struct{})}
	return f, r.WithContext(context.WithValue(r.Context(), flushedKey{}, f.flushed))
}

// Flush implements http.Flusher.
func (f *flushNotifier) Flush() {
	f.ResponseWriter.(http.Flusher).Flush()
	f.once.Do(func() { close(f.flushed) })
}

// Unwrap lets http.ResponseController reach the connection.
func (f *flushNotifier) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// flushNotified reports whether ctx is a request's that came through
// notifyFlush.
func flushNotified(ctx context.Context) bool {
	_, ok := ctx.Value(flushedKey{}).(chan struct{})
	return ok
}

// flushWait bounds awaitFlush: a writer that buffered its events would
// otherwise hold the run back for good.
const flushWait = 50 * time.Millisecond

// awaitFlush waits until the stream's first event has been flushed, if
// the request came through notifyFlush, or until ctx ends (the SSE
// writer failed and its handler returned), at most flushWait.
func awaitFlush(ctx context.Context) {
	c, ok := ctx.Value(flushedKey{}).(chan struct{})
	if !ok {
		return
	}
	select {
	case <-c:
		return
	default:
	}
	t := time.NewTimer(flushWait)
	defer t.Stop()
	select {
	case <-c:
	case <-ctx.Done():
	case <-t.C:
	}
}
