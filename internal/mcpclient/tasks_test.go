package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requiredTaskList is a tools/list result that marks every tool
// execution.taskSupport "required", which mcp.Tool has no field for.
type requiredTaskList struct{ *mcp.ListToolsResult }

func (r *requiredTaskList) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.ListToolsResult)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(m["tools"], &tools); err != nil {
		return nil, err
	}
	for _, t := range tools {
		t["execution"] = json.RawMessage(`{"taskSupport":"required"}`)
	}
	m["tools"], _ = json.Marshal(tools)
	return json.Marshal(m)
}

// TestTasksNotUsedWithoutCapability: an upstream that declares no tasks
// capability is called as before, even when its tools claim task support
// (SEP-1686: a client must not task-augment a request the server did not
// declare): the tools/call carries no params.task, no task method is sent,
// and the call's record has no task.
func TestTasksNotUsedWithoutCapability(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, any, error) {
		return text("echo " + in.Message), nil, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				return &requiredTaskList{lr}, nil
			}
			return res, err
		}
	})
	var (
		mu     sync.Mutex
		bodies []string
	)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	for _, tasks := range []string{"auto", "always"} {
		t.Run(tasks, func(t *testing.T) {
			m := newTestManager(t, testOptions(nil))
			entry := httpEntry("plain", "http", ts.URL)
			entry.Headers, entry.Tasks = nil, tasks
			if err := m.Add(t.Context(), entry); err != nil {
				t.Fatal(err)
			}
			st := waitConnected(t, m, "plain")
			if st.ProtocolVersion >= "2026-07-28" {
				t.Fatalf("protocol %s: the test needs an initialize-era link, where SEP-1686 tasks live", st.ProtocolVersion)
			}
			sess, err := m.server("plain").awaitSession(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if sess.tasks.declares() || sess.tasks.supportOf("echo") != "" {
				t.Errorf("taskWatch: declared=%v support=%q; the server declared no tasks", sess.tasks.declares(), sess.tasks.supportOf("echo"))
			}
			ex := &Exchange{TaskStatus: func(u UpstreamTask) { t.Errorf("told task status %+v", u) }}
			res, err := callRelay(t.Context(), mustTool(t, m, "mcp_plain_echo"), map[string]string{"message": "hi"}, ex)
			if err != nil || res.Content != "echo hi" {
				t.Fatalf("call = %+v, %v", res, err)
			}
			if ex.Record.Task != nil {
				t.Errorf("record.Task = %+v, want none", ex.Record.Task)
			}
			mu.Lock()
			defer mu.Unlock()
			calls := 0
			for _, b := range bodies {
				var msg struct {
					Method string                     `json:"method"`
					Params map[string]json.RawMessage `json:"params"`
				}
				if json.Unmarshal([]byte(b), &msg) != nil {
					continue
				}
				if strings.HasPrefix(msg.Method, "tasks/") {
					t.Errorf("sent %s to a server without tasks", msg.Method)
				}
				if msg.Method == "tools/call" {
					calls++
					if _, ok := msg.Params["task"]; ok {
						t.Errorf("tools/call carried params.task: %s", b)
					}
				}
			}
			if calls == 0 {
				t.Error("no tools/call reached the server")
			}
		})
	}
}

// TestTaskWatchObserve: what a session learns from the wire, message by
// message, in the three framings the readers hand over.
func TestTaskWatchObserve(t *testing.T) {
	const (
		initTasks = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"u","version":"1"}}}`
		initNone  = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"u","version":"1"}}}`
		initNew   = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2026-07-28","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"u","version":"1"}}}`
		tools     = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","execution":{"taskSupport":"required"}},{"name":"b","execution":{"taskSupport":"optional"}},{"name":"c","execution":{"taskSupport":"forbidden"}},{"name":"d"}]}}`
		created   = `{"jsonrpc":"2.0","id":7,"result":{"task":{"taskId":"T1","status":"working","pollInterval":250}}}`
		call      = `{"_meta":{"progressToken":"agentd-9"},"name":"a","arguments":{},"task":{"ttl":1000}}`
	)
	sse := func(msg string) string { return "event: message\nid: 1\ndata: " + msg + "\n\n" }
	tests := []struct {
		name     string
		init     string
		declared bool
	}{
		{"declares tasks", initTasks, true},
		{"no tasks", initNone, false},
		{"2026-07-28 (tasks of another shape)", initNew, false},
	}
	for _, tc := range tests {
		for _, framing := range []string{"line", "sse"} {
			t.Run(tc.name+"/"+framing, func(t *testing.T) {
				var w taskWatch
				feed := func(msg string) {
					if framing == "sse" {
						w.observe([]byte(sse(msg)), true)
					} else {
						w.observe([]byte(msg), false)
					}
				}
				feed(tc.init)
				feed(tools)
				if w.declares() != tc.declared {
					t.Fatalf("declares = %v, want %v", w.declares(), tc.declared)
				}
				wantSupport := map[string]string{"a": "required", "b": "optional", "c": "", "d": ""}
				if !tc.declared {
					wantSupport = map[string]string{"a": "", "b": ""}
				}
				for name, want := range wantSupport {
					if got := w.supportOf(name); got != want {
						t.Errorf("supportOf(%s) = %q, want %q", name, got, want)
					}
				}
				task, _, _ := w.create("agentd-9", func() (*mcp.CallToolResult, error) {
					w.sent(json.RawMessage(`7`), "tools/call", []byte(call))
					feed(`{"jsonrpc":"2.0","id":6,"result":{"task":{"taskId":"OTHER","status":"working"}}}`) // another call's
					feed(created)
					return &mcp.CallToolResult{}, nil
				})
				if !tc.declared {
					if task != nil {
						t.Errorf("task %+v from a server without tasks", task)
					}
					return
				}
				if task == nil || task.ID != "T1" || task.Status != TaskWorking || task.PollInterval == nil || *task.PollInterval != 250 {
					t.Fatalf("created = %+v", task)
				}
				if len(w.ids) != 0 || len(w.created) != 0 {
					t.Errorf("left behind: ids %v, created %v", w.ids, w.created)
				}
			})
		}
	}
}

