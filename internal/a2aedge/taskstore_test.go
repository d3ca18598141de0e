package a2aedge

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/sqlite"
)

func openStores(t *testing.T, path string, opts TaskStoreOptions) (*sqlite.DB, *TaskStore) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := OpenTaskStore(context.Background(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close(); db.Close() })
	return db, ts
}

func newTask(id string, state a2a.TaskState) *a2a.Task {
	t := &a2a.Task{ID: a2a.TaskID(id), ContextID: "ctx-" + id, Status: a2a.TaskStatus{State: state}}
	t.History = []*a2a.Message{a2a.NewMessageForTask(a2a.MessageRoleUser, t, a2a.NewTextPart("q "+id))}
	return t
}

func TestTaskStoreVersionsAndScope(t *testing.T) {
	_, ts := openStores(t, filepath.Join(t.TempDir(), "db"), TaskStoreOptions{})
	ctx := withAgent(context.Background(), "alpha")
	task := newTask("t1", a2a.TaskStateWorking)
	v, err := ts.Create(ctx, task)
	if err != nil || v != 1 {
		t.Fatalf("create: %v %v", v, err)
	}
	if _, err := ts.Create(ctx, task); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	upd := *task
	upd.Artifacts = []*a2a.Artifact{{ID: "a", Parts: a2a.ContentParts{a2a.NewTextPart("partial")}}}
	v2, err := ts.Update(ctx, &taskstore.UpdateRequest{Task: &upd, PrevVersion: v})
	if err != nil || v2 != 2 {
		t.Fatalf("update: %v %v", v2, err)
	}
	if _, err := ts.Update(ctx, &taskstore.UpdateRequest{Task: &upd, PrevVersion: v}); !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Fatalf("stale update: %v", err)
	}
	got, err := ts.Get(ctx, "t1")
	if err != nil || got.Version != 2 || len(got.Task.Artifacts) != 1 {
		t.Fatalf("get: %+v %v", got, err)
	}
	// Callers may append to what Get returns without touching the store.
	got.Task.History = append(got.Task.History, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("x")))
	again, _ := ts.Get(ctx, "t1")
	if len(again.Task.History) != 1 {
		t.Fatalf("Get shares its history slice: %d messages", len(again.Task.History))
	}
	if _, err := ts.Get(withAgent(context.Background(), "beta"), "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("another agent's endpoint sees the task: %v", err)
	}
	if _, err := ts.Get(context.Background(), "t1"); err != nil {
		t.Fatalf("unscoped get: %v", err)
	}
	if _, err := ts.Get(ctx, "nope"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("missing task: %v", err)
	}
	done := upd
	done.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted}
	if _, err := ts.Update(ctx, &taskstore.UpdateRequest{Task: &done, PrevVersion: v2}); err != nil {
		t.Fatal(err)
	}
	ts.mu.Lock()
	_, live := ts.live["t1"]
	ts.mu.Unlock()
	if live {
		t.Fatal("terminal task still held in memory")
	}
	final, err := ts.Get(ctx, "t1")
	if err != nil || final.Task.Status.State != a2a.TaskStateCompleted || len(final.Task.Artifacts) != 1 {
		t.Fatalf("stored final state: %+v %v", final, err)
	}
}

