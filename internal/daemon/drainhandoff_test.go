package daemon

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestDrainHandsTheConversationOn: a replica drained as SIGTERM drains it
// (its Serve's context ends) with a run still at its model past
// [cluster] drain_timeout_secs fails that run's task "replica shutting
// down" (FAILED, not CANCELED), another replica reads it so from the
// shared store, and the conversation's next turn completes on that other
// replica: the stopped replica leaves no turn claimed.
func TestDrainHandsTheConversationOn(t *testing.T) {
	dbURL := pgtest.Database(t, os.LookupEnv)
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.LastUserText(), "wait") {
			asked <- struct{}{}
			<-release
		}
		return llmtest.Reply{Text: "answer to " + r.LastUserText(), Chunks: 3}
	})
	var once sync.Once
	// Registered after the model server, so it runs before its Close
	// (which waits for the handler held on release).
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	cluster := fastCluster + "drain_timeout_secs = 1\n"
	_, baseA, stopA := startReplica(t, model.URL, dbURL, cluster)
	_, baseB := serveReplica(t, model.URL, dbURL, cluster)
	a, b := a2aClientFor(t, baseA), a2aClientFor(t, baseB)
	ctx := t.Context()

	req := userMessage("wait for the model")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := a.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	<-asked // the run is in flight on replica A, at its model

	stopped := time.Now()
	stopA()
	t.Logf("replica A stopped %v after its drain began (drain_timeout_secs = 1)", time.Since(stopped).Round(10*time.Millisecond))

	var got *a2a.Task
	waitFor(t, 10*time.Second, "replica B reads the task as ended", func() bool {
		got, err = b.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		return err == nil && got.Status.State.Terminal()
	})
	if got.Status.State != a2a.TaskStateFailed {
		t.Fatalf("task ended %s, want FAILED (a drain is not the client's cancel)", got.Status.State)
	}
	if msg := got.Status.Message; msg == nil || len(msg.Parts) == 0 || !strings.Contains(msg.Parts[0].Text(), "replica shutting down") {
		t.Errorf("failure reason %v, want it to say the replica was shutting down", msg)
	}

	next := userMessage("next turn")
	next.Message.ContextID = task.ContextID
	res, err = b.SendMessage(ctx, next)
	if err != nil {
		t.Fatalf("the next turn on replica B: %v", err)
	}
	if done, ok := res.(*a2a.Task); !ok || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the next turn on replica B: %+v", res)
	}
}