// FuzzTaskWatchObserve: any upstream bytes are observed without panic,
// and a message that is not a response never declares tasks.
func FuzzTaskWatchObserve(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}}}`), false)
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"task\":{\"taskId\":\"x\"}}}\n\n"), true)
	f.Add([]byte(`{"jsonrpc":"2.0","method":"x","params":{"protocolVersion":"1","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}}}`), false)
	f.Fuzz(func(t *testing.T, msg []byte, sse bool) {
		var w taskWatch
		w.creating.Add(1)
		w.sentRequest(msg)
		w.observe(msg, sse)
		w.observe(msg, sse)
		var m struct {
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		if !sse && json.Unmarshal(msg, &m) == nil && (m.Method != "" || m.Result == nil) && w.declares() {
			t.Fatalf("declared tasks from a message that is no response: %s", msg)
		}
	})
}

// tasksInitResult is an initialize result that declares tasks for
// tools/call (mcp.ServerCapabilities has no field for it).
type tasksInitResult struct{ *mcp.InitializeResult }

func (r *tasksInitResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.InitializeResult)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(m["capabilities"], &caps); err != nil {
		return nil, err
	}
	caps["tasks"] = json.RawMessage(`{"requests":{"tools":{"call":{}}}}`)
	m["capabilities"], _ = json.Marshal(caps)
	return json.Marshal(m)
}

// TestTaskAugmentationAnsweredPlainly: a server that declares tasks may
// still answer a task-augmented call with its result (SEP-1686 lets a
// server ignore the augmentation): the call returns that result, and no
// task is followed.
func TestTaskAugmentationAnsweredPlainly(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "declares", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, any, error) {
		return text("echo " + in.Message), nil, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			switch r := res.(type) {
			case *mcp.ListToolsResult:
				return &requiredTaskList{r}, err
			case *mcp.InitializeResult:
				return &tasksInitResult{r}, err
			}
			return res, err
		}
	})
	var (
		mu     sync.Mutex
		bodies []string
	)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the manager's close (cleanups run last first)

	m := newTestManager(t, testOptions(nil))
	entry := httpEntry("declares", "http", ts.URL)
	entry.Headers = nil
	if err := m.Add(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "declares")
	sess, err := m.server("declares").awaitSession(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !sess.tasks.declares() || sess.tasks.supportOf("echo") != "required" {
		t.Fatalf("taskWatch: declared=%v support=%q", sess.tasks.declares(), sess.tasks.supportOf("echo"))
	}
	ex := &Exchange{}
	res, err := callRelay(t.Context(), mustTool(t, m, "mcp_declares_echo"), map[string]string{"message": "hi"}, ex)
	if err != nil || res.Content != "echo hi" || ex.Record.Task != nil {
		t.Fatalf("call = %+v, %v, task %+v", res, err, ex.Record.Task)
	}
	mu.Lock()
	defer mu.Unlock()
	augmented := false
	for _, b := range bodies {
		var msg struct {
			Method string                     `json:"method"`
			Params map[string]json.RawMessage `json:"params"`
		}
		if json.Unmarshal([]byte(b), &msg) != nil {
			continue
		}
		if strings.HasPrefix(msg.Method, "tasks/") {
			t.Errorf("sent %s for a call answered plainly", msg.Method)
		}
		if msg.Method == "tools/call" && msg.Params["task"] != nil {
			augmented = true
		}
	}
	if !augmented {
		t.Errorf("the call of a required-task tool was not task-augmented: %q", bodies)
	}
}
