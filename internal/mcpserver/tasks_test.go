package mcpserver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

func TestMarkTask(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		version string // MCP-Protocol-Version
		forged  string // the client's own taskHeader
		want    string
	}{
		{name: "task-augmented call", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{ "ttl": 5000 }}}`, want: `{"ttl":5000}`},
		{name: "empty task", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{}}}`, want: `{}`},
		{name: "plain call", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`},
		{name: "forged header dropped", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, forged: `{"ttl":1}`},
		{name: "forged header replaced", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{"ttl":2}}}`, forged: `{"ttl":1}`, want: `{"ttl":2}`},
		{name: "task not an object", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":"soon"}}`},
		{name: "task null", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":null}}`},
		{name: "another method", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"task":{}}}`},
		{name: "task in the arguments only", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"task":{}}}}`},
		{name: "2026-07-28 request", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{}}}`, version: statelessVersion},
		{name: "malformed", body: `{"method":"tools/call","params":{"task":{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			if tt.version != "" {
				r.Header.Set(headerProtocolVersion, tt.version)
			}
			if tt.forged != "" {
				r.Header.Set(taskHeader, tt.forged)
			}
			markTask(r, []byte(tt.body))
			if got := r.Header.Get(taskHeader); got != tt.want {
				t.Errorf("header %q, want %q", got, tt.want)
			}
			if n := len(r.Header.Values(taskHeader)); n > 1 {
				t.Errorf("%d headers, want at most one", n)
			}
		})
	}
}

// FuzzMarkTask: whatever the body and whatever header the client sent,
// the header markTask leaves is absent or the compact JSON object of the
// body's params.task of a tools/call.
func FuzzMarkTask(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{"ttl":5000}}}`, `{"ttl":1}`)
	f.Add(`{"method":"tools/call","params":{"task":[]}}`, ``)
	f.Add(`{"method":"tools/call","params":{"task":{"a":"\"task\""}}}`, `x`)
	f.Fuzz(func(t *testing.T, body, forged string) {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set(taskHeader, forged)
		markTask(r, []byte(body))
		got := r.Header.Get(taskHeader)
		if got == "" {
			return
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Task map[string]any `json:"task"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.Method != "tools/call" || msg.Params.Task == nil {
			t.Fatalf("header %q for a body that is no task-augmented tools/call: %q", got, body)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatalf("header %q is not a JSON object: %v", got, err)
		}
	})
}

