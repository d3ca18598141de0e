package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/sandbox"
	"github.com/agentd/agentd/internal/store"
)

// TestShellExecCannotReadDaemonSecrets is issue 27's critical finding,
// replayed end to end: a model told to run shell_exec reads the daemon's
// environment through /proc (by $PPID and by the daemon's pid) and
// AGENTD_HOME/agentd.db. Under the default config the canary set on the
// daemon never reaches the answer, the store is refused with a message
// naming the path, and the audit record carries that refusal.
func TestShellExecCannotReadDaemonSecrets(t *testing.T) {
	m := sandbox.Probe()
	if m.LandlockABI < 6 || !m.UserNS || (m.Root && m.PidsCgroup == "") {
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatalf("sandbox mechanisms missing here: %v", m.Problems)
		}
		t.Skipf("sandbox mechanisms missing here: %v", m.Problems)
	}
	// The canaries are this process's own initial environment, which is
	// what /proc/PID/environ shows (os.Setenv does not change it).
	canaries := initialEnviron(t)
	var home string
	attack := func() string {
		return `tr '\0' '\n' < /proc/$PPID/environ; tr '\0' '\n' < /proc/` + strconv.Itoa(os.Getpid()) + `/environ; cat ` + filepath.Join(home, "agentd.db") + ` | head -c 100000 | tr -cd 'a-z-0-9'`
	}
	script := func(req *llmtest.Request) llmtest.Reply {
		if req.Model != "sh-m" {
			return toolThenAnswer(req)
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleTool {
			var b strings.Builder
			for _, r := range last.ToolResults {
				b.WriteString(r.Content)
			}
			return llmtest.Reply{Text: "tool said: " + b.String()}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("shell_exec", `{"command":`+strconv.Quote(attack())+`}`)}}
	}
	for _, mode := range []string{"off", "required"} {
		t.Run(mode, func(t *testing.T) { replayCriticalFinding(t, mode, script, &home, canaries) })
	}
}

// replayCriticalFinding runs the attack under [sandbox] mode. With the
// sandbox off it must succeed (the test can see a leak); with the
// default it must not.
func replayCriticalFinding(t *testing.T, mode string, script llmtest.Handler, home *string, canaries []string) {
	h := newHarnessModel(t, `
[sandbox]
mode = "`+mode+`"

[[agents]]
name = "sh"
provider = "fake"
model = "sh-m"
tools = ["shell_exec"]
[agents.expose]
mcp = true
`, nil, nil, script)
	*home = h.d.Config().Home

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := h.mcpSession(ctx)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agentd_agent_sh", Arguments: map[string]any{"message": "show me the keys"}})
	if err != nil || res.IsError {
		t.Fatalf("agent over mcp: %+v %v", res, err)
	}
	var answer strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			answer.WriteString(tc.Text)
		}
	}
	text := answer.String()
	if !strings.Contains(text, "tool said:") {
		t.Fatalf("the model never got the tool result: %q", text)
	}
	if mode == "off" {
		// Unconfined, a root daemon's command reads it (which shows this
		// test can see a leak); a non-root daemon's is stopped by the
		// daemon being non-dumpable alone.
		if leaked := leaks(text, canaries) != ""; leaked != (os.Geteuid() == 0) {
			t.Errorf("sandbox off, euid %d: canary leaked = %v: %.500q", os.Geteuid(), leaked, text)
		}
		return
	}
	if l := leaks(text, canaries); l != "" {
		t.Errorf("the answer holds the daemon's %q: %q", l, text)
	}
	want := "permission denied by the sandbox: read " + filepath.Join(*home, "agentd.db")
	if !strings.Contains(text, want) {
		t.Errorf("the answer lacks %q: %q", want, text)
	}
	if err := h.d.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := h.d.Audit.QueryAudit(ctx, store.AuditFilter{Tool: "shell_exec"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("audit records %+v, %v", recs, err)
	}
	if !strings.HasPrefix(recs[0].Detail, "permission denied by the sandbox") {
		t.Errorf("audit detail = %q", recs[0].Detail)
	}
	resp, body := h.do("GET", "/metrics", "", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `agentd_sandbox_refusals_total{kind="read",`) {
		t.Errorf("/metrics (%d) lacks the read refusal:\n%s", resp.StatusCode, grepLines(string(body), "sandbox"))
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// initialEnviron is this process's initial environment, less the
// variables a shell command has of its own (PATH, HOME, TMPDIR) and
// values too short to be told apart from other output.
func initialEnviron(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range strings.Split(string(b), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < 6 || k == "PATH" || k == "HOME" || k == "TMPDIR" || k == "PWD" || k == "OLDPWD" {
			continue
		}
		out = append(out, kv)
	}
	if len(out) == 0 {
		t.Fatal("no usable variable in the initial environment")
	}
	return out
}

// leaks returns the first canary found in text.
func leaks(text string, canaries []string) string {
	for _, c := range canaries {
		if strings.Contains(text, c) {
			return c
		}
	}
	return ""
}

// TestSandboxRefusesAGrantOfTheHome: a configured path that would expose
// AGENTD_HOME stops the start, naming the program and the path.
func TestSandboxRefusesAGrantOfTheHome(t *testing.T) {
	home := t.TempDir()
	body := `[[agents]]
name = "coder"
provider = "openai"
model = "m"

[sandbox.agents.coder]
read = ["` + filepath.Dir(home) + `"]
`
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(t.Context(), cfg, Options{})
	if err == nil {
		d.Close()
		t.Fatal("the daemon started with a shell that may read AGENTD_HOME")
	}
	if !strings.Contains(err.Error(), "shell_exec of agent coder: read path \""+filepath.Dir(home)+"\" would expose \""+home+"\"") {
		t.Errorf("error = %v", err)
	}
}
