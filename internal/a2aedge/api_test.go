package a2aedge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/principal"
)

// TestAPITaskListAndCancel: the dashboard lists local tasks of every agent
// by agent and state, reads one's history in plain words, and cancels a
// working one; a principal sees and cancels only tasks of its own
// sessions.
func TestAPITaskListAndCancel(t *testing.T) {
	f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "slow" {
			return llmtest.Reply{Text: strings.Repeat("x", 1000), Chunks: 1000, Delay: 20 * time.Millisecond}
		}
		return llmtest.Reply{Text: "hello back"}
	}, fixtureOptions{})
	ctx := context.Background()
	done, err := f.a2aClient("alpha").SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.a2aClient("beta").SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("slow")), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	slow := res.(*a2a.Task)

	list := func(q string) []TaskView {
		t.Helper()
		code, body := f.get("/api/a2a/tasks" + q)
		var out struct{ Tasks []TaskView }
		if code != 200 || json.Unmarshal(body, &out) != nil {
			t.Fatalf("list %s: %d %s", q, code, body)
		}
		return out.Tasks
	}
	if got := list(""); len(got) != 2 {
		t.Fatalf("all tasks: %+v", got)
	}
	if got := list("?agent=beta"); len(got) != 1 || got[0].ID != string(slow.ID) || got[0].State != "working" || got[0].Title != "slow" || got[0].Terminal {
		t.Fatalf("beta's tasks: %+v", got)
	}
	if got := list("?state=completed"); len(got) != 1 || got[0].Agent != "alpha" || got[0].Title != "hi" || !got[0].Terminal {
		t.Fatalf("completed tasks: %+v", got)
	}
	if code, body := f.get("/api/a2a/tasks?state=bogus"); code != 400 || !strings.Contains(string(body), "input-required") {
		t.Fatalf("bad state: %d %s", code, body)
	}

	code, body := f.get("/api/a2a/tasks/" + string(done.(*a2a.Task).ID))
	var one struct{ View TaskView }
	if code != 200 || json.Unmarshal(body, &one) != nil || one.View.Agent != "alpha" || len(one.View.History) == 0 ||
		one.View.History[0].Role != "user" || one.View.History[0].Text != "hi" || one.View.Text != "hello back" {
		t.Fatalf("task view: %d %s", code, body)
	}

	// bob, not an admin, sees nothing of sessions that are not his.
	bob := &principal.Principal{Name: "bob", Agents: []string{"*"}}
	mux := http.NewServeMux()
	f.s.Register(mux)
	asBob := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(principal.NewContext(r.Context(), bob)))
	}))
	defer asBob.Close()
	resp, err := http.Get(asBob.URL + "/api/a2a/tasks")
	if err != nil {
		t.Fatal(err)
	}
	var bobs struct{ Tasks []TaskView }
	if json.NewDecoder(resp.Body).Decode(&bobs) != nil || len(bobs.Tasks) != 0 {
		t.Fatalf("bob's list: %+v", bobs)
	}
	resp.Body.Close()
	resp, err = http.Post(asBob.URL+"/api/a2a/tasks/"+string(slow.ID)+"/cancel", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("bob cancels someone else's task: %d", resp.StatusCode)
	}

	code, body = f.post("/api/a2a/tasks/"+string(slow.ID)+"/cancel", "")
	if code != 200 || !strings.Contains(string(body), `"state": "canceled"`) && !strings.Contains(string(body), `"state":"canceled"`) {
		t.Fatalf("cancel: %d %s", code, body)
	}
	f.waitTask(slow.ID, a2a.TaskStateCanceled)
	if got := list("?state=canceled"); len(got) != 1 || got[0].ID != string(slow.ID) {
		t.Fatalf("canceled tasks: %+v", got)
	}
}

// TestAPIReplyAnswersApproval: an operator answers an input-required
// task's approval question through the API, as the client would; the task
// resumes and finishes, and the tool ran only when approved.
func TestAPIReplyAnswersApproval(t *testing.T) {
	f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "user":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("untrusted_fetch", `{}`)}}
		case last.ToolResults[0].Name == "untrusted_fetch":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("danger", `{"what":"rm"}`)}}
		default:
			return llmtest.Reply{Text: "result: " + last.ToolResults[0].Content}
		}
	}, fixtureOptions{})
	cl := f.a2aClient("alpha")
	for _, tc := range []struct {
		approved bool
		calls    int32
		text     string
	}{{true, 1, "result: done something dangerous"}, {false, 1, "rejected"}} {
		res, err := cl.SendMessage(context.Background(), &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go")), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		id := res.(*a2a.Task).ID
		f.waitTask(id, a2a.TaskStateInputRequired)
		// The dashboard's view names the call and its arguments.
		code, view := f.get("/api/a2a/tasks/" + string(id))
		var got struct{ View TaskView }
		err = json.Unmarshal(view, &got)
		if v := got.View; code != 200 || err != nil || v.Approval == nil || v.Approval.Tool != "danger" ||
			fmt.Sprint(v.Approval.Arguments) != "map[what:rm]" || v.Approval.Reason == "" {
			t.Fatalf("the waiting task's view: %d %s", code, view)
		}
		body := `{"approved":false}`
		if tc.approved {
			body = `{"approved":true}`
		}
		if code, out := f.post("/api/a2a/tasks/"+string(id)+"/reply", body); code != 200 {
			t.Fatalf("reply: %d %s", code, out)
		}
		done := f.waitTask(id, a2a.TaskStateCompleted)
		if got := f.danger.Load(); got != tc.calls || !strings.Contains(ResultText(done), tc.text) {
			t.Fatalf("approved=%v: danger ran %d times (want %d), result %q", tc.approved, got, tc.calls, ResultText(done))
		}
		if code, out := f.post("/api/a2a/tasks/"+string(id)+"/reply", body); code != 409 {
			t.Fatalf("reply to a finished task: %d %s", code, out)
		}
	}
	if code, _ := f.post("/api/a2a/tasks/nope/reply", `{"approved":true}`); code != 404 {
		t.Fatalf("reply to no task: %d", code)
	}
}

// TestLegacyCancelAnswers: the legacy cancel route answers as
// docs/a2a.md says: a working task is cancelled (200); cancelling it again
// is harmless and answers the cancelled task again (200: a client's retry
// after a lost answer must not fail); a completed task is not cancelable
// (409 not_cancelable).
func TestLegacyCancelAnswers(t *testing.T) {
	f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "slow" {
			return llmtest.Reply{Text: strings.Repeat("x", 1000), Chunks: 1000, Delay: 20 * time.Millisecond}
		}
		return llmtest.Reply{Text: "hello back"}
	}, fixtureOptions{})
	ctx := context.Background()
	done, err := f.a2aClient("alpha").SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.a2aClient("alpha").SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("slow")), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	slow := res.(*a2a.Task)
	for i := range 2 {
		code, body := f.post("/a2a/tasks/"+string(slow.ID)+"/cancel", "")
		if code != 200 || !strings.Contains(string(body), `"cancelled"`) {
			t.Fatalf("cancel #%d of a working task: %d %s", i+1, code, body)
		}
	}
	code, body := f.post("/a2a/tasks/"+string(done.(*a2a.Task).ID)+"/cancel", "")
	if code != 409 || !strings.Contains(string(body), "not_cancelable") || !strings.Contains(string(body), "already completed") {
		t.Fatalf("cancel of a completed task: %d %s", code, body)
	}
}
