package bridge

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// BenchmarkProxySend measures blocking sends to the model-free proxy
// agent at c=1: the A2A edge, the proxy, the tool pipeline (policy,
// audit) and one tools/call to an in-process MCP server over HTTP, the
// task stored in SQLite.
//
//	go test ./internal/bridge -run '^$' -bench ProxySend -cpuprofile /tmp/proxy.cpu
func BenchmarkProxySend(b *testing.B) {
	f, _ := newProxyFixture(b)
	cl := f.a2aClient("proxy")
	for b.Loop() {
		res, err := cl.SendMessage(context.Background(), proxyMessage("tools", "echo", map[string]any{"text": "hi"}))
		if err != nil {
			b.Fatal(err)
		}
		if t, ok := res.(*a2a.Task); !ok || t.Status.State != a2a.TaskStateCompleted {
			b.Fatalf("result %T %+v", res, res)
		}
	}
}
