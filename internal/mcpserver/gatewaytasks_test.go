package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
)

// field walks a decoded JSON value along path.
func field(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// TestGatewayTasksRunByAgentd: a gateway to an upstream without tasks (a
// go-sdk server) declares tasks, runs a task-augmented call itself, and
// the call survives the session that started it: another session follows
// it to its result, lists it and cancels another.
func TestGatewayTasksRunByAgentd(t *testing.T) {
	ts, upstream := upstreamServer(t)
	release := make(chan struct{})
	running, stopped := make(chan struct{}), make(chan struct{})
	upstream.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	upstream.AddTool(&mcp.Tool{Name: "forever", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(running)
			<-ctx.Done()
			close(stopped)
			return nil, ctx.Err()
		})
	h := gatewayHarness(t, ts.URL, harnessOptions{cfg: config.MCPServe{Gateways: []string{"up"}, TaskTTLSecs: 60, TaskMaxTTLSecs: 120}})
	srv := h.httpServer(t)
	url := srv.URL + "/mcp/gateway/up"

	first := httpClient(t, url, nil)
	waitFor(t, func() bool { return strings.Contains(strings.Join(toolNames(t, first), ","), "forever") })
	if caps := first.InitializeResult().Capabilities; caps == nil {
		t.Fatal("no capabilities")
	}
	_, _, init := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if field(init, "result", "capabilities", "tasks", "requests", "tools", "call") == nil {
		t.Errorf("gateway initialize = %v, want capabilities.tasks.requests.tools.call", init)
	}
	s1 := map[string]string{headerSessionID: first.ID(), headerProtocolVersion: "2025-11-25"}
	_, _, list := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, s1)
	tools, _ := field(list, "result", "tools").([]any)
	for _, tl := range tools {
		if field(tl, "execution", "taskSupport") != "optional" {
			t.Errorf("gateway tool %v: want execution.taskSupport optional", tl)
		}
	}

	_, _, created := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{},"task":{"ttl":600000}}}`, s1)
	id, _ := field(created, "result", "task", "taskId").(string)
	if !strings.HasPrefix(id, "gwl-") || field(created, "result", "task", "status") != "working" || field(created, "result", "task", "ttl") != float64(120000) {
		t.Fatalf("task-augmented call = %v, want agentd's own task, working, ttl bounded to 120000", created)
	}
	// The session that started it goes away; the call goes on.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	second := httpClient(t, url, nil)
	s2 := map[string]string{headerSessionID: second.ID(), headerProtocolVersion: "2025-11-25"}
	_, _, got := post(t, url, `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"`+id+`"}}`, s2)
	if field(got, "result", "status") != "working" {
		t.Errorf("tasks/get from a new session = %v, want working", got)
	}
	close(release)
	_, _, res := post(t, url, `{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"`+id+`"}}`, s2)
	if content, _ := field(res, "result", "content").([]any); len(content) != 1 || field(content[0], "text") != "slow done" ||
		field(res, "result", "_meta", relatedTaskKey, "taskId") != id {
		t.Errorf("tasks/result = %v, want the upstream's answer tied to the task", res)
	}
	_, _, got = post(t, url, `{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"`+id+`"}}`, s2)
	if field(got, "result", "status") != "completed" {
		t.Errorf("tasks/get after the result = %v, want completed", got)
	}

	_, _, created = post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"forever","arguments":{},"task":{}}}`, s2)
	other, _ := field(created, "result", "task", "taskId").(string)
	<-running // the call reached the upstream
	_, _, cancelled := post(t, url, `{"jsonrpc":"2.0","id":8,"method":"tasks/cancel","params":{"taskId":"`+other+`"}}`, s2)
	if field(cancelled, "result", "status") != "cancelled" {
		t.Errorf("tasks/cancel = %v, want cancelled", cancelled)
	}
	<-stopped // the upstream's call was cancelled too
	_, _, again := post(t, url, `{"jsonrpc":"2.0","id":9,"method":"tasks/cancel","params":{"taskId":"`+other+`"}}`, s2)
	if field(again, "error", "code") != float64(-32602) {
		t.Errorf("cancelling an ended task = %v, want -32602", again)
	}

	_, _, listed := post(t, url, `{"jsonrpc":"2.0","id":10,"method":"tasks/list"}`, s2)
	tasks, _ := field(listed, "result", "tasks").([]any)
	if len(tasks) != 2 || field(tasks[0], "taskId") != other || field(tasks[1], "taskId") != id || field(tasks[1], "status") != "completed" {
		t.Errorf("tasks/list = %v, want both tasks, newest first", listed)
	}
	_, _, unknown := post(t, url, `{"jsonrpc":"2.0","id":11,"method":"tasks/get","params":{"taskId":"gwl-nope"}}`, s2)
	if field(unknown, "error", "code") != float64(-32602) {
		t.Errorf("tasks/get of an unknown id = %v, want -32602", unknown)
	}
	// The main endpoint does not know the gateway's tasks.
	_, _, mainGet := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":12,"method":"tasks/get","params":{"taskId":"`+id+`"}}`, nil)
	if field(mainGet, "result") != nil {
		t.Errorf("the main endpoint answered a gateway task: %v", mainGet)
	}
}

