package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startTasksUpstream runs interop/mcp-gateway-tasks.mjs as an upstream
// MCP server that declares tasks (the TypeScript SDK's experimental tasks
// server, InMemoryTaskStore) on a loopback port, and returns its URL.
func startTasksUpstream(t *testing.T, nodeBin string) string {
	t.Helper()
	addr := freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(nodeBin, nodeModule(t, "../mcp-gateway-tasks.mjs"), "server", port)
	cmd.Dir = t.TempDir()
	cmd.Env = env{home: cmd.Dir}.cmdEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("tasks upstream output:\n%s", logs.String())
		}
	})
	waitListening(t, addr)
	return "http://" + addr + "/"
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
// handle; through one to an upstream without tasks (server-everything)
// agentd runs the call as its own task. A task cancelled through the
// gateway is cancelled.
func TestGatewayTasksTS(t *testing.T) {
	nodeBin := node(t)
	cases := []struct {
		name, tool, args, cancelArgs, text string
		upstream                            func(t *testing.T) string
		idPrefix                            string
	}{
		{
			name: "upstream-tasks", tool: "delay", args: `{"ms":1500}`, cancelArgs: `{"ms":600000}`, text: "waited 1500 ms",
			upstream: func(t *testing.T) string { return startTasksUpstream(t, nodeBin) },
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
			url := startGateway(t, fmt.Sprintf(`
allow_private = true

[mcp_servers.transport]
type = "http"
url = %q
`, up))

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
		})
	}
}
