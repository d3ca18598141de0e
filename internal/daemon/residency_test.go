package daemon

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/telemetry"
)

// TestServeReleasesStartupPages: a serving daemon drops its executable's
// start-up pages after listening, and again after its MCP server (here
// the test binary over stdio) has connected if it was still connecting,
// and says so in its debug log; the last release follows the connection.
func TestServeReleasesStartupPages(t *testing.T) {
	var buf syncBuffer
	log := slog.New(telemetry.LogHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	newHarnessLog(t, "", nil, log)

	// The harness returns once the upstream is connected; the release
	// that follows the connection comes a settle (250 ms) later, on the
	// daemon's own goroutine. Wait for that event, not just for the
	// first release (which, with the upstream still connecting, is
	// logged before the connection).
	const connectedMsg, releasedMsg = `"msg":"mcp server connected"`, `"msg":"released start-up pages"`
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out = buf.String()
		if connected := strings.Index(out, connectedMsg); connected >= 0 && strings.LastIndex(out, releasedMsg) > connected {
			break
		}
	}
	var released []map[string]any
	for line := range strings.SplitSeq(out, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "released start-up pages" {
			released = append(released, rec)
		}
	}
	if len(released) == 0 {
		t.Fatalf("no release logged:\n%s", out)
	}
	for _, rec := range released {
		if m, _ := rec["mappings"].(float64); m < 1 {
			t.Errorf("release %v: no mapping released", rec)
		}
	}
	connected := strings.Index(out, connectedMsg)
	second := strings.LastIndex(out, releasedMsg)
	if connected < 0 || second < connected {
		t.Errorf("the second release (at %d) does not follow the MCP server's connection (at %d):\n%s", second, connected, out)
	}
}