// TestGatewayTaskHandles: a handle opens only for its gateway and
// principal, and a changed byte makes it unknown.
func TestGatewayTaskHandles(t *testing.T) {
	h := gatewayHarness(t, "http://127.0.0.1:1/", harnessOptions{cfg: config.MCPServe{Gateways: []string{"up"}}})
	g := h.srv.gwTasks
	id, err := g.seal(handleClaims{Gateway: "up", Session: "s-1", Task: "t-1", Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := g.open("up", "alice", id); err != nil || c.Task != "t-1" || c.Session != "s-1" {
		t.Fatalf("open = %+v, %v", c, err)
	}
	tampered := []byte(id)
	tampered[len(tampered)-3] ^= 1
	for _, tc := range []struct{ name, gw, p, id string }{
		{"another principal", "up", "bob", id},
		{"the local principal", "up", "", id},
		{"another gateway", "down", "alice", id},
		{"tampered", "up", "alice", string(tampered)},
		{"not a handle", "up", "alice", "t-1"},
		{"bad base64", "up", "alice", handlePrefix + "!!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := g.open(tc.gw, tc.p, tc.id); !errors.Is(err, errUnknownTask) {
				t.Errorf("open = %v, want unknown task", err)
			}
		})
	}
}

// FuzzGatewayTaskHandle: no input makes open panic, and only what seal
// made opens: the one claim set sealed here (under a fixed key, so the
// workers' seals open too).
func FuzzGatewayTaskHandle(f *testing.F) {
	g := newGatewayTasks(&Server{opts: Options{Replicas: &Replicas{Keys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}}})
	defer g.close()
	sealed := handleClaims{Gateway: "up", Session: "s", Task: "t", Principal: "p"}
	good, err := g.seal(sealed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(handlePrefix)
	f.Add(handlePrefix + "AAAA")
	f.Add("gwl-0123")
	f.Fuzz(func(t *testing.T, id string) {
		c, err := g.open("up", "p", id)
		if err == nil && c != sealed {
			t.Fatalf("%q opened as %+v", id, c)
		}
	})
}

// TestGatewayTaskHandleKeys: a handle sealed under the replicas' old key
// opens once a new key seals; one sealed by another secret does not.
func TestGatewayTaskHandleKeys(t *testing.T) {
	oldKey, newKey := []byte("old-key-old-key-old-key-old-key-"), []byte("new-key-new-key-new-key-new-key-")
	before := newGatewayTasks(&Server{opts: Options{Replicas: &Replicas{Keys: [][]byte{oldKey}}}})
	after := newGatewayTasks(&Server{opts: Options{Replicas: &Replicas{Keys: [][]byte{newKey, oldKey}}}})
	alone := newGatewayTasks(&Server{})
	for _, g := range []*gatewayTasks{before, after, alone} {
		defer g.close()
	}
	id, err := before.seal(handleClaims{Gateway: "up", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := after.open("up", "", id); err != nil || c.Task != "t" {
		t.Errorf("after rotation: %+v, %v", c, err)
	}
	if _, err := alone.open("up", "", id); !errors.Is(err, errUnknownTask) {
		t.Errorf("another secret opened a handle: %v", err)
	}
}
