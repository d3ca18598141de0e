package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store/sqlite"
)

// drainConfig is a daemon alone on SQLite with the A2A agent alpha and a
// short drain.
func drainConfig(listen, modelURL string) string {
	return fmt.Sprintf(`listen = %q
api_key = %q

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "alpha"
description = "Alpha, for drain tests."
provider = "fake"
model = "test-model"

[agents.expose]
a2a = true

[a2a]
enabled = true

[cluster]
drain_timeout_secs = 2
`, listen, a2aTestKey, modelURL)
}

// TestDrainOnSIGTERM runs the agentd binary, sends it SIGHUP (which must
// not stop it), then SIGTERM while two runs are under way: one that ends
// within drain_timeout_secs and one that never would. The replica turns
// unready and refuses new work with a retryable error while it drains;
// the short run completes; the long one fails "replica shutting down"
// (not canceled); the process exits 0; and the conversation of the
// failed task takes its next turn after a restart.
func TestDrainOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentd binary")
	}
	bin := buildAgentd(t)
	asked := make(chan string, 4)
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		text := r.LastUserText()
		switch {
		case strings.HasPrefix(text, "slow"):
			asked <- "slow"
			return llmtest.Reply{Text: strings.Repeat("s", 100000), Chunks: 100000, Delay: 50 * time.Millisecond}
		case strings.HasPrefix(text, "medium"):
			asked <- "medium"
			return llmtest.Reply{Text: "medium answer", Chunks: 10, Delay: 100 * time.Millisecond}
		}
		return llmtest.Reply{Text: "answer to " + text}
	})
	home := t.TempDir()
	addr := freeAddr(t)
	cfgPath := filepath.Join(home, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(drainConfig(addr, model.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := startAgentd(t, bin, cfgPath, home, addr)
	base := "http://" + addr
	logText := func() string {
		logs, _ := filepath.Glob(filepath.Join(home, "agentd-*.log"))
		var b strings.Builder
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			b.Write(data)
		}
		return b.String()
	}

	// SIGHUP: a reload of the unchanged file, not fatal.
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "SIGHUP is logged", func() bool { return strings.Contains(logText(), "config reloaded: nothing changed") })
	if code, _ := rawDo(t, http.MethodGet, base+"/livez", ""); code != http.StatusOK {
		t.Fatalf("after SIGHUP /livez answers %d", code)
	}

	cl := a2aClientFor(t, base)
	ctx := t.Context()
	start := func(text string) *a2a.Task {
		req := userMessage(text)
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
		res, err := cl.SendMessage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.(*a2a.Task)
	}
	slow, medium := start("slow task"), start("medium task")
	for range 2 {
		<-asked // both runs are at their model
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	termAt := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Draining: unready, and new work is refused, retryably.
	waitFor(t, 5*time.Second, "/readyz says draining", func() bool {
		code, body := rawDo(t, http.MethodGet, base+"/readyz", "")
		return code == http.StatusServiceUnavailable && strings.Contains(body, `"draining": "yes"`)
	})
	if code, body := rawDo(t, http.MethodPost, base+"/api/agents/alpha/messages", `{"message":"hello"}`); code != http.StatusServiceUnavailable || !strings.Contains(body, `"shutting_down"`) {
		t.Errorf("a new run while draining: %d %s; want 503 shutting_down", code, body)
	}
	if _, err := cl.SendMessage(ctx, userMessage("new task")); err == nil || !strings.Contains(err.Error(), "replica shutting down") {
		t.Errorf("a new A2A task while draining: %v; want refused, replica shutting down", err)
	}

	var err error
	select {
	case err = <-exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("agentd still runs 20 s after SIGTERM (drain_timeout_secs = 2)\n%s", logText())
	}
	took := time.Since(termAt)
	if err != nil {
		t.Fatalf("agentd exited with %v after SIGTERM, want 0\n%s", err, logText())
	}
	t.Logf("SIGTERM to exit: %v (drain_timeout_secs = 2)", took.Round(10*time.Millisecond))
	if took < 2*time.Second {
		t.Errorf("exited %v after SIGTERM: the drain did not wait for the runs", took)
	}

	st, err := sqlite.Open(ctx, filepath.Join(home, "agentd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		task  *a2a.Task
		state a2a.TaskState
		says  string
	}{
		{medium, a2a.TaskStateCompleted, "medium answer"},
		{slow, a2a.TaskStateFailed, "replica shutting down"},
	} {
		rec, err := st.GetTask(ctx, string(tc.task.ID))
		if err != nil {
			t.Fatal(err)
		}
		var got a2a.Task
		if err := json.Unmarshal(rec.Data, &got); err != nil {
			t.Fatal(err)
		}
		msg := ""
		if got.Status.Message != nil && len(got.Status.Message.Parts) > 0 {
			msg = got.Status.Message.Parts[0].Text()
		}
		if got.Status.State != tc.state || !strings.Contains(msg, tc.says) {
			t.Errorf("task %q after the drain: %s %q; want %s saying %q", tc.task.ID, got.Status.State, msg, tc.state, tc.says)
		}
	}
	st.Close()

	// The failed task's conversation goes on after a restart.
	startAgentd(t, bin, cfgPath, home, addr)
	next := userMessage("next turn")
	next.Message.ContextID = slow.ContextID
	res, err := a2aClientFor(t, base).SendMessage(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if done := res.(*a2a.Task); done.Status.State != a2a.TaskStateCompleted {
		t.Errorf("the next turn after the drain: %s %v", done.Status.State, done.Status.Message)
	}
}
