package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// startFaults starts a manager with one fault server and waits for it.
func startFaults(t *testing.T, o Options, mode string, edit func(*config.MCPServer)) *Manager {
	t.Helper()
	m := newTestManager(t, o)
	cfg := faultServer(t, "faults", mode)
	if edit != nil {
		edit(&cfg)
	}
	if err := m.Add(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "faults")
	return m
}

// pgidOf returns the process group of a server's current process.
func pgidOf(t *testing.T, m *Manager, name string) int {
	t.Helper()
	s := m.server(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil || s.sess.proc == nil {
		t.Fatalf("%s has no process", name)
	}
	return s.sess.proc.pgid
}

// waitGone waits until no process of group pgid (or process pid, when
// negative is false) exists.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	waitFor(t, 5*time.Second, what+" to be gone", func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
}

func TestStdioEchoAndStatus(t *testing.T) {
	check := baseline(t)
	m := startFaults(t, testOptions(nil), "normal", nil)
	st, _ := status(m, "faults")
	if st.ServerInfo == nil || st.ServerInfo.Name != "faults" || st.ProtocolVersion == "" || st.Transport != "stdio" || st.State != StateConnected {
		t.Errorf("status = %+v", st)
	}
	if st.ToolsCount == 0 || st.ToolsCount != len(st.Tools) {
		t.Errorf("tools count %d for %d tools", st.ToolsCount, len(st.Tools))
	}
	echo := mustTool(t, m, "mcp_faults_echo")
	spec := echo.Spec()
	if spec.Origin != tool.OriginMCP || !spec.Untrusted || spec.Server != "faults" || !strings.HasPrefix(spec.Description, "[MCP:faults] ") {
		t.Errorf("spec = %+v", spec)
	}
	res, err := callTool(t.Context(), echo, map[string]string{"text": "hello"})
	if err != nil || res.Content != "hello" || res.IsError {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	// Arguments that are not an object are the model's mistake, not a
	// failed call.
	res, err = echo.Call(t.Context(), &tool.Call{Args: []byte(`[1]`)})
	if err != nil || !res.IsError {
		t.Errorf("array arguments = %+v, %v", res, err)
	}
	pgid := pgidOf(t, m, "faults")
	m.Close()
	waitGone(t, "process group", -pgid)
	if len(m.Tools()) != 0 {
		t.Error("tools left after Close")
	}
	check()
}

func TestCrashMidCallFailsAtOnceAndReconnects(t *testing.T) {
	check := baseline(t)
	var changes atomic.Int32
	logs := &logBuffer{}
	m := startFaults(t, testOptions(logs), "normal", func(c *config.MCPServer) { c.TimeoutSecs = 30 })
	m.OnToolsChanged(func() { changes.Add(1) })
	pgid := pgidOf(t, m, "faults")

	start := time.Now()
	_, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_crash"), map[string]any{})
	if took := time.Since(start); took > time.Second {
		t.Errorf("crashed call failed after %s, want < 1s", took)
	}
	if !errors.Is(err, tool.ErrDisconnected) {
		t.Fatalf("crash error = %v, want ErrDisconnected", err)
	}
	waitGone(t, "crashed process group", -pgid)

	waitFor(t, 10*time.Second, "reconnect", func() bool {
		st, _ := status(m, "faults")
		return st.Connected && st.Reconnects == 1
	})
	st, _ := status(m, "faults")
	if st.ToolsCount == 0 {
		t.Error("no tools after reconnect")
	}
	// Reconnected, the drop keeps its time and reason (last_error is
	// cleared): the dashboard shows a restart it never saw as down.
	if st.LastError != "" || st.LastDownAt == nil || st.LastDownAt.Before(start) || !contains(st.LastDownError, "disconnected") ||
		st.ConnectedSince == nil || st.ConnectedSince.Before(*st.LastDownAt) {
		t.Errorf("after the restart: last_error %q, last_down_at %v, last_down_error %q, connected_since %v",
			st.LastError, st.LastDownAt, st.LastDownError, st.ConnectedSince)
	}
	if pgidOf(t, m, "faults") == pgid {
		t.Error("same process after reconnect")
	}
	// The restart is in the log at INFO with the server's name, however
	// quickly it came back (the drop before it is a WARN). The run
	// goroutine logs the drop before it publishes it, but the reconnect
	// only after it has published Connected (up unlocks, then logs), so
	// a status that says reconnected can be read before that line is
	// written: wait for the line itself.
	if l := logs.String(); !contains(l, `level=WARN msg="mcp server disconnected; reconnecting" mcp_server=faults`) {
		t.Errorf("the drop is not in the log:\n%s", l)
	}
	waitFor(t, 5*time.Second, "the reconnect in the log", func() bool {
		return contains(logs.String(), `level=INFO msg="mcp server reconnected" mcp_server=faults reconnects=1`)
	})
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_echo"), map[string]string{"text": "again"})
	if err != nil || res.Content != "again" {
		t.Fatalf("echo after reconnect = %+v, %v", res, err)
	}
	m.Close()
	check()
}

func TestHangTimesOutAndSessionSurvives(t *testing.T) {
	check := baseline(t)
	logs := &logBuffer{}
	m := startFaults(t, testOptions(logs), "normal", func(c *config.MCPServer) { c.TimeoutSecs = 1 })
	start := time.Now()
	_, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_hang"), map[string]any{})
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, tool.ErrDisconnected) {
		t.Fatalf("hang error = %v, want a timeout", err)
	}
	if took < 900*time.Millisecond || took > 3*time.Second {
		t.Errorf("hang timed out after %s, want about 1s", took)
	}
	// The server saw notifications/cancelled: its handler logs on exit.
	waitFor(t, 5*time.Second, "the upstream to see the cancellation", func() bool {
		return contains(logs.String(), "hang cancelled")
	})
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_echo"), map[string]string{"text": "still here"})
	if err != nil || res.Content != "still here" {
		t.Fatalf("echo after timeout = %+v, %v", res, err)
	}
	if st, _ := status(m, "faults"); st.Reconnects != 0 {
		t.Errorf("reconnects = %d, want 0", st.Reconnects)
	}
	m.Close()
	check()
}

