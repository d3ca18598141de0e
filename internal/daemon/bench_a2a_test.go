package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// BenchmarkA2ASendMessage is the bench's A2A scenario in one process, for
// CPU profiles of the whole daemon: blocking SendMessage round trips to an
// agent whose model (a loopback OpenAI-compatible server) answers "ok" at
// once, through the daemon's handler (auth, a2a-go, the task store, the
// kernel, session and task persisted in SQLite, the audit writer).
//
//	go test ./internal/daemon -run '^$' -bench A2ASendMessage -cpuprofile /tmp/a2a.cpu
func BenchmarkA2ASendMessage(b *testing.B) {
	model := llmtest.NewOpenAIServer(b, llmtest.Always(llmtest.Reply{Text: "ok"}))
	home := b.TempDir()
	body := fmt.Sprintf(`listen = "127.0.0.1:0"
api_key = %q
log_level = "warn"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "instant"
provider = "fake"
model = "instant"

[agents.expose]
a2a = true

[a2a]
enabled = true

[limits]
rate_per_sec = 100000000
burst = 100000000
`, a2aTestKey, model.URL)
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		b.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	hc := bearerClient()
	resp, err := hc.Get(srv.URL + "/a2a/agents/instant/.well-known/agent-card.json")
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	card, err := a2aedge.ParseCard(raw)
	if err != nil {
		b.Fatal(err)
	}
	cl, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Destroy()
	send := func() error {
		res, err := cl.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
		if err != nil {
			return err
		}
		if t, ok := res.(*a2a.Task); !ok || t.Status.State != a2a.TaskStateCompleted {
			return fmt.Errorf("result %T %+v", res, res)
		}
		return nil
	}
	// The first event of a stream, as the bench's "stream, first event"
	// row: p50 of the time from the request to the first event.
	b.Run("stream-first-event", func(b *testing.B) {
		var firsts []time.Duration
		for b.Loop() {
			t0 := time.Now()
			n := 0
			for _, err := range cl.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}) {
				if err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					firsts = append(firsts, time.Since(t0))
				}
				n++
			}
		}
		slices.Sort(firsts)
		b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds()), "first-µs/p50")
	})
	for _, conc := range []int{1, 16} {
		b.Run(fmt.Sprint("c=", conc), func(b *testing.B) {
			// RunParallel runs parallelism × GOMAXPROCS goroutines.
			b.SetParallelism(max(1, conc/runtime.GOMAXPROCS(0)))
			if conc == 1 {
				for b.Loop() {
					if err := send(); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := send(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
