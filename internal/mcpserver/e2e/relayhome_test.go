package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestStdioRelaysOnlyToItsOwnHome: `agentd mcp` started by an MCP host
// (the TypeScript SDK's stdio client) relays to the daemon on its
// configured address only when that daemon serves the same AGENTD_HOME. A
// second home configured with the first one's address used to get the
// first home's agents (issue 30, item 7); it now serves its own,
// in-process, and says why on stderr.
func TestStdioRelaysOnlyToItsOwnHome(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "hi"}))
	first := writeConfig(t, agentConfig(fake.URL))
	_, base := startDaemon(t, first, true)
	addr := strings.TrimPrefix(base, "http://")

	// The second home: its own exposed agent, the first one's address.
	second := env{home: t.TempDir()}
	second.file = filepath.Join(second.home, "config.toml")
	text := fmt.Sprintf("listen = %q\n%s", addr, strings.ReplaceAll(agentConfig(fake.URL), "helper-bot", "other-bot"))
	if err := os.WriteFile(second.file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	hostEnv := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}

	tests := []struct {
		name      string
		home      string
		wantTools []string
		wantLog   string
	}{
		{"same home relays", first.home, []string{"agentd_agent_helper_bot"}, "relaying to the running daemon"},
		{"another home serves in-process", second.home, []string{"agentd_agent_other_bot"}, "a daemon answers on the configured address but it serves another AGENTD_HOME and config file; serving in-process"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools, stderr := stdioTools(t, nodeBin, hostEnv, []string{"mcp"}, map[string]string{"AGENTD_HOME": tt.home})
			if !slices.Equal(tools, tt.wantTools) {
				t.Fatalf("tools %q, want %q\nagentd stderr:\n%s", tools, tt.wantTools, stderr)
			}
			if !strings.Contains(stderr, tt.wantLog) {
				t.Errorf("agentd stderr lacks %q:\n%s", tt.wantLog, stderr)
			}
		})
	}
}