func TestCancelReachesUpstream(t *testing.T) {
	check := baseline(t)
	logs := &logBuffer{}
	m := startFaults(t, testOptions(logs), "normal", nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Cancel once the server has the call: hang reports its arrival.
	c := &tool.Call{Args: json.RawMessage(`{}`), Progress: func(string, float64, float64) { cancel() }}
	start := time.Now()
	_, err := mustTool(t, m, "mcp_faults_hang").Call(ctx, c)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("cancelled call returned after %s", took)
	}
	waitFor(t, 5*time.Second, "the upstream to see the cancellation", func() bool {
		return contains(logs.String(), "hang cancelled")
	})
	m.Close()
	check()
}

func TestGarbageOnStdoutIsSkipped(t *testing.T) {
	check := baseline(t)
	logs := &logBuffer{}
	m := startFaults(t, testOptions(logs), "garbage", nil)
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_echo"), map[string]string{"text": "through the noise"})
	if err != nil || res.Content != "through the noise" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	if !contains(logs.String(), "non-JSON line") {
		t.Error("noise not logged")
	}
	m.Close()
	check()
}

func TestCorruptMessageBreaksSessionAtOnce(t *testing.T) {
	check := baseline(t)
	m := startFaults(t, testOptions(nil), "normal", func(c *config.MCPServer) { c.TimeoutSecs = 20 })
	start := time.Now()
	_, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_corrupt"), map[string]any{})
	if !errors.Is(err, tool.ErrDisconnected) {
		t.Fatalf("err = %v, want ErrDisconnected", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("corrupt call failed after %s", took)
	}
	waitFor(t, 10*time.Second, "reconnect", func() bool {
		st, _ := status(m, "faults")
		return st.Connected && st.Reconnects == 1
	})
	m.Close()
	check()
}

func TestOversizedResultFailsOnlyThatCall(t *testing.T) {
	check := baseline(t)
	logs := &logBuffer{}
	m := startFaults(t, testOptions(logs), "raw", nil)
	// The raw server answers server/discover with "method not found" and
	// initialize with the oldest protocol version.
	if st, _ := status(m, "faults"); st.ProtocolVersion != "2024-11-05" {
		t.Errorf("protocol = %q, want 2024-11-05", st.ProtocolVersion)
	}
	for _, name := range []string{"mcp_faults_big", "mcp_faults_big_tail"} {
		start := time.Now()
		_, err := callTool(t.Context(), mustTool(t, m, name), map[string]int{"bytes": 20 << 20})
		if !errors.Is(err, ErrResultTooLarge) || errors.Is(err, tool.ErrDisconnected) {
			t.Fatalf("%s: err = %v, want ErrResultTooLarge", name, err)
		}
		if !contains(err.Error(), "10 MB") {
			t.Errorf("%s: error %q does not name the limit", name, err)
		}
		t.Logf("%s: 20 MiB refused in %s", name, time.Since(start))
	}
	// An oversized notification is dropped; the answer after it arrives.
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_big_notify"), map[string]int{"bytes": 11 << 20})
	if err != nil || res.Content != "after the notification" {
		t.Fatalf("big_notify = %+v, %v", res, err)
	}
	res, err = callTool(t.Context(), mustTool(t, m, "mcp_faults_echo"), map[string]string{"text": "fine"})
	if err != nil || res.Content != "fine" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	if st, _ := status(m, "faults"); st.Reconnects != 0 || !st.Connected {
		t.Errorf("status after oversized results = %+v", st)
	}
	m.Close()
	check()
}

func TestResultJustUnderTheCapPasses(t *testing.T) {
	check := baseline(t)
	o := testOptions(nil)
	o.MaxResultBytes = 1 << 20
	m := startFaults(t, o, "raw", nil)
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_big"), map[string]int{"bytes": 1<<20 - 200})
	if err != nil || len(res.Content) != 1<<20-200 {
		t.Fatalf("result under the cap: %d bytes, %v", len(res.Content), err)
	}
	_, err = callTool(t.Context(), mustTool(t, m, "mcp_faults_big"), map[string]int{"bytes": 1 << 20})
	if !errors.Is(err, ErrResultTooLarge) || !contains(err.Error(), "1 MB limit") {
		t.Fatalf("result over the cap: %v", err)
	}
	m.Close()
	check()
}

func TestListChangedRefreshesTools(t *testing.T) {
	check := baseline(t)
	var changes atomic.Int32
	m := startFaults(t, testOptions(nil), "normal", nil)
	m.OnToolsChanged(func() { changes.Add(1) })
	before := changes.Load()
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_add_tool"), map[string]string{"name": "Fresh-Tool"})
	if err != nil || res.Content != "added" {
		t.Fatalf("add_tool = %+v, %v", res, err)
	}
	waitFor(t, 5*time.Second, "the new tool", func() bool { return findTool(m, "mcp_faults_fresh_tool") != nil })
	waitFor(t, 5*time.Second, "the change callback", func() bool { return changes.Load() > before })
	res, err = callTool(t.Context(), mustTool(t, m, "mcp_faults_fresh_tool"), nil)
	if err != nil || res.Content != "i am Fresh-Tool" {
		t.Fatalf("new tool = %+v, %v", res, err)
	}
	m.Close()
	check()
}

func TestProgressExtendsDeadlineUpToHardCap(t *testing.T) {
	check := baseline(t)
	o := testOptions(nil)
	o.HardCapFactor = 2
	m := startFaults(t, o, "normal", func(c *config.MCPServer) { c.TimeoutSecs = 1 })
	prog := mustTool(t, m, "mcp_faults_progress")
	if got := prog.Spec().TimeoutSecs; got != 2 {
		t.Errorf("spec timeout = %d, want the hard cap 2", got)
	}

	var mu sync.Mutex
	var msgs []string
	call := &tool.Call{
		Args: []byte(`{"steps":6,"interval_ms":250}`),
		Progress: func(msg string, p, total float64) {
			mu.Lock()
			msgs = append(msgs, msg+"="+strconv.FormatFloat(p, 'f', 0, 64)+"/"+strconv.FormatFloat(total, 'f', 0, 64))
			mu.Unlock()
		},
	}
	start := time.Now()
	res, err := prog.Call(t.Context(), call)
	if err != nil || res.Content != "done after 6 steps" {
		t.Fatalf("1.5 s of progress with a 1 s timeout = %+v, %v", res, err)
	}
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Errorf("call took %s", took)
	}
	mu.Lock()
	// The last notification may lose the race with the result it
	// precedes (responses and notifications are handled apart); it is
	// of no use once the result is in.
	want := []string{"step 1=1/6", "step 2=2/6", "step 3=3/6", "step 4=4/6", "step 5=5/6", "step 6=6/6"}
	if len(msgs) < 5 || !slices.Equal(msgs, want[:len(msgs)]) {
		t.Errorf("progress = %v, want %v", msgs, want)
	}
	mu.Unlock()

	// Progress every 250 ms for 5 s: alive all along, but past the 2 s cap.
	start = time.Now()
	_, err = callTool(t.Context(), prog, map[string]int{"steps": 20, "interval_ms": 250})
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || !contains(err.Error(), "longest a call may take") {
		t.Fatalf("err = %v, want the hard cap", err)
	}
	if took < 1900*time.Millisecond || took > 3500*time.Millisecond {
		t.Errorf("hard cap hit after %s, want about 2s", took)
	}
	m.Close()
	check()
}

