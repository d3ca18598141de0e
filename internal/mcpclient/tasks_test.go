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
