package a2aedge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Cluster links the A2A edge to the other replicas sharing its store (nil
// when the daemon is alone). A task runs on the replica that started it;
// its state is in the shared store, so any replica gets and lists it, and
// what needs the run itself (a cancel, live events, the answer to an
// input-required task) goes to that replica through the cluster's
// notifications.
type Cluster interface {
	// ID names this replica.
	ID() string
	// Publish sends body on topic to the other replicas; Subscribe hears
	// what they send (f must not block); OnResync tells f that
	// notifications may have been lost.
	Publish(ctx context.Context, topic, body string) error
	Subscribe(topic string, f func(from string, body []byte)) (cancel func())
	OnResync(f func()) (cancel func())
	// TaskReplica returns the replica running task id and whether its
	// lease holds; "" when the task is terminal or unknown.
	TaskReplica(ctx context.Context, id string) (replica string, alive bool, err error)
	// RequestCancel records that task id must stop and returns what
	// TaskReplica would; PendingCancels lists this replica's unfinished
	// tasks whose cancel was requested (read again after a resync).
	RequestCancel(ctx context.Context, id string) (replica string, alive bool, err error)
	PendingCancels(ctx context.Context) ([]string, error)
	// OnTaskEnd hears of tasks another replica stored terminal;
	// OnPushConfigs of tasks whose push configs another replica changed.
	OnTaskEnd(f func(id string)) (cancel func())
	OnPushConfigs(f func(taskID string)) (cancel func())
}

// Topics of the A2A edge's notifications between replicas.
const (
	// topicCancel asks the replica running a task to cancel it (body:
	// the task id; the request is also recorded in the store).
	topicCancel = "a2a.cancel"
	// topicCall asks a task's replica to run a call on it and relay the
	// events (body: relayCall); topicReply carries them (relayReply);
	// topicHangup tells it the caller went away (body: the call's sub).
	topicCall   = "a2a.call"
	topicReply  = "a2a.reply"
	topicHangup = "a2a.hangup"
)

// Kinds of relayed calls.
const (
	callSubscribe = "subscribe" // SubscribeToTask
	callSend      = "send"      // SendMessage on an existing task
	callStream    = "stream"    // SendStreamingMessage on an existing task
)

// relayCall is a call another replica asks the task's replica to run.
type relayCall struct {
	Sub     string          `json:"sub"`   // unique per call: replies carry it
	Owner   string          `json:"owner"` // the replica that must answer
	Kind    string          `json:"kind"`
	Task    string          `json:"task"`
	Agent   string          `json:"agent"`
	Request json.RawMessage `json:"request,omitempty"` // the SendMessageRequest of send and stream
	// Answerer names the principal whose message is relayed, checked by
	// the relaying replica: the audit of an approval names who answered.
	Answerer string `json:"answerer,omitempty"`
}

// relayReply is one event of a relayed call, or its end.
type relayReply struct {
	Sub   string          `json:"sub"`
	Event json.RawMessage `json:"event,omitempty"` // an a2a.StreamResponse
	End   bool            `json:"end,omitempty"`
	// Error ends the call with an error; Code says which protocol error
	// it was ("not_found", "invalid", "not_cancelable", "unsupported").
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
	// NotRunning ends a call the replica could not serve: the run ended
	// before the call arrived.
	NotRunning bool `json:"notRunning,omitempty"`
}

// replicas is the server's side of the cluster: the calls it relays for
// others (pumps) and the replies it awaits (mailboxes).
type replicas struct {
	c     Cluster
	mu    sync.Mutex
	boxes map[string]*mailbox
	pumps map[string]context.CancelFunc
	unsub []func()
}

// mailbox queues the replies of one relayed call; the listener that
// fills it must never wait.
type mailbox struct {
	mu     sync.Mutex
	q      []relayReply
	signal chan struct{}
}

func (m *mailbox) put(r relayReply) {
	m.mu.Lock()
	m.q = append(m.q, r)
	m.mu.Unlock()
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

func (m *mailbox) take() []relayReply {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.q
	m.q = nil
	return q
}

// joinCluster makes the server answer other replicas' calls and cancels
// for the tasks it runs, and reload push configs they change.
func (s *Server) joinCluster() {
	c := s.opts.Cluster
	r := &replicas{c: c, boxes: map[string]*mailbox{}, pumps: map[string]context.CancelFunc{}}
	s.cluster = r
	r.unsub = append(r.unsub,
		c.Subscribe(topicCancel, func(_ string, body []byte) { s.cancelHere(a2a.TaskID(body)) }),
		c.Subscribe(topicCall, func(_ string, body []byte) { s.serveCall(body) }),
		c.Subscribe(topicHangup, func(_ string, body []byte) {
			r.mu.Lock()
			stop := r.pumps[string(body)]
			r.mu.Unlock()
			if stop != nil {
				stop()
			}
		}),
		c.Subscribe(topicReply, func(_ string, body []byte) {
			var rep relayReply
			if json.Unmarshal(body, &rep) != nil {
				return
			}
			r.mu.Lock()
			box := r.boxes[rep.Sub]
			r.mu.Unlock()
			if box != nil {
				box.put(rep)
			}
		}),
		c.OnResync(func() {
			// A cancel asked while this replica was not listening is in
			// the store.
			s.owned.goDetached(context.Background(), func(ctx context.Context) {
				ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				ids, err := c.PendingCancels(ctx)
				if err != nil {
					s.log.Warn("reading cancels asked through other replicas failed", "err", err)
					return
				}
				for _, id := range ids {
					s.cancelHere(a2a.TaskID(id))
				}
			})
		}),
	)
	if s.opts.Push != nil {
		r.unsub = append(r.unsub, c.OnPushConfigs(func(id string) {
			s.owned.goDetached(context.Background(), func(ctx context.Context) {
				ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				if err := s.opts.Push.Reload(ctx, a2a.TaskID(id)); err != nil {
					s.log.Warn("reloading push configs another replica changed failed", "task", id, "err", err)
				}
			})
		}))
	}
}

// leaveCluster stops answering other replicas.
func (s *Server) leaveCluster() {
	if s.cluster == nil {
		return
	}
	for _, u := range s.cluster.unsub {
		u()
	}
}

// cancelHere cancels task id if it runs here, as a cancel through this
// replica would: another replica recorded the client's request.
func (s *Server) cancelHere(id a2a.TaskID) {
	if s.run(id) == nil {
		return // another replica's task, or already over
	}
	s.owned.goDetached(context.Background(), func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := s.handler.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); err != nil && !errors.Is(err, a2a.ErrTaskNotCancelable) {
			s.log.Warn("cancel asked through another replica failed", "task", id, "err", err)
		}
	})
}

