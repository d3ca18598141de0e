package mcpserver

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
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
