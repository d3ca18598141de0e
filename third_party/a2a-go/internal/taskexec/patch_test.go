// agentd patch tests: see third_party/a2a-go/PATCH.md (change 2).

package taskexec

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestRunProducerConsumer_ConsumerInCallingGoroutine: the consumer runs
// in runProducerConsumer's caller's goroutine, and its result still ends
// the producer.
func TestRunProducerConsumer_ConsumerInCallingGoroutine(t *testing.T) {
	var stack string
	msg := a2a.NewMessage(a2a.MessageRoleAgent)
	res, err := runProducerConsumer(t.Context(),
		func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		func(ctx context.Context) (a2a.SendMessageResult, error) {
			buf := make([]byte, 64<<10)
			stack = string(buf[:runtime.Stack(buf, false)])
			return msg, nil
		},
		nil, nil, nil)
	if err != nil || res != msg {
		t.Fatalf("runProducerConsumer() = %v, %v; want the consumer's result", res, err)
	}
	// Called from runProducerConsumer itself, not from a goroutine it made.
	if !strings.Contains(stack, "taskexec.runProducerConsumer(") {
		t.Errorf("the consumer ran in a goroutine of its own:\n%s", stack)
	}
}