// remoteOwner returns the live replica, other than this one, that runs
// task id, and the task's agent: the calls that need the run go there.
// ok is false when the task runs here, is over, is unknown or hidden
// from ctx's agent, or when its replica is gone (its lease expired: the
// reaper fails the task, and local handling answers truthfully).
func (s *Server) remoteOwner(ctx context.Context, id a2a.TaskID) (owner, agent string, ok bool) {
	if s.cluster == nil || id == "" || s.run(id) != nil {
		return "", "", false
	}
	t, _, agent, err := s.opts.Tasks.get(ctx, id)
	if err != nil || t.Status.State.Terminal() {
		return "", "", false
	}
	owner, alive, err := s.cluster.c.TaskReplica(ctx, string(id))
	if err != nil || !alive || owner == "" || owner == s.cluster.c.ID() {
		return "", "", false
	}
	return owner, agent, true
}

// newSub names a relayed call uniquely across replicas.
func (s *Server) newSub() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return s.cluster.c.ID() + "/" + hex.EncodeToString(b[:])
}

// relay asks owner to run the call and yields its replies as they come,
// ending with the last one (End set). While the call is quiet it watches
// the task in the store: a task that ended without a word from its
// replica (which died, and was failed by the reaper) ends the call with
// the stored task, so no caller waits forever.
func (s *Server) relay(ctx context.Context, c relayCall) iter.Seq[relayReply] {
	return func(yield func(relayReply) bool) {
		r := s.cluster
		c.Sub = s.newSub()
		box := &mailbox{signal: make(chan struct{}, 1)}
		r.mu.Lock()
		r.boxes[c.Sub] = box
		r.mu.Unlock()
		ended := false
		defer func() {
			r.mu.Lock()
			delete(r.boxes, c.Sub)
			r.mu.Unlock()
			if !ended {
				_ = r.c.Publish(context.WithoutCancel(ctx), topicHangup, c.Sub)
			}
		}()
		body, err := json.Marshal(c)
		if err == nil {
			err = r.c.Publish(ctx, topicCall, string(body))
		}
		if err != nil {
			ended = true
			yield(relayReply{End: true, Error: fmt.Sprintf("reach the replica running task %s: %v", c.Task, err)})
			return
		}
		const quiet = 2 * time.Second
		tick := time.NewTicker(quiet)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-box.signal:
				for _, rep := range box.take() {
					last = time.Now()
					if rep.End {
						ended = true
					}
					if !yield(rep) || rep.End {
						return
					}
				}
			case <-tick.C:
				if time.Since(last) < quiet {
					continue
				}
				t, _, _, err := s.opts.Tasks.get(withAgent(ctx, c.Agent), a2a.TaskID(c.Task))
				if err != nil || !t.Status.State.Terminal() {
					continue
				}
				ended = true
				ev, _ := json.Marshal(a2a.StreamResponse{Event: t})
				if yield(relayReply{Event: ev}) {
					yield(relayReply{End: true})
				}
				return
			}
		}
	}
}

