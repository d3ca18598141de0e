package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

var agentTests = map[string]func(t *testing.T, s suite){
	"PutGet": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		want := store.Agent{Name: "writer", Manifest: raw(t, map[string]any{"model": "m", "tools": []string{"a", "b"}})}
		before := time.Now()
		ok(t, st.PutAgent(ctx, want), "PutAgent")
		after := time.Now()
		got, err := st.GetAgent(ctx, "writer")
		ok(t, err, "GetAgent")
		if got.Name != want.Name {
			t.Errorf("Name = %q, want %q", got.Name, want.Name)
		}
		checkJSON(t, "Manifest", got.Manifest, want.Manifest)
		checkRecent(t, "CreatedAt", got.CreatedAt, before, after)
		checkRecent(t, "UpdatedAt", got.UpdatedAt, before, after)
	},
	"PutReplaces": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.PutAgent(ctx, store.Agent{Name: "a", Manifest: raw(t, map[string]int{"v": 1}), CreatedAt: at(0), UpdatedAt: at(0)}), "first PutAgent")
		ok(t, st.PutAgent(ctx, store.Agent{Name: "a", Manifest: raw(t, map[string]int{"v": 2}), CreatedAt: at(5), UpdatedAt: at(5)}), "second PutAgent")
		got, err := st.GetAgent(ctx, "a")
		ok(t, err, "GetAgent")
		checkJSON(t, "Manifest", got.Manifest, raw(t, map[string]int{"v": 2}))
		checkTime(t, "CreatedAt", got.CreatedAt, at(0))
		checkTime(t, "UpdatedAt", got.UpdatedAt, at(5))
		all, err := st.ListAgents(ctx)
		ok(t, err, "ListAgents")
		if len(all) != 1 {
			t.Errorf("ListAgents returned %d agents after replacing one, want 1", len(all))
		}
	},
	"GetMissing": func(t *testing.T, s suite) {
		_, err := s.store(t).GetAgent(t.Context(), "nobody")
		isErr(t, err, store.ErrNotFound, "GetAgent(nobody)")
	},
	"List": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		got, err := st.ListAgents(ctx)
		ok(t, err, "ListAgents on empty store")
		if len(got) != 0 {
			t.Fatalf("ListAgents on empty store = %d agents, want 0", len(got))
		}
		names := []string{"charlie", "alpha", "bravo"}
		for i, n := range names {
			ok(t, st.PutAgent(ctx, store.Agent{Name: n, Manifest: raw(t, map[string]int{"i": i})}), "PutAgent(%s)", n)
		}
		got, err = st.ListAgents(ctx)
		ok(t, err, "ListAgents")
		gotNames := keys(got, func(a store.Agent) string { return a.Name })
		slices.Sort(gotNames)
		equalStrings(t, "agent names", gotNames, []string{"alpha", "bravo", "charlie"})
		for _, a := range got {
			i := slices.Index(names, a.Name)
			checkJSON(t, a.Name+" manifest", a.Manifest, raw(t, map[string]int{"i": i}))
		}
	},
	"Delete": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.PutAgent(ctx, store.Agent{Name: "a", Manifest: raw(t, 1)}), "PutAgent(a)")
		ok(t, st.PutAgent(ctx, store.Agent{Name: "b", Manifest: raw(t, 2)}), "PutAgent(b)")
		ok(t, st.DeleteAgent(ctx, "a"), "DeleteAgent(a)")
		_, err := st.GetAgent(ctx, "a")
		isErr(t, err, store.ErrNotFound, "GetAgent after delete")
		isErr(t, st.DeleteAgent(ctx, "a"), store.ErrNotFound, "second DeleteAgent(a)")
		got, err := st.ListAgents(ctx)
		ok(t, err, "ListAgents")
		equalStrings(t, "remaining agents", keys(got, func(a store.Agent) string { return a.Name }), []string{"b"})
	},
}
