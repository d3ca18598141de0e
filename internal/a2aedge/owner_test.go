package a2aedge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestCloseStopsRuns: a run outlives the request that started it, but
// not the server: Close cancels it and returns once it has ended, and a
// run started after Close stops at once.
func TestCloseStopsRuns(t *testing.T) {
	f := newFixture(t, llmtest.Always(llmtest.Reply{Text: strings.Repeat("x", 1000), Chunks: 1000, Delay: 20 * time.Millisecond}), fixtureOptions{})
	cl := f.a2aClient("alpha")
	res, err := cl.SendMessage(context.Background(), &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("slow")), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	// The request is over; its run goes on (about 20 s of streaming).
	if task.Status.State != a2a.TaskStateWorking || f.s.run(task.ID) == nil {
		t.Fatalf("after the request: state %s, run %v", task.Status.State, f.s.run(task.ID))
	}

	closed := make(chan struct{})
	go func() {
		f.s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the run within 5 s")
	}
	if r := f.s.run(task.ID); r != nil {
		t.Errorf("run %s still registered after Close", task.ID)
	}

	// Work started after Close gets a context already cancelled.
	ctx, cancel := f.s.owned.detach(context.Background())
	defer cancel()
	if ctx.Err() == nil {
		t.Error("a context detached after Close is not cancelled")
	}
}
