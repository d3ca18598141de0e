package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store"
)

// TestApprovalsAnsweredByTheirOwner: bob's runs ask before file_list (his
// ask_tools). Through the dashboard's approvals API and through its reply
// to an A2A task, alice can neither see nor answer his questions: his run
// keeps waiting. An admin can, and the audit record of bob's call says
// the admin approved it.
func TestApprovalsAnsweredByTheirOwner(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == llm.RoleTool {
			return llmtest.Reply{Text: "listed"}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_list", `{"path":"."}`)}}
	})
	body := fmt.Sprintf(`listen = "127.0.0.1:0"
api_key_env = "ADMIN_KEY"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "lister"
provider = "fake"
model = "m"
tools = ["file_list"]
[agents.expose]
a2a = true

[[principals]]
name = "bob"
key_env = "BOB_KEY"
agents = ["*"]
ask_tools = ["file_list"]

[[principals]]
name = "alice"
key_env = "ALICE_KEY"
agents = ["*"]

[a2a]
enabled = true
`, model.URL)
	d, srv := testDaemon(t, body, map[string]string{"ADMIN_KEY": "k-admin", "BOB_KEY": "k-bob", "ALICE_KEY": "k-alice"})
	call := func(key, method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// audit waits for n records of file_list (the audit log is written
	// in batches) and returns them, newest first.
	audit := func(n int) []store.AuditRecord {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			recs, err := d.Store.QueryAudit(context.Background(), store.AuditFilter{Tool: "file_list"})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) >= n || time.Now().After(deadline) {
				return recs
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// The HTTP API: the question waits in the operator's queue.
	done := make(chan string, 1)
	go func() {
		code, b := call("k-bob", "POST", "/api/agents/lister/messages", `{"message":"list"}`)
		done <- fmt.Sprint(code, " ", b)
	}()
	var pending struct {
		Approvals []struct {
			ID        string `json:"id"`
			Principal string `json:"principal"`
		} `json:"approvals"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(pending.Approvals) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("bob's question never reached the queue")
		}
		time.Sleep(10 * time.Millisecond)
		_, b := call("k-bob", "GET", "/api/approvals", "")
		_ = json.Unmarshal([]byte(b), &pending)
	}
	id := pending.Approvals[0].ID
	if code, b := call("k-alice", "GET", "/api/approvals", ""); code != 200 || strings.Contains(b, id) {
		t.Errorf("alice's list of approvals: %d %s", code, b)
	}
	for _, decision := range []string{"once", "session", "reject"} {
		if code, b := call("k-alice", "POST", "/api/approvals/"+id, `{"decision":"`+decision+`"}`); code != http.StatusNotFound {
			t.Errorf("alice decides %s on bob's question: %d %s", decision, code, b)
		}
	}
	select {
	case r := <-done:
		t.Fatalf("bob's run ended after alice's answers: %s", r)
	default:
	}
	if code, b := call("k-admin", "POST", "/api/approvals/"+id, `{"decision":"once"}`); code != http.StatusNoContent {
		t.Fatalf("admin's decision: %d %s", code, b)
	}
	if r := <-done; !strings.HasPrefix(r, "200 ") || !strings.Contains(r, "listed") {
		t.Fatalf("bob's run: %s", r)
	}
	if recs := audit(1); len(recs) != 1 || recs[0].Principal != "bob" || recs[0].Decision != "approved" || recs[0].Detail != "approved by admin" {
		t.Fatalf("audit after the admin's decision: %+v", recs)
	}

	// A2A: the task turns input-required; the dashboard's reply answers it.
	code, b := call("k-bob", "POST", "/a2a/agents/lister", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"list"}]}}}`)
	var res struct {
		Result struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(b), &res); code != 200 || err != nil || res.Result.Task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("bob's A2A task: %d %s", code, b)
	}
	task := res.Result.Task.ID
	if code, b := call("k-alice", "POST", "/api/a2a/tasks/"+task+"/reply", `{"approved":true}`); code != http.StatusNotFound {
		t.Errorf("alice's reply to bob's task: %d %s", code, b)
	}
	if code, b := call("k-alice", "GET", "/api/a2a/tasks", ""); code != 200 || strings.Contains(b, task) {
		t.Errorf("alice's task list: %d %s", code, b)
	}
	if code, b := call("k-bob", "GET", "/api/a2a/tasks/"+task, ""); code != 200 || !strings.Contains(b, "input-required") {
		t.Fatalf("bob's task after alice's reply: %d %s", code, b)
	}
	if code, b := call("k-admin", "POST", "/api/a2a/tasks/"+task+"/reply", `{"approved":true}`); code != 200 {
		t.Fatalf("admin's reply: %d %s", code, b)
	}
	if recs := audit(2); len(recs) != 2 || recs[0].Principal != "bob" || recs[0].Detail != "approved by admin" {
		t.Fatalf("audit of the A2A call: %+v", recs)
	}
}
