package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/conformancetest"
)

// startTasksUpstream runs interop/mcp-gateway-tasks.mjs as an upstream
// MCP server that declares tasks (the TypeScript SDK's experimental tasks
// server, InMemoryTaskStore) on a loopback port, and returns its URL.
func startTasksUpstream(t *testing.T, nodeBin string) string {
	url, _ := restartableTasksUpstream(t, nodeBin)
	return url
}

// restartableTasksUpstream is startTasksUpstream, with a function that
// kills the upstream and starts a new one on the same port (it forgets
// its sessions and tasks).
func restartableTasksUpstream(t *testing.T, nodeBin string) (string, func()) {
	t.Helper()
	addr := freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	var logs bytes.Buffer
	var cmd *exec.Cmd
	start := func() {
		cmd = exec.Command(nodeBin, nodeModule(t, "../mcp-gateway-tasks.mjs"), "server", port)
		cmd.Dir = t.TempDir()
		cmd.Env = env{home: cmd.Dir}.cmdEnv()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitListening(t, addr)
	}
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	start()
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("tasks upstream output:\n%s", logs.String())
		}
	})
	return "http://" + addr + "/", func() { stop(); start() }
}

// runGatewayTasksClient runs one client phase of mcp-gateway-tasks.mjs
// against url and returns its steps by name.
func runGatewayTasksClient(t *testing.T, nodeBin, url string, args ...string) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{nodeModule(t, "../mcp-gateway-tasks.mjs"), "client", url}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = env{home: cmd.Dir}.cmdEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tasks client %v: %v\n%s\n%s", args, err, stdout.String(), stderr.String())
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("tasks client printed %q: %v", sc.Text(), err)
		}
		steps[fmt.Sprint(m["step"])] = m
	}
	return steps
}

// TestGatewayTasksTS: the TypeScript SDK's experimental tasks client
// calls a long upstream tool through a gateway as a task, disconnects at
// once, and from a new session follows the task to its end and fetches
// its result. Through a gateway to an upstream that declares tasks (the
// TS SDK's tasks server) the upstream's task passes through under a
// handle, over HTTP and over stdio; through one to an upstream without
// tasks (server-everything)
// agentd runs the call as its own task. A task cancelled through the
// gateway is cancelled. When the upstream with tasks restarts, its old
// tasks are unknown and new ones pass through on a new task session.
func TestGatewayTasksTS(t *testing.T) {
	nodeBin := node(t)
	var restart func() // the upstream with tasks'
	cases := []struct {
		name, tool, args, cancelArgs, text string
		upstream                           func(t *testing.T) string
		idPrefix                           string
	}{
		{
			name: "upstream-tasks", tool: "delay", args: `{"ms":1500}`, cancelArgs: `{"ms":600000}`, text: "waited 1500 ms",
			upstream: func(t *testing.T) string {
				url, r := restartableTasksUpstream(t, nodeBin)
				restart = r
				return url
			},
			idPrefix: "gwt1.",
		},
		{
			// The same server over stdio: the task goes over agentd's
			// link itself.
			name: "upstream-tasks-stdio", tool: "delay", args: `{"ms":1500}`, cancelArgs: `{"ms":600000}`, text: "waited 1500 ms",
			upstream: func(t *testing.T) string { return "stdio" },
			idPrefix: "gwt1.",
		},
		{
			name: "no-upstream-tasks", tool: "trigger-long-running-operation", args: `{"duration":2,"steps":2}`, cancelArgs: `{"duration":600,"steps":2}`,
			text: "Long running operation completed",
			upstream: func(t *testing.T) string {
				addr := freeAddr(t)
				_, port, _ := strings.Cut(addr, ":")
				cmd := exec.Command(nodeBin, nodeModule(t, "@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp")
				cmd.Env = append(env{home: t.TempDir()}.cmdEnv(), "PORT="+port)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					_ = cmd.Wait()
				})
				waitListening(t, addr)
				return "http://" + addr + "/mcp"
			},
			idPrefix: "gwl-",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := tc.upstream(t)
			transport := fmt.Sprintf("allow_private = true\n\n[mcp_servers.transport]\ntype = \"http\"\nurl = %q\n", up)
			if up == "stdio" {
				transport = fmt.Sprintf("[mcp_servers.transport]\ntype = \"stdio\"\ncommand = %q\nargs = [%q, \"server\", \"stdio\"]\n",
					nodeBin, nodeModule(t, "../mcp-gateway-tasks.mjs"))
			}
			url := startGateway(t, transport)

			s := runGatewayTasksClient(t, nodeBin, url, "start", tc.tool, tc.args)
			if c := s["capabilities"]; fmt.Sprint(c["taskSupport"]) != "optional" || c["tasks"] == nil {
				t.Fatalf("capabilities: %v (want the tasks capability and taskSupport optional)", c)
			}
			created, _ := s["created"]["task"].(map[string]any)
			id := fmt.Sprint(created["taskId"])
			if !strings.HasPrefix(id, tc.idPrefix) || created["status"] != "working" || fmt.Sprint(created["ttl"]) != "60000" {
				t.Fatalf("created task %v: want a %s… id, working, ttl 60000 (steps %v)", created, tc.idPrefix, s)
			}

			f := runGatewayTasksClient(t, nodeBin, url, "follow", id)
			if st, _ := f["statuses"]["statuses"].([]any); len(st) == 0 || st[len(st)-1] != "completed" {
				t.Fatalf("statuses %v, want to end completed", f["statuses"])
			}
			res, _ := f["result"]["result"].(map[string]any)
			content, _ := res["content"].([]any)
			if len(content) == 0 || !strings.Contains(fmt.Sprint(content[0].(map[string]any)["text"]), tc.text) {
				t.Fatalf("task result %v, want %q", f["result"], tc.text)
			}
			if meta, _ := res["_meta"].(map[string]any); meta != nil {
				if rel, _ := meta["io.modelcontextprotocol/related-task"].(map[string]any); rel != nil && fmt.Sprint(rel["taskId"]) != id {
					t.Errorf("result _meta %v names another task than %s", meta, id)
				}
			}
			if ids, _ := f["list"]["ids"].([]any); !slices.Contains(ids, any(id)) {
				t.Errorf("tasks/list %v lacks %s", ids, id)
			}

			s = runGatewayTasksClient(t, nodeBin, url, "start", tc.tool, tc.cancelArgs)
			long := fmt.Sprint(s["created"]["task"].(map[string]any)["taskId"])
			c := runGatewayTasksClient(t, nodeBin, url, "cancel", long)
			if task, _ := c["get"]["task"].(map[string]any); task["status"] != "cancelled" {
				t.Errorf("after tasks/cancel: %v, want cancelled", c)
			}
			// A made-up handle is an unknown task.
			g := runGatewayTasksClient(t, nodeBin, url, "get", tc.idPrefix+strconv.Itoa(42))
			if code := fmt.Sprint(g["get"]["code"]); code != "-32602" {
				t.Errorf("tasks/get of a made-up id: %v, want -32602", g["get"])
			}
			if tc.name != "upstream-tasks" {
				return
			}
			// The upstream restarts: its sessions and tasks are gone.
			// An old handle is an unknown task; a new task goes to a
			// new task session.
			restart()
			if g := runGatewayTasksClient(t, nodeBin, url, "get", id); fmt.Sprint(g["get"]["code"]) != "-32602" {
				t.Errorf("tasks/get of a task the upstream forgot: %v, want -32602", g["get"])
			}
			s = runGatewayTasksClient(t, nodeBin, url, "start", tc.tool, tc.args)
			again, _ := s["created"]["task"].(map[string]any)
			if !strings.HasPrefix(fmt.Sprint(again["taskId"]), "gwt1.") {
				t.Fatalf("after the upstream restarted: %v, want a passed-through task", s)
			}
			if f := runGatewayTasksClient(t, nodeBin, url, "follow", fmt.Sprint(again["taskId"])); f["statuses"]["task"].(map[string]any)["status"] != "completed" {
				t.Errorf("the task started after the restart: %v", f)
			}
		})
	}
}

