package a2aedge

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store"
)

// TestBlockingFastPathMatchesSDK sends the same blocking messages through
// the blocking fast path (sendFast: a run that ends within
// the window is stored and answered by agentd) and through a2a-go's own
// path (the window off), and requires the same answer and the same
// stored task, ids and timestamps aside.
//
// Down a2a-go's path the relay flushes what the model has streamed each
// time it wakes, so where an answer's text parts break depends on the
// scheduler (on a loaded machine "one two t" and "hree"). The fast path
// answers as a2a-go does when the relay drains the whole answer at once:
// a2a-go's side is compared with its artifacts' adjacent text chunks
// joined (joinTextChunks), the fast path's as it is.
func TestBlockingFastPathMatchesSDK(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		meta  map[string]any
	}{
		{name: "an answer", reply: llmtest.Reply{Text: "quick answer"}},
		{name: "an answer in chunks", reply: llmtest.Reply{Text: "one two three", Chunks: 3}},
		{name: "request metadata", reply: llmtest.Reply{Text: "ok"}, meta: map[string]any{"k": "v"}},
		{name: "the model fails", reply: llmtest.Reply{Status: 400, ErrorMessage: "model exploded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, llmtest.Always(tc.reply), fixtureOptions{})
			cl := f.a2aClient("alpha")
			send := func(window time.Duration, join bool) (answer, stored any) {
				f.s.fastWindow = window
				ctx := context.Background()
				res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")), Metadata: tc.meta})
				if err != nil {
					return "error: " + err.Error(), nil
				}
				task, ok := res.(*a2a.Task)
				if !ok {
					t.Fatalf("answer %T", res)
				}
				got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
				if err != nil {
					t.Fatal(err)
				}
				if join {
					joinTextChunks(task)
					joinTextChunks(got)
				}
				return asJSON(t, task), asJSON(t, got)
			}
			fastAnswer, fastStored := send(time.Minute, false)
			sdkAnswer, sdkStored := send(0, true)
			if !reflect.DeepEqual(fastAnswer, sdkAnswer) {
				t.Errorf("answer\n fast %v\n a2a-go %v", fastAnswer, sdkAnswer)
			}
			if !reflect.DeepEqual(fastStored, sdkStored) {
				t.Errorf("stored task\n fast %v\n a2a-go %v", fastStored, sdkStored)
			}
		})
	}
}

// joinTextChunks merges each artifact's runs of adjacent plain text parts
// (no metadata, file name or media type) into one part: the artifact a
// client that appends streamed chunks reads, wherever the chunks broke.
func joinTextChunks(task *a2a.Task) {
	plain := func(p *a2a.Part) bool {
		_, ok := p.Content.(a2a.Text)
		return ok && p.Metadata == nil && p.Filename == "" && p.MediaType == ""
	}
	for _, art := range task.Artifacts {
		var parts a2a.ContentParts
		for _, p := range art.Parts {
			if n := len(parts); n > 0 && plain(p) && plain(parts[n-1]) {
				parts[n-1] = a2a.NewTextPart(parts[n-1].Text() + p.Text())
				continue
			}
			parts = append(parts, p)
		}
		art.Parts = parts
	}
}

func TestJoinTextChunks(t *testing.T) {
	data := &a2a.Part{Content: a2a.Data{Value: map[string]any{"k": 1}}}
	typed := &a2a.Part{Content: a2a.Text("<b>"), MediaType: "text/html"}
	task := &a2a.Task{Artifacts: []*a2a.Artifact{
		{Parts: a2a.ContentParts{a2a.NewTextPart("one two t"), a2a.NewTextPart("hree")}},
		{Parts: a2a.ContentParts{a2a.NewTextPart("a"), data, a2a.NewTextPart("b"), a2a.NewTextPart("c"), typed, a2a.NewTextPart("d")}},
	}}
	joinTextChunks(task)
	want := []string{`[{"text":"one two three"}]`, `[{"text":"a"},{"data":{"k":1}},{"text":"bc"},{"text":"\u003cb\u003e","mediaType":"text/html"},{"text":"d"}]`}
	for i, art := range task.Artifacts {
		if got := asJSON(t, art.Parts); got != want[i] {
			t.Errorf("artifact %d: %s, want %s", i, got, want[i])
		}
	}
}

// asJSON is v's JSON with what differs between two runs of the same send
// (ids, timestamps) replaced by placeholders (normalize).
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return normalize(b)
}