func TestSlowDrip(t *testing.T) {
	check := baseline(t)
	m := startFaults(t, testOptions(nil), "drip", nil)
	msg := strings.Repeat("drip ", 400)
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_echo"), map[string]string{"text": msg})
	if err != nil || res.Content != msg {
		t.Fatalf("dripped echo: %d bytes, %v", len(res.Content), err)
	}
	m.Close()
	check()
}

func TestEnvironmentIsCleared(t *testing.T) {
	check := baseline(t)
	realPath, _ := os.LookupEnv("PATH")
	env := map[string]string{
		"PATH":       realPath,
		"HOME":       "/home/daemon",
		"TMPDIR":     "/tmp/agentd",
		"GITHUB_PAT": "ghp_passed",
		"AWS_SECRET": "not-listed",
		"OPENAI_KEY": "not-listed",
	}
	o := testOptions(nil)
	o.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	o.Home = "/home/agentd"
	m := startFaults(t, o, "normal", func(c *config.MCPServer) { c.Env = []string{"GITHUB_PAT", "UNSET_VAR"} })
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_environ"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := status(m, "faults"); contains(fmt.Sprint(st), "ghp_passed") {
		t.Error("status holds an env value")
	}
	got := strings.Split(res.Content, "\n")
	want := []string{"GITHUB_PAT=ghp_passed", "HOME=/home/agentd", "PATH=" + realPath, "TMPDIR=/tmp/agentd"}
	if !slices.Equal(got, want) {
		t.Errorf("child environment = %q, want %q", got, want)
	}
	m.Close()
	check()
}