// serveCall runs a call another replica relays, if it is this replica's
// to answer: one pump per call, its events published as they come.
func (s *Server) serveCall(body []byte) {
	var c relayCall
	if json.Unmarshal(body, &c) != nil || c.Owner != s.cluster.c.ID() {
		return
	}
	ctx, cancel := s.owned.detach(context.Background())
	r := s.cluster
	r.mu.Lock()
	r.pumps[c.Sub] = cancel
	r.mu.Unlock()
	s.owned.wg.Go(func() {
		defer func() {
			cancel()
			r.mu.Lock()
			delete(r.pumps, c.Sub)
			r.mu.Unlock()
		}()
		s.pump(withAgent(ctx, c.Agent), c)
	})
}

// pump runs call c here and publishes its events, then its end.
func (s *Server) pump(ctx context.Context, c relayCall) {
	reply := func(rep relayReply) bool {
		rep.Sub = c.Sub
		b, err := json.Marshal(rep)
		if err == nil {
			err = s.cluster.c.Publish(ctx, topicReply, string(b))
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("relaying a task's events to another replica failed", "task", c.Task, "err", err)
		}
		return err == nil
	}
	event := func(ev a2a.Event) bool {
		b, err := json.Marshal(a2a.StreamResponse{Event: ev})
		if err != nil {
			return reply(relayReply{End: true, Error: err.Error()})
		}
		return reply(relayReply{Event: b})
	}
	if s.run(a2a.TaskID(c.Task)) == nil {
		reply(relayReply{End: true, NotRunning: true})
		return
	}
	var events iter.Seq2[a2a.Event, error]
	switch c.Kind {
	case callSubscribe:
		events = s.handler.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(c.Task)})
	case callSend, callStream:
		if c.Answerer != "" {
			ctx = context.WithValue(ctx, answererKey{}, c.Answerer)
		}
		var req a2a.SendMessageRequest
		if err := json.Unmarshal(c.Request, &req); err != nil {
			reply(relayReply{End: true, Error: "bad relayed request: " + err.Error(), Code: "invalid"})
			return
		}
		if c.Kind == callStream {
			events = s.handler.SendStreamingMessage(ctx, &req)
			break
		}
		res, err := s.handler.SendMessage(ctx, &req)
		if err != nil {
			reply(errorReply(err))
			return
		}
		if event(res) {
			reply(relayReply{End: true})
		}
		return
	default:
		reply(relayReply{End: true, Error: "unknown relayed call " + c.Kind, Code: "invalid"})
		return
	}
	for ev, err := range events {
		if err != nil {
			reply(errorReply(err))
			return
		}
		if !event(ev) {
			return
		}
	}
	reply(relayReply{End: true})
}

// errorReply ends a relayed call with err, keeping which protocol error
// it was.
func errorReply(err error) relayReply {
	rep := relayReply{End: true, Error: err.Error()}
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
		rep.Code = "not_found"
	case errors.Is(err, a2a.ErrInvalidParams):
		rep.Code = "invalid"
	case errors.Is(err, a2a.ErrTaskNotCancelable):
		rep.Code = "not_cancelable"
	case errors.Is(err, a2a.ErrUnsupportedOperation):
		rep.Code = "unsupported"
	}
	return rep
}

// replyError is the error a relayed call ended with, as the protocol
// error it was on the replica that ran it.
func replyError(rep relayReply) error {
	var sentinel error
	switch rep.Code {
	case "not_found":
		sentinel = a2a.ErrTaskNotFound
	case "invalid":
		sentinel = a2a.ErrInvalidParams
	case "not_cancelable":
		sentinel = a2a.ErrTaskNotCancelable
	case "unsupported":
		sentinel = a2a.ErrUnsupportedOperation
	}
	if sentinel == nil {
		return errors.New(rep.Error)
	}
	return fmt.Errorf("%s: %w", rep.Error, sentinel)
}

// decodeEvent reads one relayed event.
func decodeEvent(b json.RawMessage) (a2a.Event, error) {
	var sr a2a.StreamResponse
	if err := json.Unmarshal(b, &sr); err != nil {
		return nil, fmt.Errorf("decode a relayed event: %w", err)
	}
	if sr.Event == nil {
		return nil, errors.New("decode a relayed event: empty")
	}
	return sr.Event, nil
}

