package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// pushConfig builds a config whose payload names it, with a secret so that
// a backend that drops or mangles fields shows.
func pushConfig(t *testing.T, taskID, id string) store.PushConfig {
	return store.PushConfig{TaskID: taskID, ID: id, Config: raw(t, map[string]any{
		"taskId": taskID, "id": id, "url": "https://hooks.example.com/" + id, "token": "tok-" + id,
		"authentication": map[string]string{"scheme": "Bearer", "credentials": "secret-" + id},
	})}
}

// pushIDs returns "task/id" of every config, in order.
func pushIDs(cs []store.PushConfig) []string {
	return keys(cs, func(c store.PushConfig) string { return c.TaskID + "/" + c.ID })
}

// checkPushConfig compares every field but CreatedAt.
func checkPushConfig(t *testing.T, got, want store.PushConfig) {
	t.Helper()
	if got.TaskID != want.TaskID || got.ID != want.ID {
		t.Errorf("push config = %s/%s, want %s/%s", got.TaskID, got.ID, want.TaskID, want.ID)
	}
	checkJSON(t, "push config "+want.TaskID+"/"+want.ID, got.Config, want.Config)
}

var pushTests = map[string]func(t *testing.T, s suite){
	"PutGet": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		want := pushConfig(t, "t1", "c1")
		before := time.Now()
		ok(t, st.PutPushConfig(ctx, want), "PutPushConfig")
		after := time.Now()
		got, err := st.GetPushConfig(ctx, "t1", "c1")
		ok(t, err, "GetPushConfig")
		checkPushConfig(t, got, want)
		checkRecent(t, "CreatedAt", got.CreatedAt, before, after)

		withTime := pushConfig(t, "t1", "c2")
		withTime.CreatedAt = at(3)
		ok(t, st.PutPushConfig(ctx, withTime), "PutPushConfig with CreatedAt")
		got, err = st.GetPushConfig(ctx, "t1", "c2")
		ok(t, err, "GetPushConfig(c2)")
		checkTime(t, "CreatedAt", got.CreatedAt, at(3))
	},
	"GetMissing": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.PutPushConfig(ctx, pushConfig(t, "t1", "c1")), "PutPushConfig")
		for _, c := range []struct{ task, id string }{{"t1", "c2"}, {"t2", "c1"}, {"", ""}} {
			_, err := st.GetPushConfig(ctx, c.task, c.id)
			isErr(t, err, store.ErrNotFound, "GetPushConfig(%q, %q)", c.task, c.id)
		}
	},
	"PutRejectsEmptyKeys": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for _, c := range []store.PushConfig{pushConfig(t, "", "c"), pushConfig(t, "t", "")} {
			if err := st.PutPushConfig(ctx, c); err == nil {
				t.Errorf("PutPushConfig(%q, %q) accepted an empty key", c.TaskID, c.ID)
			}
		}
		all, err := st.AllPushConfigs(ctx)
		ok(t, err, "AllPushConfigs")
		equalStrings(t, "stored configs", pushIDs(all), nil)
	},
	// Config ids are unique per task only: two tasks may both have "c".
	"KeyedByTaskAndID": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		a, b := pushConfig(t, "ta", "c"), pushConfig(t, "tb", "c")
		ok(t, st.PutPushConfig(ctx, a), "PutPushConfig(ta/c)")
		ok(t, st.PutPushConfig(ctx, b), "PutPushConfig(tb/c)")
		for _, want := range []store.PushConfig{a, b} {
			got, err := st.GetPushConfig(ctx, want.TaskID, "c")
			ok(t, err, "GetPushConfig(%s/c)", want.TaskID)
			checkPushConfig(t, got, want)
		}
		ok(t, st.DeletePushConfig(ctx, "ta", "c"), "DeletePushConfig(ta/c)")
		got, err := st.GetPushConfig(ctx, "tb", "c")
		ok(t, err, "GetPushConfig(tb/c) after deleting ta/c")
		checkPushConfig(t, got, b)
	},
	"PutReplaces": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for i, id := range []string{"c1", "c2", "c3"} {
			c := pushConfig(t, "t", id)
			c.CreatedAt = at(i)
			ok(t, st.PutPushConfig(ctx, c), "PutPushConfig(%s)", id)
		}
		repl := store.PushConfig{TaskID: "t", ID: "c1", Config: raw(t, map[string]string{"url": "https://new.example.com"}), CreatedAt: at(9)}
		ok(t, st.PutPushConfig(ctx, repl), "PutPushConfig replacing c1")
		got, err := st.GetPushConfig(ctx, "t", "c1")
		ok(t, err, "GetPushConfig(c1)")
		checkPushConfig(t, got, repl)
		checkTime(t, "CreatedAt after replace", got.CreatedAt, at(0))
		list, err := st.ListPushConfigs(ctx, "t")
		ok(t, err, "ListPushConfigs")
		// The replaced config keeps its place.
		equalStrings(t, "configs", pushIDs(list), []string{"t/c1", "t/c2", "t/c3"})
	},
	"ListOrderAndScope": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		// Put out of CreatedAt order, with a tie (b and d at minute 1)
		// that must come in put order, and another task interleaved.
		for _, c := range []struct {
			task, id string
			min      int
		}{{"t", "c", 2}, {"u", "x", 0}, {"t", "b", 1}, {"t", "a", 3}, {"t", "d", 1}, {"u", "y", 5}} {
			pc := pushConfig(t, c.task, c.id)
			pc.CreatedAt = at(c.min)
			ok(t, st.PutPushConfig(ctx, pc), "PutPushConfig(%s/%s)", c.task, c.id)
		}
		list, err := st.ListPushConfigs(ctx, "t")
		ok(t, err, "ListPushConfigs(t)")
		equalStrings(t, "configs of t", pushIDs(list), []string{"t/b", "t/d", "t/c", "t/a"})
		for _, c := range list {
			checkPushConfig(t, c, pushConfig(t, "t", c.ID))
		}
		list, err = st.ListPushConfigs(ctx, "none")
		ok(t, err, "ListPushConfigs(none)")
		equalStrings(t, "configs of a task without any", pushIDs(list), nil)
		all, err := st.AllPushConfigs(ctx)
		ok(t, err, "AllPushConfigs")
		equalStrings(t, "all configs", pushIDs(all), []string{"u/x", "t/b", "t/d", "t/c", "t/a", "u/y"})
	},
	"Delete": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for _, id := range []string{"c1", "c2"} {
			ok(t, st.PutPushConfig(ctx, pushConfig(t, "t", id)), "PutPushConfig(%s)", id)
		}
		ok(t, st.DeletePushConfig(ctx, "t", "c1"), "DeletePushConfig(c1)")
		isErr(t, st.DeletePushConfig(ctx, "t", "c1"), store.ErrNotFound, "second DeletePushConfig(c1)")
		isErr(t, st.DeletePushConfig(ctx, "other", "c2"), store.ErrNotFound, "DeletePushConfig of another task's id")
		_, err := st.GetPushConfig(ctx, "t", "c1")
		isErr(t, err, store.ErrNotFound, "GetPushConfig(c1) after delete")
		list, err := st.ListPushConfigs(ctx, "t")
		ok(t, err, "ListPushConfigs")
		equalStrings(t, "configs", pushIDs(list), []string{"t/c2"})
	},
	"DeleteAllOfTask": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for _, c := range []store.PushConfig{pushConfig(t, "t", "a"), pushConfig(t, "t", "b"), pushConfig(t, "u", "a")} {
			ok(t, st.PutPushConfig(ctx, c), "PutPushConfig(%s/%s)", c.TaskID, c.ID)
		}
		n, err := st.DeletePushConfigs(ctx, "t")
		ok(t, err, "DeletePushConfigs(t)")
		if n != 2 {
			t.Errorf("DeletePushConfigs(t) = %d, want 2", n)
		}
		n, err = st.DeletePushConfigs(ctx, "t")
		ok(t, err, "second DeletePushConfigs(t)")
		if n != 0 {
			t.Errorf("second DeletePushConfigs(t) = %d, want 0", n)
		}
		all, err := st.AllPushConfigs(ctx)
		ok(t, err, "AllPushConfigs")
		equalStrings(t, "remaining configs", pushIDs(all), []string{"u/a"})
	},
	// A webhook may be registered before its task is stored.
	"NoTaskNeeded": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.PutPushConfig(ctx, pushConfig(t, "not-yet", "c")), "PutPushConfig for a task not stored")
		_, err := st.CreateTask(ctx, task(t, "not-yet", "submitted", false))
		ok(t, err, "CreateTask after its config")
		list, err := st.ListPushConfigs(ctx, "not-yet")
		ok(t, err, "ListPushConfigs")
		equalStrings(t, "configs", pushIDs(list), []string{"not-yet/c"})
	},
	// PruneTasks deletes the configs of the tasks it deletes, and only
	// those.
	"PruneCascades": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for i, x := range []struct {
			id       string
			terminal bool
		}{{"p1", true}, {"n1", false}, {"p2", true}, {"p3", true}} {
			tk := task(t, x.id, "s", x.terminal)
			tk.UpdatedAt = at(i)
			_, err := st.CreateTask(ctx, tk)
			ok(t, err, "CreateTask(%s)", x.id)
			for j := range 2 {
				ok(t, st.PutPushConfig(ctx, pushConfig(t, x.id, fmt.Sprint("c", j))), "PutPushConfig(%s)", x.id)
			}
		}
		ok(t, st.PutPushConfig(ctx, pushConfig(t, "unstored", "c0")), "PutPushConfig(unstored)")
		n, err := st.PruneTasks(ctx, 2) // p1 and p2 go
		ok(t, err, "PruneTasks(2)")
		if n != 2 {
			t.Errorf("PruneTasks(2) = %d, want 2 (tasks, not configs)", n)
		}
		all, err := st.AllPushConfigs(ctx)
		ok(t, err, "AllPushConfigs")
		got := pushIDs(all)
		slices.Sort(got)
		equalStrings(t, "remaining configs", got, []string{"n1/c0", "n1/c1", "p3/c0", "p3/c1", "unstored/c0"})
	},
}
