package a2aedge

import (
	"context"
	"testing"

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