func TestNoOrphansOnCloseRemoveAndReconnect(t *testing.T) {
	check := baseline(t)
	m := startFaults(t, testOptions(nil), "normal", nil)
	spawn := func() (pgid, grandchild int) {
		t.Helper()
		pgid = pgidOf(t, m, "faults")
		res, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_spawn"), nil)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(res.Content)
		if err != nil || syscall.Kill(pid, 0) != nil {
			t.Fatalf("grandchild %q not running: %v", res.Content, err)
		}
		return pgid, pid
	}

	// A crash takes the grandchild with it.
	pgid, pid := spawn()
	_, _ = callTool(t.Context(), mustTool(t, m, "mcp_faults_crash"), nil)
	waitGone(t, "grandchild after crash", pid)
	waitGone(t, "group after crash", -pgid)
	waitConnected(t, m, "faults")

	// Remove kills the group.
	pgid, pid = spawn()
	if err := m.Remove(t.Context(), "faults"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "grandchild after Remove", pid)
	waitGone(t, "group after Remove", -pgid)
	if findTool(m, "mcp_faults_echo") != nil {
		t.Error("tools left after Remove")
	}
	if err := m.Remove(t.Context(), "faults"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("second Remove = %v", err)
	}

	// Close kills the group.
	if err := m.Add(t.Context(), faultServer(t, "faults", "normal")); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "faults")
	pgid, pid = spawn()
	m.Close()
	waitGone(t, "grandchild after Close", pid)
	waitGone(t, "group after Close", -pgid)
	check()
}

