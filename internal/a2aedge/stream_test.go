package a2aedge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestStreamFirstEventIsTheStoredTask: when a stream's first event, the
// new task, reaches the client, the task is already what every reader
// sees: durably stored (other replicas, a restart's FailRunningTasks),
// got and listed through the API, and a2a-go knows its run: a cancel or
// a subscription sent the moment the first event arrives works.
func TestStreamFirstEventIsTheStoredTask(t *testing.T) {
	f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		// About 20 s of streaming, unless cancelled.
		return llmtest.Reply{Text: strings.Repeat("x", 1000), Chunks: 1000, Delay: 20 * time.Millisecond}
	}, fixtureOptions{})
	cl := f.a2aClient("alpha")
	ctx := context.Background()
	for _, then := range []string{"cancel", "subscribe"} {
		t.Run(then, func(t *testing.T) {
			var task *a2a.Task
			var last a2a.TaskState
			for ev, err := range cl.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("slow"))}) {
				if err != nil {
					t.Fatal(err)
				}
				if task == nil {
					var ok bool
					if task, ok = ev.(*a2a.Task); !ok {
						t.Fatalf("first event %T, want the task", ev)
					}
					if task.Status.State != a2a.TaskStateWorking {
						t.Fatalf("first event's state %s", task.Status.State)
					}
					rec, err := f.db.GetTask(ctx, string(task.ID))
					if err != nil || rec.State != string(a2a.TaskStateWorking) || rec.Agent != "alpha" {
						t.Fatalf("stored task when its first event came: %+v, %v", rec, err)
					}
					got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
					if err != nil || got.Status.State != a2a.TaskStateWorking || len(got.History) != 1 || got.History[0].ID != task.History[0].ID {
						t.Fatalf("GetTask when the first event came: %+v, %v", got, err)
					}
					list, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{})
					if err != nil || !slices.ContainsFunc(list.Tasks, func(l *a2a.Task) bool { return l.ID == task.ID }) {
						t.Fatalf("ListTasks when the first event came: %+v, %v", list, err)
					}
					switch then {
					case "cancel":
						c, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
						if err != nil || c.Status.State != a2a.TaskStateCanceled {
							t.Fatalf("cancel right after the first event: %+v, %v", c, err)
						}
					case "subscribe":
						n := 0
						for ev, err := range cl.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
							if err != nil {
								t.Fatalf("subscribe right after the first event: %v", err)
							}
							if n == 0 {
								if st, ok := ev.(*a2a.Task); !ok || st.ID != task.ID {
									t.Fatalf("subscription's first event %T %+v", ev, ev)
								}
							}
							if n++; n == 2 {
								break // a live event of the run came too
							}
						}
						if _, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
					last = st.Status.State
				}
			}
			if last != a2a.TaskStateCanceled {
				t.Fatalf("stream ended in %s, want canceled", last)
			}
			f.waitTask(task.ID, a2a.TaskStateCanceled)
		})
	}
}

// TestStreamSlowClient: a client that stops reading holds the stream's
// writer back (the SSE writer blocks, then a2a-go's execution, then the
// run's relay) rather than losing events: once it reads again it gets
// every chunk of the answer, in order. The answer is several megabytes,
// more than the sockets buffer, so the server does block.
func TestStreamSlowClient(t *testing.T) {
	var want strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&want, "%05d%s|", i, strings.Repeat("y", 2000))
	}
	f := newFixture(t, func(*llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: want.String(), Chunks: 4000}
	}, fixtureOptions{})
	cl := f.a2aClient("alpha")
	var got strings.Builder
	var final a2a.TaskState
	paused := false
	for ev, err := range cl.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"))}) {
		if err != nil {
			t.Fatal(err)
		}
		if !paused {
			paused = true
			time.Sleep(time.Second)
		}
		switch v := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range v.Artifact.Parts {
				got.WriteString(p.Text())
			}
		case *a2a.TaskStatusUpdateEvent:
			final = v.Status.State
		}
	}
	if final != a2a.TaskStateCompleted {
		t.Fatalf("final state %s", final)
	}
	if got.String() != want.String() {
		t.Fatalf("streamed %d bytes of the %d-byte answer, or out of order", got.Len(), want.Len())
	}
}
