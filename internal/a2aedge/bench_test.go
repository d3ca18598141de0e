package a2aedge

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// BenchmarkSendMessage measures blocking unary sends over JSON-RPC, with
// 16 concurrent clients, through the whole path: HTTP, a2a-go, the task
// store (SQLite), the kernel (session writes) and a scripted model.
func BenchmarkSendMessage(b *testing.B) {
	f := newFixture(b, llmtest.Always(llmtest.Reply{Text: "ok"}), fixtureOptions{})
	cl := f.a2aClient("alpha")
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := cl.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
			if err != nil {
				b.Error(err)
				return
			}
			if res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
				b.Error("not completed")
				return
			}
		}
	})
}

// BenchmarkStreamFirstEvent measures SendStreamingMessage at c=1: the p50
// time from the request to the stream's first event (the task, working),
// and per stream the whole exchange's cost, through the same path as
// BenchmarkSendMessage.
func BenchmarkStreamFirstEvent(b *testing.B) {
	f := newFixture(b, llmtest.Always(llmtest.Reply{Text: "ok"}), fixtureOptions{})
	cl := f.a2aClient("alpha")
	var firsts []time.Duration
	for b.Loop() {
		t0 := time.Now()
		n := 0
		for ev, err := range cl.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}) {
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				firsts = append(firsts, time.Since(t0))
				if _, ok := ev.(*a2a.Task); !ok {
					b.Fatalf("first event %T, want the task", ev)
				}
			}
			n++
		}
	}
	slices.Sort(firsts)
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds()), "first-µs/p50")
}