// TestTaskStoreRestart: what a client sees after the process dies with
// tasks in flight.
func TestTaskStoreRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := OpenTaskStore(context.Background(), db, TaskStoreOptions{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := withAgent(context.Background(), "alpha")
	for _, tc := range []struct {
		id    string
		state a2a.TaskState
	}{{"working", a2a.TaskStateWorking}, {"asking", a2a.TaskStateInputRequired}, {"done", a2a.TaskStateCompleted}} {
		if _, err := ts.Create(ctx, newTask(tc.id, tc.state)); err != nil {
			t.Fatal(err)
		}
	}
	// Streamed progress within the flush interval stays in memory only.
	w, _ := ts.Get(ctx, "working")
	w.Task.Artifacts = []*a2a.Artifact{{ID: "a", Parts: a2a.ContentParts{a2a.NewTextPart("lost")}}}
	if _, err := ts.Update(ctx, &taskstore.UpdateRequest{Task: w.Task, PrevVersion: w.Version}); err != nil {
		t.Fatal(err)
	}
	// "Crash": drop the process state without closing cleanly.
	ts.Close()
	db.Close()

	db2, ts2 := openStores(t, path, TaskStoreOptions{})
	n, err := ts2.FailRunningTasks(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("failed %d tasks: %v", n, err)
	}
	for _, tc := range []struct {
		id, reason string
		state      a2a.TaskState
	}{
		{"working", "while this task was working", a2a.TaskStateFailed},
		{"asking", "while this task was waiting for input", a2a.TaskStateFailed},
		{"done", "", a2a.TaskStateCompleted},
	} {
		got, err := ts2.Get(context.Background(), a2a.TaskID(tc.id))
		if err != nil {
			t.Fatal(err)
		}
		if got.Task.Status.State != tc.state {
			t.Errorf("%s: state %s, want %s", tc.id, got.Task.Status.State, tc.state)
		}
		if tc.reason != "" && !strings.Contains(got.Task.Status.Message.Parts[0].Text(), tc.reason) {
			t.Errorf("%s: reason %q", tc.id, got.Task.Status.Message.Parts[0].Text())
		}
		if len(got.Task.History) == 0 {
			t.Errorf("%s: history lost", tc.id)
		}
		rec, _ := db2.GetTask(context.Background(), tc.id)
		if !rec.Terminal {
			t.Errorf("%s: stored as non-terminal", tc.id)
		}
	}
}

func TestTaskStoreBounded(t *testing.T) {
	db, ts := openStores(t, filepath.Join(t.TempDir(), "db"), TaskStoreOptions{MaxTasks: 3})
	ctx := context.Background()
	if _, err := ts.Create(ctx, newTask("running", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		time.Sleep(2 * time.Millisecond) // distinct update times: eviction is oldest first
		if _, err := ts.Create(ctx, newTask(fmt.Sprintf("done%d", i), a2a.TaskStateCompleted)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, total, err := db.ListTasks(ctx, store.TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if total == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks stored, want 3", total)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, id := range []string{"running", "done4", "done5"} {
		if _, err := ts.Get(ctx, a2a.TaskID(id)); err != nil {
			t.Errorf("%s evicted: %v", id, err)
		}
	}
	if _, err := ts.Get(ctx, "done0"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("oldest terminal task kept: %v", err)
	}
}

// TestTaskStoreListStatus: an unset status filter, however a client
// spells it, lists every state; a value that is no state is refused.
func TestTaskStoreListStatus(t *testing.T) {
	_, ts := openStores(t, filepath.Join(t.TempDir(), "a.db"), TaskStoreOptions{})
	ctx := context.Background()
	for _, task := range []*a2a.Task{newTask("t1", a2a.TaskStateCompleted), newTask("t2", a2a.TaskStateWorking)} {
		if _, err := ts.Create(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		status  a2a.TaskState
		want    int
		wantErr string
	}{
		{"", 2, ""},
		{"TASK_STATE_UNSPECIFIED", 2, ""},
		{"UNRECOGNIZED", 2, ""},
		{a2a.TaskStateWorking, 1, ""},
		{a2a.TaskStateCompleted, 1, ""},
		{a2a.TaskStateRejected, 0, ""},
		{"completed", 0, `status: "completed" is not a task state`},
		{"TASK_STATE_DONE", 0, `status: "TASK_STATE_DONE" is not a task state`},
	} {
		t.Run(string(tc.status), func(t *testing.T) {
			res, err := ts.List(ctx, &a2a.ListTasksRequest{Status: tc.status})
			if tc.wantErr != "" {
				if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want invalid params %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || res.TotalSize != tc.want || len(res.Tasks) != tc.want {
				t.Fatalf("got %+v, %v; want %d tasks", res, err, tc.want)
			}
		})
	}
}

// downStore is a store.TaskStore whose updates fail with
// store.ErrUnavailable while down is set: a database outage longer than
// the store's own retries.
type downStore struct {
	store.TaskStore
	down atomic.Bool
}

func (s *downStore) UpdateTask(ctx context.Context, t store.Task, prev int64) (int64, error) {
	if s.down.Load() {
		return 0, fmt.Errorf("update task: %w", store.ErrUnavailable)
	}
	return s.TaskStore.UpdateTask(ctx, t, prev)
}

// TestTaskStoreSettlesAfterOutage checks that a task whose end comes
// during an outage is not left working: Update succeeds (a2a-go's
// pipeline goes on), this process answers the end from memory, and the
// end is stored once the store answers again.
func TestTaskStoreSettlesAfterOutage(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ds := &downStore{TaskStore: db}
	ts, err := OpenTaskStore(context.Background(), ds, TaskStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	ctx := withAgent(context.Background(), "alpha")
	task := newTask("t1", a2a.TaskStateWorking)
	v, err := ts.Create(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	ds.down.Store(true)
	done := *task
	done.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, task, a2a.NewTextPart("store unavailable, retry"))}
	if _, err := ts.Update(ctx, &taskstore.UpdateRequest{Task: &done, PrevVersion: v}); err != nil {
		t.Fatalf("the end of a task during an outage: %v", err)
	}
	got, err := ts.Get(ctx, "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("this process answers %v, %v; want the failed task", got, err)
	}
	if rec, _ := db.GetTask(context.Background(), "t1"); rec.Terminal {
		t.Fatal("stored while the store was down")
	}
	ds.down.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, err := db.GetTask(context.Background(), "t1")
		if err == nil && rec.Terminal && rec.State == string(a2a.TaskStateFailed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the store came back the task is stored %q", rec.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