// tasksScenarios are the tasks-* scenarios of the 2026-07-28 suite
// (0.2.0-alpha.12, the newest the registry serves): the SEP-2663 tasks
// extension.
var tasksScenarios = []string{
	"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields",
	"tasks-request-state-removal", "tasks-mrtr-input", "tasks-request-headers",
	"tasks-dispatch-and-envelope", "tasks-status-notifications",
	"tasks-required-task-error", "tasks-mrtr-composition",
}

// TestConformanceGatewayTasks runs the suite's tasks-* scenarios, each
// on its own (runConformance leaves them out), through a gateway to an
// upstream that declares tasks (the TS SDK's tasks server) and to one
// that does not (the go-sdk conformance server over stateful HTTP).
// Baselines: testdata/conformance-tasks-upstream-baseline.json and
// testdata/conformance-tasks-plain-baseline.json.
func TestConformanceGatewayTasks(t *testing.T) {
	nodeBin := node(t)
	for _, tc := range []struct {
		name, baseline string
		start          func(t *testing.T) string
	}{
		{"upstream-tasks", "conformance-tasks-upstream-baseline.json", func(t *testing.T) string {
			return startGateway(t, fmt.Sprintf("allow_private = true\n\n[mcp_servers.transport]\ntype = \"http\"\nurl = %q\n", startTasksUpstream(t, nodeBin)))
		}},
		{"no-upstream-tasks", "conformance-tasks-plain-baseline.json", startHTTPGateway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.start(t)
			runConformanceScenarios(t, nodeBin, "conformance-2026/dist/index.js", url, tc.baseline, tasksScenarios)
		})
	}
}

// runConformanceScenarios is runConformance for the named scenarios only,
// each run on its own, scored together against one baseline.
func runConformanceScenarios(t *testing.T, nodeBin, module, url, baseline string, scenarios []string) {
	t.Helper()
	b, err := conformancetest.Load(filepath.Join("testdata", baseline))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	expected, results := filepath.Join(dir, "expected-failures.yml"), filepath.Join(dir, "results")
	if err := b.WriteSuiteFile(expected); err != nil {
		t.Fatal(err)
	}
	var outs bytes.Buffer
	for _, sc := range scenarios {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, nodeBin, nodeModule(t, module), "server", "--url", url, "--scenario", sc,
			"--expected-failures", expected, "-o", results)
		cmd.Dir = dir
		cmd.Env = env{home: dir}.cmdEnv()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		_ = cmd.Run() // scored below, check by check
		cancel()
		fmt.Fprintf(&outs, "--- %s\n%s\n", sc, summary(out.Bytes()))
	}
	failures, n, err := b.ReadResults(results, nil)
	if err != nil {
		t.Fatalf("reading the suite's results: %v\n%s", err, outs.String())
	}
	if n != len(scenarios) {
		t.Fatalf("the suite scored %d scenarios, want %d\n%s", n, len(scenarios), outs.String())
	}
	for _, p := range conformancetest.Compare(b, failures) {
		t.Errorf("testdata/%s: %s", baseline, p)
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", outs.String())
	}
	t.Logf("%d scenarios scored, %d failed checks as the baseline expects", n, len(failures))
}
