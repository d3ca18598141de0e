package a2aedge

import (
	"context"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/eventqueue"
)

// queueBound is how many events one reader of a task may have waiting
// before the task's writer blocks, as in a2a-go's in-memory queues.
const queueBound = 32

// eventQueues is the eventqueue.Manager a2a-go hands a task's events
// through, from the execution that applies them to each stream that
// relays them. It keeps a2a-go's in-memory manager's semantics (every
// reader of a task gets every event written after it joined, in order;
// a writer waits while a reader has queueBound events waiting; Destroy
// lets readers drain what they have, then closes them) without its
// broker goroutine per task: a task's queues share a mutex instead. An
// open stream costs one goroutine less, and its stack.
type eventQueues struct {
	mu     sync.Mutex
	topics map[a2a.TaskID]*topic
}

var _ eventqueue.Manager = (*eventQueues)(nil)

func newEventQueues() *eventQueues {
	return &eventQueues{topics: map[a2a.TaskID]*topic{}}
}

// topic is one task's queues.
type topic struct {
	mu     sync.Mutex
	queues map[*taskQueue]struct{}
}

// taskQueue is one reader's or writer's connection to a topic; a2a-go
// uses each as one or the other.
type taskQueue struct {
	t *topic
	// Guarded by t.mu.
	buf    []*eventqueue.Message
	closed bool
	// ready is signalled when buf gains an event or the queue closes;
	// space when buf loses one or a queue of the topic closes.
	ready, space chan struct{}
	// done is closed with the queue: a writer waiting for space stops.
	done chan struct{}
}

// CreateReader implements eventqueue.Manager.
func (m *eventQueues) CreateReader(ctx context.Context, taskID a2a.TaskID) (eventqueue.Reader, error) {
	return m.join(taskID), nil
}

// CreateWriter implements eventqueue.Manager.
func (m *eventQueues) CreateWriter(ctx context.Context, taskID a2a.TaskID) (eventqueue.Writer, error) {
	return m.join(taskID), nil
}

func (m *eventQueues) join(taskID a2a.TaskID) *taskQueue {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.topics[taskID]
	if t == nil {
		t = &topic{queues: map[*taskQueue]struct{}{}}
		m.topics[taskID] = t
	}
	q := &taskQueue{t: t, ready: make(chan struct{}, 1), space: make(chan struct{}, 1), done: make(chan struct{})}
	t.mu.Lock()
	t.queues[q] = struct{}{}
	t.mu.Unlock()
	return q
}

// Destroy implements eventqueue.Manager: the task's queues close, their
// readers get what is waiting and then eventqueue.ErrQueueClosed.
func (m *eventQueues) Destroy(ctx context.Context, taskID a2a.TaskID) error {
	m.mu.Lock()
	t := m.topics[taskID]
	delete(m.topics, taskID)
	m.mu.Unlock()
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for q := range t.queues {
		q.closeLocked()
	}
	clear(t.queues)
	return nil
}

// closeLocked closes q, keeping what it holds for its reader.
func (q *taskQueue) closeLocked() {
	if q.closed {
		return
	}
	q.closed = true
	close(q.done)
	signal(q.ready)
	// A writer waiting for this queue's space goes on.
	signal(q.space)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Write implements eventqueue.Writer: msg goes to every other queue of
// the task, waiting while one of them is full.
func (q *taskQueue) Write(ctx context.Context, msg *eventqueue.Message) error {
	t := q.t
	t.mu.Lock()
	if q.closed {
		t.mu.Unlock()
		return eventqueue.ErrQueueClosed
	}
	targets := make([]*taskQueue, 0, len(t.queues))
	for r := range t.queues {
		if r != q {
			targets = append(targets, r)
		}
	}
	for _, r := range targets {
		for len(r.buf) >= queueBound && !r.closed {
			t.mu.Unlock()
			select {
			case <-r.space:
			case <-q.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			t.mu.Lock()
			if q.closed {
				t.mu.Unlock()
				return eventqueue.ErrQueueClosed
			}
		}
		if r.closed {
			continue // left, or the task's queues were destroyed
		}
		r.buf = append(r.buf, msg)
		signal(r.ready)
	}
	t.mu.Unlock()
	return nil
}

// Read implements eventqueue.Reader.
func (q *taskQueue) Read(ctx context.Context) (*eventqueue.Message, error) {
	t := q.t
	for {
		t.mu.Lock()
		if len(q.buf) > 0 {
			msg := q.buf[0]
			q.buf[0] = nil
			q.buf = q.buf[1:]
			if len(q.buf) == 0 {
				q.buf = nil // the next event starts a small array again
			}
			t.mu.Unlock()
			signal(q.space)
			return msg, nil
		}
		closed := q.closed
		t.mu.Unlock()
		if closed {
			return nil, eventqueue.ErrQueueClosed
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close implements eventqueue.Reader and eventqueue.Writer: q leaves its
// task and drops what it holds.
func (q *taskQueue) Close() error {
	t := q.t
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.queues, q)
	q.closeLocked()
	q.buf = nil
	return nil
}
