package bridge

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// namingPeer is an agent whose stream names its task only when the test
// says so: the window between the agent starting a task and the bridge
// learning its id, which a cancellation may fall into.
type namingPeer struct {
	name      chan struct{} // closed: the stream sends the task
	streamEnd chan struct{} // closed when the stream returns

	mu        sync.Mutex
	cancelled []a2a.TaskID
}

func (p *namingPeer) stream(ctx context.Context, _ *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		defer close(p.streamEnd)
		select {
		case <-p.name:
		case <-ctx.Done():
			yield(nil, ctx.Err())
			return
		}
		task := &a2a.Task{ID: "t-1", ContextID: "c-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		if !yield(task, nil) {
			return
		}
		<-ctx.Done() // the run goes on until the stream's reader leaves
		yield(nil, ctx.Err())
	}
}

func (p *namingPeer) get(context.Context, a2a.TaskID) (*a2a.Task, error) {
	return nil, errors.New("not used")
}

func (p *namingPeer) cancel(_ context.Context, id a2a.TaskID) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cancelled = append(p.cancelled, id)
	return nil
}

// TestCancelBeforeTheTaskIsNamed: an MCP call cancelled after the agent
// started its task but before the stream named it still cancels that
// task (CI once found a local agent's task running on, orphaned), and
// does not wait for the rest of the stream.
func TestCancelBeforeTheTaskIsNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &namingPeer{name: make(chan struct{}), streamEnd: make(chan struct{})}
		b := &Bridge{log: slog.New(slog.DiscardHandler)}
		target := bridgeTarget{tool: "a2a_local_alpha", agent: "alpha", where: "local", peer: p}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := b.converse(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{}}, target, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("slow")))
			done <- err
		}()
		synctest.Wait() // the stream waits to name the task
		cancel()
		synctest.Wait() // whatever the cancellation sets off has run
		// The call's context has ended; the stream names the task only now.
		close(p.name)
		start := time.Now()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("converse: %v, want context.Canceled", err)
		}
		if waited := time.Since(start); waited > 0 {
			t.Fatalf("the cancelled call waited %v for the rest of the stream", waited)
		}
		<-p.streamEnd
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.cancelled) != 1 || p.cancelled[0] != "t-1" {
			t.Fatalf("tasks cancelled: %v, want [t-1]", p.cancelled)
		}
	})
}
