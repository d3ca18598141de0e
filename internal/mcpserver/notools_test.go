package mcpserver

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentd/agentd/internal/manifest"
)

// logBuffer is a log destination safe for the server's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNoToolsExplained: a client that lists tools and gets none makes the
// server log why, with the configuration it was given, once until tools
// are served again (the stdio case with a real host is in e2e).
func TestNoToolsExplained(t *testing.T) {
	logs := &logBuffer{}
	h := newHarness(t, harnessOptions{
		agents: []manifest.Manifest{{Name: "hidden", Provider: "fake", Model: "m1"}},
		logger: slog.New(slog.NewTextHandler(logs, nil)),
		origin: "config file /home/me/.agentd/config.toml (AGENTD_HOME=/home/me/.agentd)",
	})
	cs := httpClient(t, h.httpServer(t).URL+"/mcp", nil)
	warnings := func() int { return strings.Count(logs.String(), "serving no tools") }

	for range 2 {
		if names := toolNames(t, cs); len(names) != 0 {
			t.Fatalf("tools %v, want none", names)
		}
	}
	if n := warnings(); n != 1 {
		t.Fatalf("%d warnings after two empty lists, want 1:\n%s", n, logs)
	}
	for _, want := range []string{
		"no agent has expose.mcp = true (agents: hidden; set mcp = true in an agent's [agents.expose] table)",
		"[mcp] expose_tools is false",
		`config="config file /home/me/.agentd/config.toml (AGENTD_HOME=/home/me/.agentd)"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}

	// Tools come and go: the next empty list is explained again.
	ctx := context.Background()
	if err := h.kernel.Agents().Put(ctx, manifest.Manifest{Name: "shown", Provider: "fake", Model: "m1", Expose: manifest.Exposure{MCP: true}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return slices.Contains(toolNames(t, cs), "agentd_agent_shown") })
	if err := h.kernel.Agents().Delete(ctx, "shown"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(toolNames(t, cs)) == 0 })
	if n := warnings(); n != 2 {
		t.Fatalf("%d warnings after the list emptied again, want 2:\n%s", n, logs)
	}
}
