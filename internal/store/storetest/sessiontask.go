package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// A turn's last messages and the task it answered, in one transaction
// (store.SessionTaskWriter, which every backend implements).
var sessionTaskTests = map[string]func(t *testing.T, s suite){
	// Both writes land: the messages follow the session's others, the
	// session's UpdatedAt moves up, the task is stored with Version 1.
	"BothStored": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		w := sessionTaskWriter(t, st)
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a", CreatedAt: at(0), UpdatedAt: at(0)},
			store.Message{Role: "user", Content: raw(t, map[string]string{"text": "hi"})}), "CreateSession")
		want := task(t, "t1", "completed", true)
		before := time.Now()
		out, err := w.AppendMessagesCreateTask(ctx, "s1", []store.Message{{Role: "assistant", Content: raw(t, map[string]string{"text": "ok"})}}, want)
		ok(t, err, "AppendMessagesCreateTask")
		after := time.Now()
		if len(out) != 1 || out[0].Seq != 2 || out[0].SessionID != "s1" || out[0].Role != "assistant" {
			t.Errorf("returned messages = %+v, want one assistant message with Seq 2", out)
		}
		msgs, err := st.Messages(ctx, "s1")
		ok(t, err, "Messages")
		if len(msgs) != 2 || msgs[1].Seq != 2 || msgs[1].Role != "assistant" {
			t.Fatalf("session messages = %+v, want user then assistant", msgs)
		}
		checkJSON(t, "stored reply", msgs[1].Content, raw(t, map[string]string{"text": "ok"}))
		sess, err := st.GetSession(ctx, "s1")
		ok(t, err, "GetSession")
		checkRecent(t, "session UpdatedAt", sess.UpdatedAt, before, after)
		got, err := st.GetTask(ctx, "t1")
		ok(t, err, "GetTask")
		want.Version = 1
		checkTask(t, got, want)
	},
	"AbsentSession": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		_, err := sessionTaskWriter(t, st).AppendMessagesCreateTask(ctx, "nope", []store.Message{{Role: "assistant", Content: raw(t, "x")}}, task(t, "t1", "completed", true))
		isErr(t, err, store.ErrNotFound, "AppendMessagesCreateTask on an absent session")
		if ids := allTaskIDs(t, st); len(ids) != 0 {
			t.Errorf("tasks after a failed write: %v, want none", ids)
		}
	},
	"TakenTaskID": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a"}, store.Message{Role: "user", Content: raw(t, "hi")}), "CreateSession")
		_, err := st.CreateTask(ctx, task(t, "t1", "working", false))
		ok(t, err, "CreateTask")
		_, err = sessionTaskWriter(t, st).AppendMessagesCreateTask(ctx, "s1", []store.Message{{Role: "assistant", Content: raw(t, "x")}}, task(t, "t1", "completed", true))
		isErr(t, err, store.ErrExists, "AppendMessagesCreateTask with a taken task ID")
		msgs, err := st.Messages(ctx, "s1")
		ok(t, err, "Messages")
		if len(msgs) != 1 {
			t.Errorf("session has %d messages after a failed write, want the 1 it had", len(msgs))
		}
		got, err := st.GetTask(ctx, "t1")
		ok(t, err, "GetTask")
		if got.State != "working" || got.Version != 1 {
			t.Errorf("the existing task changed: %s v%d", got.State, got.Version)
		}
	},
	"Canceled": func(t *testing.T, s suite) {
		st := s.store(t)
		ok(t, st.CreateSession(t.Context(), store.Session{ID: "s1", Agent: "a"}), "CreateSession")
		_, err := sessionTaskWriter(t, st).AppendMessagesCreateTask(canceled(t), "s1", []store.Message{{Role: "assistant", Content: raw(t, "x")}}, task(t, "t1", "completed", true))
		isErr(t, err, context.Canceled, "AppendMessagesCreateTask with a canceled context")
		if ids := allTaskIDs(t, st); len(ids) != 0 {
			t.Errorf("tasks after a canceled write: %v", ids)
		}
		if msgs, err := st.Messages(t.Context(), "s1"); err != nil || len(msgs) != 0 {
			t.Errorf("messages after a canceled write: %d (%v)", len(msgs), err)
		}
	},
	// A whole first turn: the session with its messages and the task.
	"CreateWithTask": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		w := sessionTaskWriter(t, st)
		want := task(t, "t1", "completed", true)
		before := time.Now()
		ok(t, w.CreateSessionWithTask(ctx, store.Session{ID: "s1", Agent: "a", Title: "hi", Origin: "a2a", Principal: "p"},
			[]store.Message{{Role: "user", Content: raw(t, "hi")}, {Role: "assistant", Content: raw(t, "ok")}}, want), "CreateSessionWithTask")
		after := time.Now()
		sess, err := st.GetSession(ctx, "s1")
		ok(t, err, "GetSession")
		if sess.Agent != "a" || sess.Title != "hi" || sess.Origin != "a2a" || sess.Principal != "p" {
			t.Errorf("session = %+v", sess)
		}
		checkRecent(t, "session CreatedAt", sess.CreatedAt, before, after)
		msgs, err := st.Messages(ctx, "s1")
		ok(t, err, "Messages")
		if len(msgs) != 2 || msgs[0].Seq != 1 || msgs[1].Seq != 2 || msgs[0].Role != "user" || msgs[1].Role != "assistant" {
			t.Errorf("messages = %+v", msgs)
		}
		// The next append continues the Seqs.
		more, err := st.AppendMessages(ctx, "s1", []store.Message{{Role: "user", Content: raw(t, "again")}})
		ok(t, err, "AppendMessages")
		if len(more) != 1 || more[0].Seq != 3 {
			t.Errorf("next append got %+v, want Seq 3", more)
		}
		got, err := st.GetTask(ctx, "t1")
		ok(t, err, "GetTask")
		want.Version = 1
		checkTask(t, got, want)
	},
	"CreateWithTakenIDs": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		w := sessionTaskWriter(t, st)
		ok(t, st.CreateSession(ctx, store.Session{ID: "taken", Agent: "a"}), "CreateSession")
		_, err := st.CreateTask(ctx, task(t, "taken", "working", false))
		ok(t, err, "CreateTask")
		msgs := []store.Message{{Role: "user", Content: raw(t, "hi")}}
		isErr(t, w.CreateSessionWithTask(ctx, store.Session{ID: "taken", Agent: "b"}, msgs, task(t, "new", "completed", true)),
			store.ErrExists, "CreateSessionWithTask with a taken session ID")
		isErr(t, w.CreateSessionWithTask(ctx, store.Session{ID: "new", Agent: "b"}, msgs, task(t, "taken", "completed", true)),
			store.ErrExists, "CreateSessionWithTask with a taken task ID")
		if ids := allTaskIDs(t, st); len(ids) != 1 || ids[0] != "taken" {
			t.Errorf("tasks after failed writes: %v, want [taken]", ids)
		}
		if _, err := st.GetSession(ctx, "new"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the session of a failed write exists: %v", err)
		}
		if m, err := st.Messages(ctx, "taken"); err != nil || len(m) != 0 {
			t.Errorf("the taken session got messages: %d (%v)", len(m), err)
		}
	},
}

// sessionTaskWriter is st as a store.SessionTaskWriter; every backend
// must be one.
func sessionTaskWriter(t *testing.T, st store.Store) store.SessionTaskWriter {
	t.Helper()
	w, isW := st.(store.SessionTaskWriter)
	if !isW {
		t.Fatalf("%T does not implement store.SessionTaskWriter", st)
	}
	return w
}