// TestBlockingLongRunMatchesSDK covers the blocking fast path's other
// end: a run that outlasts the window, which the fast path hands to
// a2a-go's execution (handOff). Down both paths (the window short, and
// off), while the blocking send waits, another request finds the task
// by its context, gets it working, and then either subscribes to it
// until it ends, or cancels it; the blocking send's answer, the stored
// task, the subscription's last event and the cancel's answer must be
// the same, ids and timestamps aside, and the run must have run once
// (one user message and at most one reply in the session).
func TestBlockingLongRunMatchesSDK(t *testing.T) {
	for _, then := range []string{"subscribe", "cancel"} {
		t.Run(then, func(t *testing.T) {
			reply := llmtest.Reply{Text: "a slow answer in four chunks", Chunks: 4, Delay: 150 * time.Millisecond}
			if then == "cancel" {
				// About 20 s of streaming, unless cancelled.
				reply = llmtest.Reply{Text: strings.Repeat("x", 1000), Chunks: 1000, Delay: 20 * time.Millisecond}
			}
			f := newFixture(t, llmtest.Always(reply), fixtureOptions{})
			cl := f.a2aClient("alpha")
			ctx := context.Background()
			type outcome struct{ answer, stored, other string }
			send := func(window time.Duration) outcome {
				f.s.fastWindow = window
				msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
				msg.ContextID = a2a.NewContextID()
				type result struct {
					res a2a.SendMessageResult
					err error
				}
				done := make(chan result, 1)
				go func() {
					res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
					done <- result{res, err}
				}()
				// The task is found by its context while the send waits.
				var running *a2a.Task
				for deadline := time.Now().Add(10 * time.Second); running == nil; {
					list, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: msg.ContextID})
					if err != nil {
						t.Fatal(err)
					}
					if len(list.Tasks) > 0 {
						running = list.Tasks[0]
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the task never showed in its context")
					}
					time.Sleep(5 * time.Millisecond)
				}
				got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: running.ID})
				if err != nil || got.Status.State != a2a.TaskStateWorking {
					t.Fatalf("GetTask while the send waits: %+v, %v", got, err)
				}
				var other string
				switch then {
				case "subscribe":
					var last a2a.Event
					n := 0
					for ev, err := range cl.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: running.ID}) {
						if err != nil {
							t.Fatalf("subscribe while the send waits: %v", err)
						}
						if n == 0 {
							if st, ok := ev.(*a2a.Task); !ok || st.ID != running.ID {
								t.Fatalf("subscription's first event %T %+v", ev, ev)
							}
						}
						n++
						last = ev
					}
					if n < 2 {
						t.Fatalf("the subscription saw %d events, want the task and its end", n)
					}
					other = asJSON(t, last)
				case "cancel":
					c, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: running.ID})
					if err != nil || c.Status.State != a2a.TaskStateCanceled {
						t.Fatalf("cancel while the send waits: %+v, %v", c, err)
					}
					// The artifact holds what had streamed: how much is
					// timing, so only the state and status are compared.
					other = asJSON(t, c.Status)
				}
				var r result
				select {
				case r = <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("the blocking send did not answer")
				}
				if r.err != nil {
					t.Fatalf("send: %v", r.err)
				}
				task, ok := r.res.(*a2a.Task)
				if !ok || task.ID != running.ID {
					t.Fatalf("answer %T %+v, want task %s", r.res, r.res, running.ID)
				}
				stored, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
				if err != nil {
					t.Fatal(err)
				}
				// A run the fast path started defers its new session to
				// its first write; cancelled before one, it stores the
				// session with the user's message as it returns, which
				// may come a moment after the cancel's answer.
				msgs, err := f.db.Messages(ctx, task.ContextID)
				for deadline := time.Now().Add(5 * time.Second); errors.Is(err, store.ErrNotFound) && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
					msgs, err = f.db.Messages(ctx, task.ContextID)
				}
				if err != nil || len(msgs) == 0 || len(msgs) > 2 || msgs[0].Role != "user" {
					t.Errorf("session messages %+v (%v), want the user's and at most one reply: one run", msgs, err)
				}
				if then == "cancel" {
					return outcome{asJSON(t, task.Status), asJSON(t, stored.Status), other}
				}
				return outcome{asJSON(t, task), asJSON(t, stored), other}
			}
			fast := send(20 * time.Millisecond)
			sdk := send(0)
			if fast != sdk {
				t.Errorf("fast path (handed off)\n answer %s\n stored %s\n %s %s\na2a-go\n answer %s\n stored %s\n %s %s",
					fast.answer, fast.stored, then, fast.other, sdk.answer, sdk.stored, then, sdk.other)
			}
			if f.s.Running() != 0 {
				// Runs end when their tasks do; wait for the cancelled ones.
				deadline := time.Now().Add(10 * time.Second)
				for f.s.Running() != 0 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
			}
			f.s.mu.Lock()
			left := len(f.s.handoffs)
			f.s.mu.Unlock()
			if left != 0 {
				t.Errorf("%d runs still on offer after both sends", left)
			}
		})
	}
}
