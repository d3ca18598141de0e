//go:build linux

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/tool"
)

// TestCrashKill9Audit: a kill -9 under load loses no audit record of an
// answered call. Audit records are written in batches by one goroutine
// (internal/auditlog) as a group commit: a tool call's answer leaves only
// once the batch holding its record is committed. Concurrent MCP clients
// call a built-in tool over /mcp with arguments unique to each call, the
// binary is killed under that load, and the database is opened as it was
// left: every one of the N calls answered before the kill must have its
// record. (With the queued writer before group commit, 10 of 15,933 were
// lost in `make soak`.)
func TestCrashKill9Audit(t *testing.T) {
	track(t, areaCrash, false)
	if testing.Short() {
		skipf(t, "builds and runs the agentd binary (not with -short)")
	}
	const (
		clients = 32
		loadFor = 2 * time.Second
	)
	home := t.TempDir()
	addr := freeAddr(t)
	path := filepath.Join(home, "config.toml")
	body := binaryConfigBody(addr, "http://127.0.0.1:1/v1") + "\n[mcp]\nexpose_tools = true\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startAgentd(t, path, home, addr)
	tr := loadTransport()
	hc := &http.Client{Transport: bearerTransport{key: crashKey, next: tr}}

	type ack struct {
		digest string
		at     time.Time // when the answer arrived
	}
	var (
		mu    sync.Mutex
		acked []ack
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	sessions := make([]*mcp.ClientSession, clients)
	for i := range clients {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "audit-crash", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: p.URL + "/mcp", HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions[i] = cs
	}
	for i, cs := range sessions {
		wg.Go(func() {
			for n := 0; !stop.Load(); n++ {
				dir := fmt.Sprintf("absent-%d-%d", i, n)
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "file_list", Arguments: map[string]any{"path": dir}})
				if err != nil {
					return // the daemon died under this call: not answered
				}
				a := ack{digest: tool.Digest("file_list", []byte(fmt.Sprintf(`{"path":%q}`, dir))), at: time.Now()}
				mu.Lock()
				acked = append(acked, a)
				mu.Unlock()
			}
		})
	}
	time.Sleep(loadFor)
	mu.Lock()
	p.kill()
	killed := time.Now()
	stop.Store(true)
	answered := slices.Clone(acked)
	mu.Unlock()
	wg.Wait()
	if len(answered) < 100 {
		t.Fatalf("only %d calls answered in %s: no load to measure", len(answered), loadFor)
	}

	db, err := sqlite.Open(context.Background(), filepath.Join(home, "agentd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.QueryAudit(context.Background(), store.AuditFilter{Tool: "file_list"})
	if err != nil {
		t.Fatal(err)
	}
	stored := make(map[string]bool, len(recs))
	for _, r := range recs {
		stored[r.ArgsDigest] = true
	}
	var lost int
	var oldestLost time.Duration // how long before the kill the oldest lost call was answered
	for _, a := range answered {
		if stored[a.digest] {
			continue
		}
		lost++
		oldestLost = max(oldestLost, killed.Sub(a.at))
	}
	if lost == len(answered) {
		t.Fatalf("none of the %d answered calls has its record (%d records stored): digests do not match the runner's", len(answered), len(recs))
	}
	if lost > 0 {
		t.Errorf("%d of %d answered calls lost their audit record to kill -9 (the oldest answered %s before it): an answer left before its record was committed", lost, len(answered), oldestLost.Round(100*time.Microsecond))
	}
	rate := float64(len(answered)) / loadFor.Seconds()
	fig(t, areaCrash, "Audit records lost to kill -9", "%d clients calling a built-in tool over /mcp for %s (%d answered, %.0f/s): %d answered calls lost their record (%.2f%%); the oldest lost was answered %s before the kill",
		clients, loadFor, len(answered), rate, lost, 100*float64(lost)/float64(len(answered)), oldestLost.Round(100*time.Microsecond))
}