func TestRemoveFailsInflightCall(t *testing.T) {
	check := baseline(t)
	m := startFaults(t, testOptions(nil), "normal", func(c *config.MCPServer) { c.TimeoutSecs = 30 })
	var changes atomic.Int32
	m.OnToolsChanged(func() { changes.Add(1) })
	hang := mustTool(t, m, "mcp_faults_hang")
	errc := callArrived(t, context.Background(), hang)
	start := time.Now()
	if err := m.Remove(t.Context(), "faults"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, tool.ErrDisconnected) {
			t.Errorf("in-flight call error = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("in-flight call still running after Remove")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Remove and failing the call took %s", took)
	}
	// A call through the stale tool value fails the same way.
	if _, err := callTool(t.Context(), hang, nil); !errors.Is(err, tool.ErrDisconnected) {
		t.Errorf("call after Remove = %v", err)
	}
	waitFor(t, 5*time.Second, "change callback", func() bool { return changes.Load() > 0 })
	m.Close()
	check()
}

func TestOneBadServerBlocksNoOther(t *testing.T) {
	check := baseline(t)
	m := newTestManager(t, testOptions(nil))
	silent := config.MCPServer{Name: "silent", Transport: config.MCPTransport{Type: TransportStdio, Command: "sleep", Args: []string{"300"}}}
	missing := config.MCPServer{Name: "missing", Transport: config.MCPTransport{Type: TransportStdio, Command: "no-such-mcp-server-binary"}}
	invalid := config.MCPServer{Name: "invalid", Transport: config.MCPTransport{Type: "carrier-pigeon"}}
	m.Start(t.Context(), []config.MCPServer{silent, missing, invalid, faultServer(t, "good", "normal")})
	start := time.Now()
	waitConnected(t, m, "good")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("good server took %s", took)
	}
	waitFor(t, 5*time.Second, "missing to fail", func() bool {
		st, _ := status(m, "missing")
		return st.State == StateFailed && contains(st.LastError, "not found")
	})
	if st, _ := status(m, "silent"); st.State != StateConnecting || st.Connected {
		t.Errorf("silent = %+v", st)
	}
	if st, ok := status(m, "invalid"); !ok || st.State != StateFailed || !contains(st.LastError, "carrier-pigeon") {
		t.Errorf("invalid = %+v", st)
	}
	// A call to a failed server fails at once.
	if _, err := m.server("missing").awaitSession(t.Context()); !errors.Is(err, tool.ErrDisconnected) {
		t.Errorf("await on failed server = %v", err)
	}
	// Close interrupts the connect still waiting on the silent server.
	pgid := m.server("silent").sessPgid()
	start = time.Now()
	m.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %s", took)
	}
	if pgid > 0 {
		waitGone(t, "silent server", -pgid)
	}
	check()
}

