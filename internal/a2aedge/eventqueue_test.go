package a2aedge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/eventqueue"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// The eventQueues tests are a2a-go v2.4.0's tests of its in-memory
// manager (eventqueue/*_in_memory_impl_test.go), whose semantics
// eventQueues keeps, with queueBound in place of its buffer size option.

func queuePair(t *testing.T, m *eventQueues, tid a2a.TaskID) (eventqueue.Reader, eventqueue.Writer) {
	t.Helper()
	r, err := m.CreateReader(t.Context(), tid)
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.CreateWriter(t.Context(), tid)
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

func writeIDs(t *testing.T, w eventqueue.Writer, ids ...string) {
	t.Helper()
	for i, id := range ids {
		if err := w.Write(t.Context(), &eventqueue.Message{Event: &a2a.Message{ID: id}, TaskVersion: taskstore.TaskVersion(i + 1)}); err != nil {
			t.Fatalf("Write(%s): %v", id, err)
		}
	}
}

func readID(t *testing.T, r eventqueue.Reader) string {
	t.Helper()
	msg, err := r.Read(t.Context())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return msg.Event.(*a2a.Message).ID
}

// fill writes queueBound events, which the reader leaves waiting.
func fill(t *testing.T, w eventqueue.Writer) {
	t.Helper()
	for i := range queueBound {
		writeIDs(t, w, fmt.Sprint("fill", i))
	}
}

func TestEventQueues(t *testing.T) {
	t.Run("write then read, in order, with versions", func(t *testing.T) {
		r, w := queuePair(t, newEventQueues(), a2a.NewTaskID())
		writeIDs(t, w, "a", "b")
		for i, want := range []string{"a", "b"} {
			msg, err := r.Read(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got := msg.Event.(*a2a.Message).ID; got != want || msg.TaskVersion != taskstore.TaskVersion(i+1) {
				t.Fatalf("read %s v%d, want %s v%d", got, msg.TaskVersion, want, i+1)
			}
		}
	})
	t.Run("destroy lets readers drain", func(t *testing.T) {
		m, tid := newEventQueues(), a2a.NewTaskID()
		r, w := queuePair(t, m, tid)
		writeIDs(t, w, "a", "b")
		if err := m.Destroy(t.Context(), tid); err != nil {
			t.Fatal(err)
		}
		if a, b := readID(t, r), readID(t, r); a != "a" || b != "b" {
			t.Fatalf("drained %s, %s", a, b)
		}
		if _, err := r.Read(t.Context()); !errors.Is(err, eventqueue.ErrQueueClosed) {
			t.Fatalf("Read after drain: %v, want ErrQueueClosed", err)
		}
		if err := w.Write(t.Context(), &eventqueue.Message{Event: &a2a.Message{ID: "c"}}); !errors.Is(err, eventqueue.ErrQueueClosed) {
			t.Fatalf("Write after destroy: %v, want ErrQueueClosed", err)
		}
	})
	t.Run("read waits for a write", func(t *testing.T) {
		r, w := queuePair(t, newEventQueues(), a2a.NewTaskID())
		got := make(chan string)
		go func() { got <- readID(t, r) }()
		select {
		case id := <-got:
			t.Fatalf("read %s before any write", id)
		case <-time.After(15 * time.Millisecond):
		}
		writeIDs(t, w, "a")
		if id := <-got; id != "a" {
			t.Fatalf("read %s", id)
		}
	})
	t.Run("a full reader holds the writer back", func(t *testing.T) {
		r, w := queuePair(t, newEventQueues(), a2a.NewTaskID())
		fill(t, w)
		done := make(chan struct{})
		go func() {
			writeIDs(t, w, "last")
			close(done)
		}()
		select {
		case <-done:
			t.Fatal("write to a full reader did not wait")
		case <-time.After(15 * time.Millisecond):
		}
		if id := readID(t, r); id != "fill0" {
			t.Fatalf("read %s", id)
		}
		<-done
	})
	t.Run("write without readers does not wait", func(t *testing.T) {
		w, err := newEventQueues().CreateWriter(t.Context(), a2a.NewTaskID())
		if err != nil {
			t.Fatal(err)
		}
		for range 2 * queueBound {
			writeIDs(t, w, "x")
		}
	})
	t.Run("a closed reader gets nothing more", func(t *testing.T) {
		r, w := queuePair(t, newEventQueues(), a2a.NewTaskID())
		writeIDs(t, w, "before")
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		writeIDs(t, w, "after")
		if msg, err := r.Read(t.Context()); !errors.Is(err, eventqueue.ErrQueueClosed) {
			t.Fatalf("Read after Close: %v, %v; want ErrQueueClosed", msg, err)
		}
	})
	t.Run("a waiting write ends with its context", func(t *testing.T) {
		_, w := queuePair(t, newEventQueues(), a2a.NewTaskID())
		fill(t, w)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := w.Write(ctx, &eventqueue.Message{Event: &a2a.Message{ID: "x"}}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Write: %v, want context.Canceled", err)
		}
	})
	t.Run("a waiting write ends when the queues are destroyed", func(t *testing.T) {
		m, tid := newEventQueues(), a2a.NewTaskID()
		_, w := queuePair(t, m, tid)
		fill(t, w)
		errc := make(chan error)
		go func() { errc <- w.Write(t.Context(), &eventqueue.Message{Event: &a2a.Message{ID: "x"}}) }()
		select {
		case err := <-errc:
			t.Fatalf("write to a full reader did not wait: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if err := m.Destroy(t.Context(), tid); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; !errors.Is(err, eventqueue.ErrQueueClosed) {
			t.Fatalf("Write: %v, want ErrQueueClosed", err)
		}
	})
	t.Run("a waiting write goes on when the full reader leaves", func(t *testing.T) {
		r, w := queuePair(t, newEventQueues(), a2a.NewTaskID())
		fill(t, w)
		errc := make(chan error)
		go func() { errc <- w.Write(t.Context(), &eventqueue.Message{Event: &a2a.Message{ID: "x"}}) }()
		time.Sleep(10 * time.Millisecond)
		r.Close()
		if err := <-errc; err != nil {
			t.Fatalf("Write: %v", err)
		}
	})
	t.Run("concurrent readers of a task all get its events", func(t *testing.T) {
		m := newEventQueues()
		const readers, tasks = 100, 10
		var (
			wg sync.WaitGroup
			mu sync.Mutex
			by = map[a2a.TaskID][]eventqueue.Reader{}
		)
		for i := range readers {
			wg.Go(func() {
				tid := a2a.TaskID(fmt.Sprint("task-", i%tasks))
				r, err := m.CreateReader(t.Context(), tid)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				by[tid] = append(by[tid], r)
				mu.Unlock()
			})
		}
		wg.Wait()
		for tid, rs := range by {
			w, err := m.CreateWriter(t.Context(), tid)
			if err != nil {
				t.Fatal(err)
			}
			writeIDs(t, w, string(tid))
			for _, r := range rs {
				if id := readID(t, r); id != string(tid) {
					t.Fatalf("reader of %s read %s", tid, id)
				}
			}
		}
		if len(m.topics) != tasks {
			t.Fatalf("%d topics, want %d", len(m.topics), tasks)
		}
	})
}
