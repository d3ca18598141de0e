package a2aedge

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestBlockingFastPathMatchesSDK sends the same blocking messages through
// the blocking fast path (fastHandler.SendMessage: a run that ends within
// the window is stored and answered by agentd) and through a2a-go's own
// path (the window off), and requires the same answer and the same
// stored task, ids and timestamps aside.
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
			send := func(window time.Duration) (answer, stored any) {
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
				return asJSON(t, task), asJSON(t, got)
			}
			fastAnswer, fastStored := send(time.Minute)
			sdkAnswer, sdkStored := send(0)
			if !reflect.DeepEqual(fastAnswer, sdkAnswer) {
				t.Errorf("answer\n fast %v\n a2a-go %v", fastAnswer, sdkAnswer)
			}
			if !reflect.DeepEqual(fastStored, sdkStored) {
				t.Errorf("stored task\n fast %v\n a2a-go %v", fastStored, sdkStored)
			}
		})
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
