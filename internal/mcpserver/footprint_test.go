package mcpserver

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

var heapProfile = flag.String("footprint.heap", "", "write a heap profile after the footprint tests' measurement")

// memSnapshot is what the process holds after a full collection.
type memSnapshot struct {
	heap, stack uint64
	goroutines  int
}

func takeSnapshot() memSnapshot {
	// Several cycles: each may shrink a goroutine's stack by half.
	for range 4 {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSnapshot{heap: ms.HeapAlloc, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
}

// openRawSession runs the 2025-11-25 handshake on a connection of its own
// (no keep-alive), as bench scenario 4 does, and leaves the session open.
func openRawSession(ctx context.Context, hc *http.Client, url string) error {
	post := func(body, session string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return "", fmt.Errorf("status %d", resp.StatusCode)
		}
		return resp.Header.Get(headerSessionID), nil
	}
	id, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"footprint","version":"1"}}}`, "")
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if id == "" {
		return fmt.Errorf("initialize: no session id")
	}
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, id); err != nil {
		return fmt.Errorf("initialized: %w", err)
	}
	return nil
}

func openRawSessions(t testing.TB, hc *http.Client, url string, n int) {
	t.Helper()
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		first atomic.Value
	)
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := openRawSession(context.Background(), hc, url); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		t.Fatal(err)
	}
}

// TestSessionFootprint measures what one open MCP session keeps in the
// process (heap, goroutines, goroutine stacks) and holds it to a budget:
// one goroutine (go-sdk v1.8.0's reader of the session, blocked while it
// is idle; docs/upstream.md proposes parking it), sessionHeapBudget bytes
// of heap and sessionLiveBudget of heap and stack together. bench
// scenario 4 measures the same as the daemon's RSS, which is about twice
// the live heap and stacks (GOGC's headroom): the live budget is half the
// 20 KB of RSS per session that issue 28's guard allows. Run it with
// -v for the numbers, and -args -footprint.heap=FILE for a heap profile.
func TestSessionFootprint(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: config.MCPServe{ExposeTools: true}, tools: []tool.Tool{plainEcho{}}})
	ts := h.httpServer(t)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	hc := &http.Client{Transport: tr}
	if *heapProfile != "" {
		runtime.MemProfileRate = 1
	}
	openRawSessions(t, hc, ts.URL+"/mcp", 50)
	before := takeSnapshot()
	const n = 1000
	openRawSessions(t, hc, ts.URL+"/mcp", n)
	after := takeSnapshot()
	if *heapProfile != "" {
		fh, err := os.Create(*heapProfile)
		if err != nil {
			t.Fatal(err)
		}
		_ = pprof.Lookup("heap").WriteTo(fh, 0)
		fh.Close()
	}
	heap := (float64(after.heap) - float64(before.heap)) / n
	goroutines := float64(after.goroutines-before.goroutines) / n
	stack := (float64(after.stack) - float64(before.stack)) / n
	t.Logf("per session: heap %.0f B, stack %.0f B, goroutines %.2f", heap, stack, goroutines)
	if goroutines > 1.1 {
		t.Errorf("%.2f goroutines per open session, want one", goroutines)
	}
	if heap > sessionHeapBudget {
		t.Errorf("%.0f B of heap per open session, want at most %d", heap, sessionHeapBudget)
	}
	if heap+stack > sessionLiveBudget {
		t.Errorf("%.0f B of heap and stack per open session, want at most %d", heap+stack, sessionLiveBudget)
	}
}

// sessionHeapBudget is the heap one open, idle MCP session may keep:
// 5.6 KB measured with go1.26 and go-sdk v1.8.0 (3.5 KB with the patches
// docs/upstream.md proposes, which cleared the last request and parked
// the reader); sessionLiveBudget adds its reader's stack (4 KB measured).
const (
	sessionHeapBudget = 6144
	sessionLiveBudget = 10 << 10
)

// TestReplicatedSessionFootprint: an idle replicated session holds two
// goroutines: the table's, waiting for it to end, and go-sdk v1.8.0's
// reader of the session (see TestSessionFootprint).
func TestReplicatedSessionFootprint(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: config.MCPServe{ExposeTools: true}, tools: []tool.Tool{plainEcho{}},
		replicas: &Replicas{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}}})
	ts := h.httpServer(t)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	hc := &http.Client{Transport: tr}
	openRawSessions(t, hc, ts.URL+"/mcp", 20)
	before := takeSnapshot()
	const n = 200
	openRawSessions(t, hc, ts.URL+"/mcp", n)
	after := takeSnapshot()
	goroutines := float64(after.goroutines-before.goroutines) / n
	t.Logf("per replicated session: heap %.0f B, goroutines %.2f", (float64(after.heap)-float64(before.heap))/n, goroutines)
	if goroutines > 2.1 {
		t.Errorf("%.2f goroutines per open replicated session, want 2", goroutines)
	}
}
