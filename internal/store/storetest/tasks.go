package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// task builds a task whose Data records its state.
func task(t *testing.T, id, state string, terminal bool) store.Task {
	return store.Task{
		ID: id, ContextID: "ctx-" + id, Agent: "agent", State: state, Terminal: terminal, Owner: "owner",
		Data: raw(t, map[string]string{"id": id, "state": state}),
	}
}

// taskIDs returns the IDs of ts in order.
func taskIDs(ts []store.Task) []string {
	return keys(ts, func(x store.Task) string { return x.ID })
}

// allTaskIDs lists every stored task's ID, sorted.
func allTaskIDs(t *testing.T, st store.Store) []string {
	t.Helper()
	ts, _, err := st.ListTasks(t.Context(), store.TaskFilter{})
	ok(t, err, "ListTasks")
	ids := taskIDs(ts)
	slices.Sort(ids)
	return ids
}

// checkTask compares every field but the timestamps.
func checkTask(t *testing.T, got, want store.Task) {
	t.Helper()
	if got.ID != want.ID || got.ContextID != want.ContextID || got.Agent != want.Agent || got.State != want.State ||
		got.Terminal != want.Terminal || got.Owner != want.Owner || got.Version != want.Version {
		t.Errorf("task = {ID:%q ContextID:%q Agent:%q State:%q Terminal:%v Owner:%q Version:%d}, want {%q %q %q %q %v %q %d}",
			got.ID, got.ContextID, got.Agent, got.State, got.Terminal, got.Owner, got.Version,
			want.ID, want.ContextID, want.Agent, want.State, want.Terminal, want.Owner, want.Version)
	}
	checkJSON(t, "task "+want.ID+" Data", got.Data, want.Data)
}