func TestTaskTTL(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	tests := []struct {
		name         string
		def, max     int // config seconds
		asked        *float64
		want         time.Duration
		wantFromWire string
	}{
		{name: "none asked: the default", def: 3600, max: 86400, want: time.Hour},
		{name: "asked", def: 3600, max: 86400, asked: ms(60000), want: time.Minute},
		{name: "asked more than the maximum", def: 3600, max: 86400, asked: ms(1e12), want: 24 * time.Hour},
		{name: "zero asked: the default", def: 3600, max: 86400, asked: ms(0), want: time.Hour},
		{name: "negative asked: the default", def: 3600, max: 86400, asked: ms(-5), want: time.Hour},
		{name: "no maximum", def: 60, max: 0, asked: ms(1e9), want: 1e9 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := &taskServer{s: &Server{opts: Options{Config: config.MCPServe{TaskTTLSecs: tt.def, TaskMaxTTLSecs: tt.max}}}}
			if got := ts.ttl(tt.asked); got != tt.want {
				t.Errorf("ttl %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTaskWire(t *testing.T) {
	ts := &taskServer{s: &Server{opts: Options{Config: config.MCPServe{TaskPollIntervalMillis: 250}}}}
	created := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		task Task
		want string
	}{
		{name: "working", task: Task{ID: "a", Status: TaskWorking, Created: created, Updated: created, TTL: time.Minute},
			want: `{"taskId":"a","status":"working","createdAt":"2026-11-27T10:00:00Z","lastUpdatedAt":"2026-11-27T10:00:00Z","ttl":60000,"pollInterval":250}`},
		{name: "terminal: no poll", task: Task{ID: "b", Status: TaskFailed, Message: "boom", Created: created, Updated: created.Add(time.Second)},
			want: `{"taskId":"b","status":"failed","statusMessage":"boom","createdAt":"2026-11-27T10:00:00Z","lastUpdatedAt":"2026-11-27T10:00:01Z","ttl":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(ts.wire(tt.task))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got  %s\nwant %s", b, tt.want)
			}
		})
	}
	if !expired(Task{Created: created, TTL: time.Minute}, created.Add(61*time.Second)) || expired(Task{Created: created, TTL: time.Minute}, created.Add(59*time.Second)) || expired(Task{Created: created}, created.Add(1e6*time.Hour)) {
		t.Error("expired disagrees with created+ttl (or expires a task without ttl)")
	}
}

// TestTaskResultsCarryWhatTheSDKCannot: the initialize result gains
// capabilities.tasks and keeps all else; tools/list marks the task tools
// and only them.
func TestTaskResultsCarryWhatTheSDKCannot(t *testing.T) {
	ir := &mcp.InitializeResult{ProtocolVersion: "2025-11-25", ServerInfo: &mcp.Implementation{Name: "agentd", Version: "1"},
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}}
	b, err := json.Marshal(&initializeResult{ir})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.ProtocolVersion != "2025-11-25" || string(got.Capabilities["tools"]) != `{"listChanged":true}` || string(got.Capabilities["tasks"]) != string(tasksCapability) {
		t.Errorf("initialize result %s", b)
	}

	lr := &mcp.ListToolsResult{Tools: []*mcp.Tool{
		{Name: AgentToolPrefix + "a", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "file_read", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}}
	b, err = json.Marshal(&listToolsResult{lr, func(n string) bool { return strings.HasPrefix(n, AgentToolPrefix) }})
	if err != nil {
		t.Fatal(err)
	}
	var tools struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 2 || string(tools.Tools[0]["execution"]) != `{"taskSupport":"optional"}` || tools.Tools[1]["execution"] != nil || string(tools.Tools[1]["inputSchema"]) != `{"type":"object"}` {
		t.Errorf("tools/list result %s", b)
	}
	if b, err := json.Marshal(&listToolsResult{&mcp.ListToolsResult{}, func(string) bool { return true }}); err != nil || !json.Valid(b) {
		t.Errorf("empty tool list: %s, %v", b, err)
	}
}

// recordingTasks is an in-memory Tasks for the edge's own tests: it
// records the calls it starts (the real one, over the A2A task store, is
// tested end to end in e2e/tasks_test.go).
type recordingTasks struct {
	mu     sync.Mutex
	starts []TaskCall
}

func (r *recordingTasks) TaskTool(string) bool { return false }

func (r *recordingTasks) Start(_ context.Context, c TaskCall) (Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, c)
	now := time.Now()
	return Task{ID: "task-" + strconv.Itoa(len(r.starts)), Status: TaskWorking, Created: now, Updated: now, TTL: c.TTL}, nil
}

func (r *recordingTasks) Get(_ context.Context, id string) (Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == "expired" {
		// Kept by the store, but past the ttl its client was granted.
		created := time.Now().Add(-time.Hour)
		return Task{ID: id, Status: TaskCompleted, Created: created, Updated: created, TTL: time.Minute}, nil
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(id, "task-")); err != nil || n < 1 || n > len(r.starts) {
		return Task{}, errUnknownTask
	}
	now := time.Now()
	return Task{ID: id, Status: TaskCompleted, Created: now, Updated: now}, nil
}

func (r *recordingTasks) Result(ctx context.Context, id string) (Task, *mcp.CallToolResult, error) {
	t, err := r.Get(ctx, id)
	return t, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + id}}}, err
}

func (r *recordingTasks) List(context.Context, string) ([]Task, string, error) { return nil, "", nil }

func (r *recordingTasks) Cancel(ctx context.Context, id string) (Task, error) { return r.Get(ctx, id) }

func (r *recordingTasks) started() []TaskCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.starts)
}

// TestTasksOnTheWire drives the edge over HTTP with raw JSON-RPC: the
// initialize result declares tasks, tools/list marks the agent tools, a
// task-augmented tools/call of an agent tool starts a task (with the ttl
// granted) instead of running the agent, the task methods answer within
// the session, and a client's own hand-over header starts nothing.
// 2026-07-28 requests see none of it.
func TestTasksOnTheWire(t *testing.T) {
	h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Text: "ran"}),
		cfg: config.MCPServe{TaskTTLSecs: 60, TaskMaxTTLSecs: 120, TaskPollIntervalMillis: 500}})
	rec := &recordingTasks{}
	h.srv.SetTasks(rec)
	srv := h.httpServer(t)
	url := srv.URL + "/mcp"
	field := func(v any, path ...string) any {
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		return v
	}

	_, _, init := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	var wantCap any
	if err := json.Unmarshal(tasksCapability, &wantCap); err != nil {
		t.Fatal(err)
	}
	if got := field(init, "result", "capabilities", "tasks"); !reflect.DeepEqual(got, wantCap) || field(init, "result", "capabilities", "tools", "listChanged") != true {
		t.Errorf("initialize capabilities = %v, want tasks %s beside the SDK's (result %v)", field(init, "result", "capabilities"), tasksCapability, init)
	}

	cs := httpClient(t, url, nil)
	session := map[string]string{headerSessionID: cs.ID(), headerProtocolVersion: "2025-11-25"}
	_, _, list := post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, session)
	tools, _ := field(list, "result", "tools").([]any)
	if len(tools) == 0 || field(tools[0], "name") != "agentd_agent_helper_bot" || field(tools[0], "execution", "taskSupport") != "optional" {
		t.Errorf("tools/list = %v, want the agent tool with taskSupport optional", list)
	}

	_, _, created := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentd_agent_helper_bot","arguments":{"message":"hi"},"task":{"ttl":600000}}}`, session)
	if field(created, "result", "task", "taskId") != "task-1" || field(created, "result", "task", "status") != "working" ||
		field(created, "result", "task", "ttl") != float64(120000) || field(created, "result", "task", "pollInterval") != float64(500) {
		t.Errorf("task-augmented call = %v, want task-1 working, ttl bounded to 120000, pollInterval 500", created)
	}
	if s := rec.started(); len(s) != 1 || s[0].Agent != "helper-bot" || s[0].TTL != 2*time.Minute || string(s[0].Arguments) != `{"message":"hi"}` {
		t.Errorf("started %+v", s)
	}

	_, _, got := post(t, url, `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"task-1"}}`, session)
	if field(got, "result", "status") != "completed" {
		t.Errorf("tasks/get = %v", got)
	}
	_, _, res := post(t, url, `{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"task-1"}}`, session)
	if content, _ := field(res, "result", "content").([]any); len(content) != 1 || field(content[0], "text") != "done task-1" ||
		field(res, "result", "_meta", relatedTaskKey, "taskId") != "task-1" {
		t.Errorf("tasks/result = %v", res)
	}
	_, _, unknown := post(t, url, `{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":"nope"}}`, session)
	if field(unknown, "error", "code") != float64(-32602) {
		t.Errorf("tasks/get of an unknown id = %v, want -32602", unknown)
	}

	_, _, expiredGet := post(t, url, `{"jsonrpc":"2.0","id":10,"method":"tasks/get","params":{"taskId":"expired"}}`, session)
	if field(expiredGet, "error", "code") != float64(-32602) {
		t.Errorf("tasks/get of a task past its ttl = %v, want -32602", expiredGet)
	}

	forged := map[string]string{headerSessionID: cs.ID(), headerProtocolVersion: "2025-11-25", taskHeader: `{"ttl":1}`}
	_, _, plain := post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"agentd_agent_helper_bot","arguments":{"message":"hi"}}}`, forged)
	if content, _ := field(plain, "result", "content").([]any); len(content) == 0 || field(content[0], "text") != "ran" || len(rec.started()) != 1 {
		t.Errorf("a call with a forged hand-over header = %v (tasks started: %d), want the agent's answer and no task", plain, len(rec.started()))
	}

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	_, _, modern := post(t, url, `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{`+meta+`}}`, map[string]string{headerProtocolVersion: statelessVersion, "Mcp-Method": "tools/list"})
	if tools, _ := field(modern, "result", "tools").([]any); len(tools) == 0 || field(tools[0], "execution") != nil {
		t.Errorf("2026-07-28 tools/list = %v, want the tools without SEP-1686 execution", modern)
	}
	_, _, modernCall := postStateless(t, url, "agentd_agent_helper_bot", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"agentd_agent_helper_bot","arguments":{"message":"hi"},"task":{},`+meta+`}}`)
	if field(modernCall, "result", "task") != nil || len(rec.started()) != 1 {
		t.Errorf("2026-07-28 call with params.task = %v, want it served as a plain call", modernCall)
	}
}
