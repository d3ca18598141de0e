package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/daemon"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestRelaySurvivesDaemonRestart: an editor (the TypeScript SDK) runs
// `agentd mcp`, which relays to the running daemon. The daemon restarts
// under it. While it is down a call fails at once with a message saying
// what to do; once it is back the relay opens a new session with the
// editor's initialize and the next call works, and the GET stream follows
// into the new session: an agent created on the restarted daemon reaches
// the editor as list_changed. Before, every call after a restart failed
// with "HTTP 404: session not found" until the editor restarted the server.
func TestRelaySurvivesDaemonRestart(t *testing.T) {
	nodeBin := node(t)
	agentd := goBuild(t, "./cmd/agentd")
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "relayed answer"}))
	e := writeConfig(t, agentConfig(fake.URL))

	stop, base := serveDaemon(t, e)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, "mcp-relay-restart.mjs", agentd, "agentd_agent_helper_bot", "agentd_agent_second_bot")
	cmd.Dir = repoRoot(t) + "/interop"
	cmd.Env = append(os.Environ(), "AGENTD_HOME="+e.home)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	next := func(want string) map[string]any {
		t.Helper()
		for lines.Scan() {
			var m map[string]any
			if json.Unmarshal(lines.Bytes(), &m) != nil {
				continue // not a step line
			}
			if m["step"] != want {
				t.Fatalf("step %v, want %s: %s", m["step"], want, lines.Text())
			}
			return m
		}
		t.Fatalf("the client ended before step %s: %v", want, lines.Err())
		return nil
	}
	ack := func() { _, _ = io.WriteString(stdin, "ok\n") }

	if m := next("before"); m["ok"] != true || !strings.Contains(m["text"].(string), "relayed answer") {
		t.Fatalf("call before the restart: %v", m)
	}
	stop()
	ack()
	m := next("down")
	if m["ok"] != false || !strings.Contains(m["error"].(string), "cannot reach the agentd daemon") || m["ms"].(float64) > 5000 {
		t.Fatalf("call while the daemon is down: %v, want a fast, clear error", m)
	}
	stop, _ = serveDaemon(t, e)
	defer stop()
	ack()
	if m := next("after"); m["ok"] != true || !strings.Contains(m["text"].(string), "relayed answer") {
		t.Fatalf("call after the restart: %v", m)
	}
	resp, err := http.Post(base+"/api/agents", "application/json",
		strings.NewReader(`{"name":"second-bot","description":"Created after the restart.","provider":"fake","model":"fake-model","expose":{"mcp":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create agent: %s", resp.Status)
	}
	ack()
	if m := next("list_changed"); m["ok"] != true {
		t.Fatalf("after the restart the editor did not learn of the new agent: %v", m)
	}
	ack()
}

// serveDaemon serves a daemon from e's config on its configured address
// until stop, which is also run at cleanup and may be called twice.
func serveDaemon(t *testing.T, e env) (stop func(), base string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, e.load(t), daemon.Options{ConnectMCP: true})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := d.Listen("")
	if err != nil {
		cancel()
		d.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, ln) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		d.Close()
	}
	t.Cleanup(stop)
	return stop, "http://" + ln.Addr().String()
}
