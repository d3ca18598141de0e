package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// burst runs interop/mcp-burst.mjs: two TypeScript SDK clients on this
// host, n tools/list calls each.
func burst(t *testing.T, nodeBin, url string, n int) (ok int, errs []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, "mcp-burst.mjs", url, itoa(n))
	cmd.Dir = repoRoot(t) + "/interop"
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-burst.mjs: %v\n%s", err, out)
	}
	var res struct {
		OK     int      `json:"ok"`
		Errors []string `json:"errors"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("mcp-burst.mjs output: %v: %s", err, out)
	}
	return res.OK, res.Errors
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestLoopbackClientsAreNotThrottled: without an api_key, two MCP clients
// on this machine sending 400 calls each at full speed (well above the
// default 50/s with a burst of 100) all succeed. Before, every loopback
// client shared one bucket and the second conformance run of a pair
// failed with 429.
func TestLoopbackClientsAreNotThrottled(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "hi"}))
	e := writeConfig(t, agentConfig(fake.URL))
	_, base := startDaemon(t, e, true)
	ok, errs := burst(t, nodeBin, base+"/mcp", 400)
	if ok != 800 || len(errs) != 0 {
		t.Fatalf("%d of 800 calls succeeded; errors: %q", ok, errs)
	}
}

// TestThrottledMCPClientReadsAJSONRPCError: an operator who asks for
// loopback limits gets them, and the TypeScript SDK surfaces the refusal
// as a JSON-RPC error with the wait, not an unparseable body.
func TestThrottledMCPClientReadsAJSONRPCError(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "hi"}))
	e := writeConfig(t, agentConfig(fake.URL)+"\n[limits]\nlimit_loopback = true\nrate_per_sec = 5\nburst = 10\n")
	_, base := startDaemon(t, e, true)
	ok, errs := burst(t, nodeBin, base+"/mcp", 100)
	if ok == 200 || len(errs) == 0 {
		t.Fatalf("limit_loopback = true did not throttle: %d ok, errors %q", ok, errs)
	}
	for _, e := range errs {
		if !strings.Contains(e, `"code":-32029`) || !strings.Contains(e, "retry after") {
			t.Errorf("refusal as the SDK reports it: %q", e)
		}
	}
}