func TestCollisionsKeepTheFirstAndAreReported(t *testing.T) {
	check := baseline(t)
	m := newTestManager(t, testOptions(nil))
	if err := m.Add(t.Context(), faultServer(t, "c", "collide")); err != nil {
		t.Fatal(err)
	}
	st := waitConnected(t, m, "c")
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_c_a_b"), nil)
	if err != nil || res.Content != "called A_B" {
		t.Errorf("mcp_c_a_b = %+v, %v; want the first by upstream name (A_B)", res, err)
	}
	if len(st.Collisions) != 2 {
		t.Errorf("collisions = %q, want 2", st.Collisions)
	}

	// Server "x-y" tool "echo" and server "x" tool "y_echo" both become
	// mcp_x_y_echo: the server added first keeps it, and adding the
	// second changes no name of the first.
	if err := m.Add(t.Context(), faultServer(t, "x-y", "normal")); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "x-y")
	var before []string
	for _, tl := range m.Tools() {
		before = append(before, tl.Spec().Name)
	}
	if err := m.Add(t.Context(), faultServer(t, "x", "normal")); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "x")
	if _, err := callTool(t.Context(), mustTool(t, m, "mcp_x_add_tool"), map[string]string{"name": "y_echo"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the collision to be reported", func() bool {
		st, _ := status(m, "x")
		return len(st.Collisions) == 1 && contains(st.Collisions[0], "mcp_x_y_echo")
	})
	var after []string
	for _, tl := range m.Tools() {
		after = append(after, tl.Spec().Name)
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			t.Errorf("tool %s disappeared when server x was added", n)
		}
	}
	server, upstream, _ := UpstreamName(mustTool(t, m, "mcp_x_y_echo"))
	if server != "x-y" || upstream != "echo" {
		t.Errorf("mcp_x_y_echo belongs to %s/%s, want x-y/echo", server, upstream)
	}
	if err := m.Add(t.Context(), faultServer(t, "X", "normal")); !errors.Is(err, errDuplicate) {
		t.Errorf("adding X next to x = %v", err)
	}
	m.Close()
	check()
}

func TestAllowedTools(t *testing.T) {
	check := baseline(t)
	tests := []struct {
		name    string
		allowed *[]string
		want    []string
	}{
		{"globs", &[]string{"ec*", "slow", "missing"}, []string{"mcp_g_echo", "mcp_g_slow"}},
		{"none", &[]string{}, nil},
	}
	logs := &logBuffer{}
	m := newTestManager(t, testOptions(logs))
	bad := faultServer(t, "g", "normal")
	bad.AllowedTools = &[]string{"echo", "["}
	if err := m.Add(t.Context(), bad); err == nil || !contains(err.Error(), "bad pattern") {
		t.Fatalf("bad pattern: Add = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := faultServer(t, "g", "normal")
			cfg.AllowedTools = tt.allowed
			err := m.Add(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Remove(t.Context(), "g")
			st := waitConnected(t, m, "g")
			var got []string
			for _, tl := range st.Tools {
				got = append(got, tl.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tools = %v, want %v", got, tt.want)
			}
		})
	}
	if contains(logs.String(), "exposes all its tools") {
		t.Error("warned about a server with allowed_tools")
	}
	if err := m.Add(t.Context(), faultServer(t, "all", "normal")); err != nil {
		t.Fatal(err)
	}
	if !contains(logs.String(), "exposes all its tools") {
		t.Error("no warning for a server without allowed_tools")
	}
	m.Close()
	check()
}

func TestStartupFailureIsExplainedWithoutSecrets(t *testing.T) {
	check := baseline(t)
	o := testOptions(nil)
	o.LookupEnv = func(k string) (string, bool) {
		switch k {
		case "PATH":
			return os.LookupEnv("PATH")
		case "MY_TOKEN":
			return "tok-0451-secret", true
		}
		return "", false
	}
	m := newTestManager(t, o)
	err := m.Add(t.Context(), config.MCPServer{
		Name: "dies",
		Env:  []string{"MY_TOKEN"},
		Transport: config.MCPTransport{Type: TransportStdio, Command: "sh",
			Args: []string{"-c", `echo "starting with token $MY_TOKEN" >&2; exit 7`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the failure", func() bool {
		st, _ := status(m, "dies")
		return st.State == StateFailed
	})
	st, _ := status(m, "dies")
	if !contains(st.LastError, "exit status 7") || !contains(st.LastError, "starting with token [redacted]") || contains(st.LastError, "tok-0451") {
		t.Errorf("last error = %q", st.LastError)
	}
	m.Close()
	check()
}
