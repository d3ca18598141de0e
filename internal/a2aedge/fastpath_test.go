package a2aedge

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestFastPathTaskStoredOnce: a blocking send's task is stored once,
// finished, with the model's reply in the session, whether the run ends
// within the fast path's window (the kernel stores the task with the
// reply) or after it (a2a-go takes the run over and stores the task):
// never a second task for the same message.
func TestFastPathTaskStoredOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window time.Duration
		reply  llmtest.Reply
	}{
		{name: "within the window", window: time.Second, reply: llmtest.Reply{Text: "quick answer"}},
		{name: "past the window", window: 20 * time.Millisecond, reply: llmtest.Reply{Text: "slow answer", Chunks: 2, Delay: 150 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, llmtest.Always(tc.reply), fixtureOptions{})
			f.s.fastWindow = tc.window
			cl := f.a2aClient("alpha")
			ctx := context.Background()
			res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
			if err != nil {
				t.Fatal(err)
			}
			task, ok := res.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted || ResultText(task) != tc.reply.Text {
				t.Fatalf("send answered %T %+v", res, res)
			}
			got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || len(task.Artifacts) != 1 ||
				got.Artifacts[0].ID != task.Artifacts[0].ID || ResultText(got) != tc.reply.Text {
				t.Errorf("stored task %+v differs from the answer %+v", got, task)
			}
			list, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID})
			if err != nil {
				t.Fatal(err)
			}
			if list.TotalSize != 1 {
				t.Errorf("%d tasks in the context, want 1", list.TotalSize)
			}
			msgs, err := f.db.Messages(ctx, task.ContextID)
			if err != nil || len(msgs) != 2 || msgs[1].Role != "assistant" {
				t.Errorf("session messages %+v (%v), want the user's and the reply", msgs, err)
			}
		})
	}
}

// TestHandOffsClaimTheirOwnRuns: concurrent blocking sends that all
// outlast the window are each answered with the task of their own run
// (the model echoes each message's text), each stored once, and no run is
// left on offer: the hand-off links a run to the execution of its own
// message only.
func TestHandOffsClaimTheirOwnRuns(t *testing.T) {
	f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "echo " + r.LastUserText(), Chunks: 2, Delay: 100 * time.Millisecond}
	}, fixtureOptions{})
	f.s.fastWindow = 10 * time.Millisecond
	cl := f.a2aClient("alpha")
	ctx := context.Background()
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			text := fmt.Sprintf("message %d", i)
			res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))})
			if err != nil {
				errs <- err
				return
			}
			task, ok := res.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted || ResultText(task) != "echo "+text {
				errs <- fmt.Errorf("send of %q answered %T %+v", text, res, res)
				return
			}
			list, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID})
			if err != nil || list.TotalSize != 1 {
				errs <- fmt.Errorf("tasks in the context of %q: %+v, %v; want 1", text, list, err)
				return
			}
			errs <- nil
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	f.s.mu.Lock()
	left := len(f.s.handoffs)
	f.s.mu.Unlock()
	if left != 0 {
		t.Errorf("%d runs still on offer", left)
	}
}