// relayEvents runs call c on its replica and yields its events, for the
// streaming methods. ok is false if the replica no longer ran the task:
// the caller then answers as if it were alone.
func (s *Server) relayEvents(ctx context.Context, c relayCall, yield func(a2a.Event, error) bool) (ok bool) {
	for rep := range s.relay(ctx, c) {
		switch {
		case rep.NotRunning:
			return false
		case rep.Event != nil:
			ev, err := decodeEvent(rep.Event)
			if !yield(ev, err) || err != nil {
				return true
			}
		case rep.Error != "":
			yield(nil, replyError(rep))
			return true
		}
		if rep.End {
			return true
		}
	}
	return true
}

// cancelRemote cancels a task another replica runs: the request goes in
// the store and to that replica, whose run stops and stores the task
// canceled; this waits for that, up to cancelWait.
func (s *Server) cancelRemote(ctx context.Context, req *a2a.CancelTaskRequest) (task *a2a.Task, handled bool, err error) {
	c := s.cluster.c
	ended := make(chan struct{}, 1)
	unsub := c.OnTaskEnd(func(id string) {
		if id == string(req.ID) {
			select {
			case ended <- struct{}{}:
			default:
			}
		}
	})
	defer unsub()
	owner, alive, err := c.RequestCancel(ctx, string(req.ID))
	if err != nil {
		return nil, true, err
	}
	if owner == "" || !alive || owner == c.ID() {
		return nil, false, nil // over already, or orphaned: answered here
	}
	if err := c.Publish(ctx, topicCancel, string(req.ID)); err != nil {
		return nil, true, err
	}
	deadline := time.NewTimer(s.cancelWait)
	defer deadline.Stop()
	poll := time.NewTicker(time.Second) // in case the notification is lost
	defer poll.Stop()
	for {
		st, gerr := s.opts.Tasks.Get(ctx, req.ID)
		if gerr != nil {
			return nil, true, gerr
		}
		switch state := st.Task.Status.State; {
		case state == a2a.TaskStateCanceled:
			return st.Task, true, nil
		case state.Terminal():
			return nil, true, fmt.Errorf("%w: task %s is already %s", a2a.ErrTaskNotCancelable, req.ID, state)
		}
		select {
		case <-ended:
		case <-poll.C:
		case <-deadline.C:
			return nil, true, fmt.Errorf("the replica running task %s (%s) did not stop it within %v; the cancel stays recorded", req.ID, owner, s.cancelWait)
		case <-ctx.Done():
			return nil, true, ctx.Err()
		}
	}
}

// sendRemote relays a non-streaming message on a task another replica
// runs and returns that replica's answer. handled is false if the
// replica no longer ran the task: the caller answers as if alone.
func (s *Server) sendRemote(ctx context.Context, req *a2a.SendMessageRequest, owner, agent string) (a2a.SendMessageResult, bool, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, true, err
	}
	var res a2a.SendMessageResult
	c := relayCall{Owner: owner, Kind: callSend, Task: string(req.Message.TaskID), Agent: agent, Request: body, Answerer: ownerFrom(ctx)}
	for rep := range s.relay(ctx, c) {
		switch {
		case rep.NotRunning:
			return nil, false, nil
		case rep.Event != nil:
			ev, err := decodeEvent(rep.Event)
			if err != nil {
				return nil, true, err
			}
			if r, ok := ev.(a2a.SendMessageResult); ok {
				res = r
			}
		case rep.Error != "":
			return nil, true, replyError(rep)
		}
	}
	if res == nil {
		if err := ctx.Err(); err != nil {
			return nil, true, err
		}
		return nil, true, fmt.Errorf("the replica running task %s gave no answer", req.Message.TaskID)
	}
	return res, true, nil
}

// streamRemote relays a streaming message on a task another replica runs
// and yields that replica's events; if the replica no longer runs the
// task, a2a-go's own path serves the message here.
func (h dispatcher) streamRemote(ctx context.Context, req *a2a.SendMessageRequest, owner, agent string) iter.Seq2[a2a.Event, error] {
	body, err := json.Marshal(req)
	if err != nil {
		return h.RequestHandler.SendStreamingMessage(ctx, req)
	}
	return func(yield func(a2a.Event, error) bool) {
		c := relayCall{Owner: owner, Kind: callStream, Task: string(req.Message.TaskID), Agent: agent, Request: body, Answerer: ownerFrom(ctx)}
		if h.s.relayEvents(ctx, c, yield) {
			return
		}
		for ev, err := range h.RequestHandler.SendStreamingMessage(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// subscribeRemote yields the live events of a task another replica runs,
// from that replica; if it no longer runs the task, a2a-go's own
// subscription serves it here.
func (h dispatcher) subscribeRemote(ctx context.Context, req *a2a.SubscribeToTaskRequest, owner, agent string) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		c := relayCall{Owner: owner, Kind: callSubscribe, Task: string(req.ID), Agent: agent}
		if h.s.relayEvents(ctx, c, yield) {
			return
		}
		for ev, err := range h.RequestHandler.SubscribeToTask(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}