var taskTests = map[string]func(t *testing.T, s suite){
	"CreateGet": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for _, want := range []store.Task{task(t, "t1", "working", false), task(t, "t2", "completed", true)} {
			want.CreatedAt, want.UpdatedAt = at(0), at(1)
			want.Version = 42 // ignored: the store assigns versions
			v, err := st.CreateTask(ctx, want)
			ok(t, err, "CreateTask(%s)", want.ID)
			if v != 1 {
				t.Errorf("CreateTask(%s) version = %d, want 1", want.ID, v)
			}
			got, err := st.GetTask(ctx, want.ID)
			ok(t, err, "GetTask(%s)", want.ID)
			want.Version = 1
			checkTask(t, got, want)
			checkTime(t, "CreatedAt", got.CreatedAt, at(0))
			checkTime(t, "UpdatedAt", got.UpdatedAt, at(1))
		}
	},
	"CreateDefaultsTimes": func(t *testing.T, s suite) {
		st := s.store(t)
		before := time.Now()
		_, err := st.CreateTask(t.Context(), task(t, "t1", "submitted", false))
		after := time.Now()
		ok(t, err, "CreateTask")
		got, err := st.GetTask(t.Context(), "t1")
		ok(t, err, "GetTask")
		checkRecent(t, "CreatedAt", got.CreatedAt, before, after)
		checkRecent(t, "UpdatedAt", got.UpdatedAt, before, after)
	},
	"CreateDuplicate": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		_, err := st.CreateTask(ctx, task(t, "t1", "working", false))
		ok(t, err, "CreateTask")
		_, err = st.CreateTask(ctx, task(t, "t1", "completed", true))
		isErr(t, err, store.ErrExists, "CreateTask with a taken ID")
		got, err := st.GetTask(ctx, "t1")
		ok(t, err, "GetTask")
		if got.State != "working" || got.Version != 1 {
			t.Errorf("rejected CreateTask changed the task: state %q version %d", got.State, got.Version)
		}
	},
	"GetMissing": func(t *testing.T, s suite) {
		_, err := s.store(t).GetTask(t.Context(), "nope")
		isErr(t, err, store.ErrNotFound, "GetTask(nope)")
	},
	"Update": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		orig := task(t, "t1", "submitted", false)
		orig.CreatedAt, orig.UpdatedAt = at(0), at(0)
		_, err := st.CreateTask(ctx, orig)
		ok(t, err, "CreateTask")

		next := task(t, "t1", "working", false)
		next.ContextID, next.Agent, next.Owner = "ctx-new", "agent-new", "owner-new"
		next.UpdatedAt = at(3)
		v, err := st.UpdateTask(ctx, next, 1)
		ok(t, err, "UpdateTask with the current version")
		if v != 2 {
			t.Errorf("UpdateTask version = %d, want 2", v)
		}
		got, err := st.GetTask(ctx, "t1")
		ok(t, err, "GetTask")
		next.Version = 2
		checkTask(t, got, next)
		checkTime(t, "CreatedAt after update", got.CreatedAt, at(0))
		checkTime(t, "UpdatedAt after update", got.UpdatedAt, at(3))

		stale := task(t, "t1", "canceled", true)
		_, err = st.UpdateTask(ctx, stale, 1)
		isErr(t, err, store.ErrConflict, "UpdateTask with a stale version")
		_, err = st.UpdateTask(ctx, stale, 7)
		isErr(t, err, store.ErrConflict, "UpdateTask with a future version")
		got, err = st.GetTask(ctx, "t1")
		ok(t, err, "GetTask")
		checkTask(t, got, next)

		done := task(t, "t1", "completed", true)
		before := time.Now()
		v, err = st.UpdateTask(ctx, done, 0)
		after := time.Now()
		ok(t, err, "UpdateTask without a version check")
		if v != 3 {
			t.Errorf("unchecked UpdateTask version = %d, want 3", v)
		}
		got, err = st.GetTask(ctx, "t1")
		ok(t, err, "GetTask")
		done.Version = 3
		checkTask(t, got, done)
		checkRecent(t, "default UpdatedAt", got.UpdatedAt, before, after)
	},
	"UpdateMissing": func(t *testing.T, s suite) {
		st := s.store(t)
		for _, prev := range []int64{0, 1} {
			_, err := st.UpdateTask(t.Context(), task(t, "ghost", "working", false), prev)
			isErr(t, err, store.ErrNotFound, "UpdateTask(ghost, %d)", prev)
		}
		_, err := st.GetTask(t.Context(), "ghost")
		isErr(t, err, store.ErrNotFound, "GetTask after UpdateTask of a missing task")
	},
	"UpdateRace": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		_, err := st.CreateTask(ctx, task(t, "t1", "submitted", false))
		ok(t, err, "CreateTask")
		const writers = 8
		start := make(chan struct{})
		errs := make([]error, writers)
		versions := make([]int64, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				<-start
				versions[w], errs[w] = st.UpdateTask(ctx, task(t, "t1", fmt.Sprintf("working-%d", w), false), 1)
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Errorf("writers %d and %d both updated from version 1", winner, w)
				}
				winner = w
				if versions[w] != 2 {
					t.Errorf("winner's version = %d, want 2", versions[w])
				}
			case errors.Is(err, store.ErrConflict):
			default:
				t.Errorf("writer %d: got %v, want nil or ErrConflict", w, err)
			}
		}
		if winner < 0 {
			t.Fatal("no writer won")
		}
		got, err := st.GetTask(ctx, "t1")
		ok(t, err, "GetTask")
		if want := fmt.Sprintf("working-%d", winner); got.State != want || got.Version != 2 {
			t.Errorf("stored state %q version %d, want %q version 2", got.State, got.Version, want)
		}
	},
	"List": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for i, x := range []struct {
			id, ctxID, agent, state, owner string
			terminal                       bool
		}{
			{"t1", "c1", "a", "working", "o1", false},
			{"t2", "c1", "a", "completed", "o1", true},
			{"t3", "c2", "b", "working", "o2", false},
			{"t4", "c2", "a", "failed", "o2", true},
			{"t5", "c3", "b", "completed", "o1", true},
		} {
			tk := store.Task{ID: x.id, ContextID: x.ctxID, Agent: x.agent, State: x.state, Owner: x.owner, Terminal: x.terminal,
				Data: raw(t, map[string]string{"id": x.id}), CreatedAt: at(10 - i), UpdatedAt: at(i + 1)}
			_, err := st.CreateTask(ctx, tk)
			ok(t, err, "CreateTask(%s)", x.id)
		}
		for _, c := range []struct {
			name  string
			f     store.TaskFilter
			want  []string
			total int
		}{
			{"All", store.TaskFilter{}, []string{"t5", "t4", "t3", "t2", "t1"}, 5},
			{"ContextID", store.TaskFilter{ContextID: "c1"}, []string{"t2", "t1"}, 2},
			{"Agent", store.TaskFilter{Agent: "a"}, []string{"t4", "t2", "t1"}, 3},
			{"State", store.TaskFilter{State: "working"}, []string{"t3", "t1"}, 2},
			{"Owner", store.TaskFilter{Owner: "o1"}, []string{"t5", "t2", "t1"}, 3},
			{"UpdatedAfterIsExclusive", store.TaskFilter{UpdatedAfter: at(3)}, []string{"t5", "t4"}, 2},
			{"Combined", store.TaskFilter{Agent: "a", Owner: "o2"}, []string{"t4"}, 1},
			{"NoMatch", store.TaskFilter{ContextID: "c9"}, nil, 0},
			{"Limit", store.TaskFilter{Limit: 2}, []string{"t5", "t4"}, 5},
			{"LimitOffset", store.TaskFilter{Limit: 2, Offset: 2}, []string{"t3", "t2"}, 5},
			{"OffsetOnly", store.TaskFilter{Offset: 4}, []string{"t1"}, 5},
			{"OffsetPastEnd", store.TaskFilter{Offset: 10}, nil, 5},
			{"FilterLimit", store.TaskFilter{Agent: "a", Limit: 1, Offset: 1}, []string{"t2"}, 3},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, total, err := st.ListTasks(ctx, c.f)
				ok(t, err, "ListTasks(%+v)", c.f)
				equalStrings(t, "tasks", taskIDs(got), c.want)
				if total != c.total {
					t.Errorf("total = %d, want %d", total, c.total)
				}
				for _, tk := range got {
					checkJSON(t, tk.ID+" Data", tk.Data, raw(t, map[string]string{"id": tk.ID}))
				}
			})
		}
	},
	"Prune": func(t *testing.T, s suite) {
		// n* are non-terminal, p* terminal. UpdatedAt grows with the
		// listed order while CreatedAt shrinks, so pruning by the wrong
		// timestamp deletes the wrong tasks.
		tasks := []struct {
			id       string
			terminal bool
		}{{"n1", false}, {"p1", true}, {"p2", true}, {"n2", false}, {"p3", true}, {"p4", true}}
		for _, c := range []struct {
			keep    int
			deleted int
			remain  []string
		}{
			{keep: 10, deleted: 0, remain: []string{"n1", "n2", "p1", "p2", "p3", "p4"}},
			{keep: 6, deleted: 0, remain: []string{"n1", "n2", "p1", "p2", "p3", "p4"}},
			{keep: 5, deleted: 1, remain: []string{"n1", "n2", "p2", "p3", "p4"}},
			{keep: 3, deleted: 3, remain: []string{"n1", "n2", "p4"}},
			{keep: 2, deleted: 4, remain: []string{"n1", "n2"}},
			{keep: 0, deleted: 4, remain: []string{"n1", "n2"}},
		} {
			t.Run(fmt.Sprintf("Keep%d", c.keep), func(t *testing.T) {
				t.Parallel()
				st := s.store(t)
				ctx := t.Context()
				for i, x := range tasks {
					tk := task(t, x.id, "s", x.terminal)
					tk.CreatedAt, tk.UpdatedAt = at(100-i), at(i)
					_, err := st.CreateTask(ctx, tk)
					ok(t, err, "CreateTask(%s)", x.id)
				}
				n, err := st.PruneTasks(ctx, c.keep)
				ok(t, err, "PruneTasks(%d)", c.keep)
				if n != c.deleted {
					t.Errorf("PruneTasks(%d) = %d, want %d", c.keep, n, c.deleted)
				}
				equalStrings(t, "remaining tasks", allTaskIDs(t, st), c.remain)
			})
		}
	},
	"PruneNeverDeletesRunning": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for i := range 4 {
			tk := task(t, fmt.Sprintf("r%d", i), "working", false)
			tk.UpdatedAt = at(i)
			_, err := st.CreateTask(ctx, tk)
			ok(t, err, "CreateTask")
		}
		n, err := st.PruneTasks(ctx, 0)
		ok(t, err, "PruneTasks(0)")
		if n != 0 {
			t.Errorf("PruneTasks(0) deleted %d non-terminal tasks", n)
		}
		equalStrings(t, "remaining tasks", allTaskIDs(t, st), []string{"r0", "r1", "r2", "r3"})
	},
	"FailRunning": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		stored := map[string]store.Task{}
		for _, tk := range []store.Task{
			task(t, "r1", "working", false),
			task(t, "r2", "input-required", false),
			task(t, "d1", "completed", true),
		} {
			tk.CreatedAt, tk.UpdatedAt = at(0), at(0)
			_, err := st.CreateTask(ctx, tk)
			ok(t, err, "CreateTask(%s)", tk.ID)
			tk.Version = 1
			stored[tk.ID] = tk
		}
		// Give r2 a second version so that the callback must see the
		// current record, not the first one.
		r2 := stored["r2"]
		r2.Data = raw(t, map[string]string{"id": "r2", "state": "input-required", "note": "v2"})
		_, err := st.UpdateTask(ctx, r2, 1)
		ok(t, err, "UpdateTask(r2)")
		r2.Version = 2
		stored["r2"] = r2

		var mu sync.Mutex
		var seen []string
		before := time.Now()
		n, err := st.FailRunningTasks(ctx, func(tk store.Task) (json.RawMessage, string) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, tk.ID)
			if want, found := stored[tk.ID]; !found {
				t.Errorf("callback got unknown task %q", tk.ID)
			} else {
				checkTask(t, tk, want)
			}
			return raw(t, map[string]string{"id": tk.ID, "state": "failed", "was": tk.State}), "failed"
		})
		after := time.Now()
		ok(t, err, "FailRunningTasks")
		if n != 2 {
			t.Errorf("FailRunningTasks = %d, want 2", n)
		}
		slices.Sort(seen)
		equalStrings(t, "tasks given to the callback", seen, []string{"r1", "r2"})
		for _, id := range []string{"r1", "r2"} {
			got, err := st.GetTask(ctx, id)
			ok(t, err, "GetTask(%s)", id)
			want := stored[id]
			want.State, want.Terminal, want.Version = "failed", true, want.Version+1
			want.Data = raw(t, map[string]string{"id": id, "state": "failed", "was": stored[id].State})
			checkTask(t, got, want)
			checkRecent(t, id+" UpdatedAt", got.UpdatedAt, before, after)
		}
		d1, err := st.GetTask(ctx, "d1")
		ok(t, err, "GetTask(d1)")
		checkTask(t, d1, stored["d1"])
		checkTime(t, "d1 UpdatedAt", d1.UpdatedAt, at(0))

		n, err = st.FailRunningTasks(ctx, func(tk store.Task) (json.RawMessage, string) {
			t.Errorf("second FailRunningTasks called back for %q", tk.ID)
			return tk.Data, tk.State
		})
		ok(t, err, "second FailRunningTasks")
		if n != 0 {
			t.Errorf("second FailRunningTasks = %d, want 0", n)
		}
	},
}
