package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// stdioTools starts `agentd mcp` from the TypeScript SDK's stdio client
// (interop/mcp-stdio-tools.mjs) as an MCP host would, with nodeEnv as the
// host's own environment and serverEnv as the server entry's env block,
// and returns the tools it lists and agentd's stderr.
func stdioTools(t *testing.T, nodeBin string, nodeEnv []string, args []string, serverEnv map[string]string) ([]string, string) {
	t.Helper()
	params, err := json.Marshal(map[string]any{"command": goBuild(t, "./cmd/agentd"), "args": args, "env": serverEnv})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, filepath.Join(repoRoot(t), "interop", "mcp-stdio-tools.mjs"), string(params))
	cmd.Env = nodeEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp-stdio-tools.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var out struct {
		Tools  []string `json:"tools"`
		Stderr string   `json:"stderr"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("mcp-stdio-tools.mjs output: %v\n%s", err, stdout.String())
	}
	return out.Tools, out.Stderr
}

// TestStdioNoToolsExplained: an MCP host starts `agentd mcp` with a
// minimal environment. When that serves no tools, agentd's stderr (the
// host's MCP log) says which config was read, or that none was found and
// why there, and which keys would expose tools; with the env block the
// docs give, the user's agents are served.
func TestStdioNoToolsExplained(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "hi"}))
	// The user's AGENTD_HOME, exported in their shell, with an exposed agent.
	user := writeConfig(t, agentConfig(fake.URL))
	// A config whose only agent is not exposed.
	quiet := writeConfig(t, `
[providers.fake]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"

[[agents]]
name = "quiet-bot"
provider = "fake"
model = "m"
`)
	// The host's HOME holds no ~/.agentd.
	hostHome := t.TempDir()
	hostEnv := []string{"HOME=" + hostHome, "PATH=" + os.Getenv("PATH"), "AGENTD_HOME=" + user.home}
	// No daemon answers there, so agentd serves in-process.
	args := []string{"--addr", freeAddr(t), "mcp"}

	tests := []struct {
		name      string
		serverEnv map[string]string
		wantTools []string
		wantLog   []string
	}{
		{
			name:      "host drops AGENTD_HOME",
			serverEnv: nil,
			wantLog: []string{
				"serving no tools",
				"no config file at " + filepath.Join(hostHome, ".agentd", "config.toml"),
				"AGENTD_HOME is not set",
				"no agents are configured",
				"[agents.expose] table says mcp = true",
				"[mcp] expose_tools is false",
			},
		},
		{
			name:      "no agent exposed",
			serverEnv: map[string]string{"AGENTD_HOME": quiet.home},
			wantLog: []string{
				"serving no tools",
				"config file " + quiet.file + " (AGENTD_HOME=" + quiet.home + ")",
				"no agent has expose.mcp = true (agents: quiet-bot; set mcp = true in an agent's [agents.expose] table)",
				"[mcp] expose_tools is false (set it to true",
			},
		},
		{
			name:      "env block as docs/mcp-clients.md gives it",
			serverEnv: map[string]string{"AGENTD_HOME": user.home},
			wantTools: []string{"agentd_agent_helper_bot"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools, stderr := stdioTools(t, nodeBin, hostEnv, args, tt.serverEnv)
			if !slices.Equal(tools, tt.wantTools) {
				t.Fatalf("tools %q, want %q\nagentd stderr:\n%s", tools, tt.wantTools, stderr)
			}
			for _, w := range tt.wantLog {
				if !strings.Contains(stderr, w) {
					t.Errorf("agentd stderr lacks %q", w)
				}
			}
			if len(tt.wantTools) > 0 && strings.Contains(stderr, "serving no tools") {
				t.Errorf("warned about no tools while serving %q", tools)
			}
			if t.Failed() {
				t.Logf("agentd stderr:\n%s", stderr)
			}
		})
	}
}
