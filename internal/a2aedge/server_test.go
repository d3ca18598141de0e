package a2aedge

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

func TestCards(t *testing.T) {
	f := newFixture(t, nil, fixtureOptions{bearer: true})
	t.Run("list", func(t *testing.T) {
		code, body := f.get("/a2a/agents")
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
		var out struct {
			Agents []map[string]any `json:"agents"`
			Total  int              `json:"total"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		if out.Total != 2 || len(out.Agents) != 2 || out.Agents[0]["name"] != "alpha" || out.Agents[1]["name"] != "beta" {
			t.Fatalf("got %d cards (total %d): %s", len(out.Agents), out.Total, body)
		}
	})
	for _, tc := range []struct {
		name, path, agent string
	}{
		{"well-known", "/.well-known/agent-card.json", "alpha"},
		{"legacy well-known", "/.well-known/agent.json", "alpha"},
		{"per agent", "/a2a/agents/beta/.well-known/agent-card.json", "beta"},
		{"per agent legacy name", "/a2a/agents/alpha/.well-known/agent.json", "alpha"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.get(tc.path)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			card, err := ParseCard(body)
			if err != nil {
				t.Fatal(err)
			}
			if card.Name != tc.agent {
				t.Fatalf("card of %q, want %q", card.Name, tc.agent)
			}
			var raw map[string]any
			_ = json.Unmarshal(body, &raw)
			want := f.endpoint(tc.agent)
			if raw["url"] != want {
				t.Errorf("url %v, want %s", raw["url"], want)
			}
			for _, iface := range card.SupportedInterfaces {
				if iface.URL != want {
					t.Errorf("interface %s %s at %s, want %s", iface.ProtocolBinding, iface.ProtocolVersion, iface.URL, want)
				}
			}
			if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications {
				t.Errorf("capabilities %+v", card.Capabilities)
			}
			if _, ok := card.SecuritySchemes[BearerScheme]; !ok {
				t.Errorf("no bearer scheme: %s", body)
			}
			if tc.agent == "alpha" && (len(card.Skills) != 1 || card.Skills[0].ID != "qa") {
				t.Errorf("skills %+v", card.Skills)
			}
		})
	}
	t.Run("hidden agent", func(t *testing.T) {
		if code, body := f.get("/a2a/agents/hidden/.well-known/agent-card.json"); code != http.StatusNotFound {
			t.Fatalf("status %d: %s", code, body)
		}
		if code, _ := f.post("/a2a/agents/hidden", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`); code != http.StatusNotFound {
			t.Fatalf("status %d", code)
		}
	})
	t.Run("public url", func(t *testing.T) {
		f.s.opts.PublicURL = "https://agents.example.com/"
		defer func() { f.s.opts.PublicURL = "" }()
		_, body := f.get("/.well-known/agent-card.json")
		if !strings.Contains(string(body), `"url": "https://agents.example.com/a2a/agents/alpha"`) {
			t.Fatalf("card does not use public_url: %s", body)
		}
	})
}

func TestSendBlockingAndMultiTurn(t *testing.T) {
	f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "echo: " + r.LastUserText() + " (" + itoa(len(r.Messages)) + " messages)", Chunks: 3}
	}, fixtureOptions{})
	cl := f.a2aClient("alpha")
	ctx := context.Background()
	res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("result %T", res)
	}
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s", task.Status.State)
	}
	if got := ResultText(task); got != "echo: hello (01 messages)" {
		t.Fatalf("artifact text %q", got)
	}
	if len(task.History) == 0 || task.History[0].Parts[0].Text() != "hello" {
		t.Fatalf("history %+v", task.History)
	}
	// The context is the session.
	sess, err := f.db.GetSession(ctx, task.ContextID)
	if err != nil || sess.Agent != "alpha" || sess.Origin != "a2a" {
		t.Fatalf("session %+v, %v", sess, err)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("again"))
	msg.ContextID = task.ContextID
	res, err = cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task2 := res.(*a2a.Task)
	if task2.ID == task.ID || task2.ContextID != task.ContextID {
		t.Fatalf("second task %s in context %s", task2.ID, task2.ContextID)
	}
	if got := ResultText(task2); got != "echo: again (03 messages)" {
		t.Fatalf("second turn did not see the first: %q", got)
	}
	t.Run("client chosen context", func(t *testing.T) {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))
		msg.ContextID = "ctx-chosen-by-client"
		res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		if res.(*a2a.Task).ContextID != msg.ContextID {
			t.Fatalf("context %s", res.(*a2a.Task).ContextID)
		}
		if _, err := f.db.GetSession(ctx, msg.ContextID); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("tasks are per agent", func(t *testing.T) {
		if _, err := f.a2aClient("beta").GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err == nil {
			t.Fatal("beta's endpoint served alpha's task")
		}
		if _, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("list", func(t *testing.T) {
		list, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID, IncludeArtifacts: true})
		if err != nil {
			t.Fatal(err)
		}
		if list.TotalSize != 2 || len(list.Tasks) != 2 || list.Tasks[0].ID != task2.ID || len(list.Tasks[0].Artifacts) == 0 {
			t.Fatalf("list %+v", list)
		}
		page, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1})
		if err != nil || len(page.Tasks) != 1 || page.NextPageToken == "" {
			t.Fatalf("page %+v %v", page, err)
		}
		next, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1, PageToken: page.NextPageToken})
		if err != nil || len(next.Tasks) != 1 || next.Tasks[0].ID == page.Tasks[0].ID {
			t.Fatalf("next page %+v %v", next, err)
		}
		if other, err := f.a2aClient("beta").ListTasks(ctx, &a2a.ListTasksRequest{}); err != nil || other.TotalSize != 0 {
			t.Fatalf("beta lists alpha's tasks: %+v %v", other, err)
		}
	})
}

func TestStream(t *testing.T) {
	calls := 0
	f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		calls++
		if calls == 1 {
			return llmtest.Reply{Text: "let me look. ", ToolCalls: []llm.ToolCall{llmtest.ToolCall("untrusted_fetch", `{}`)}}
		}
		return llmtest.Reply{Text: "the answer is 42", Chunks: 4, Delay: time.Millisecond}
	}, fixtureOptions{})
	cl := f.a2aClient("alpha")
	var kinds []string
	var text strings.Builder
	var final a2a.TaskState
	for ev, err := range cl.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"))}) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, EventKind(ev))
		switch v := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range v.Artifact.Parts {
				text.WriteString(p.Text())
			}
		case *a2a.TaskStatusUpdateEvent:
			final = v.Status.State
			if v.Status.State == a2a.TaskStateWorking && v.Status.Message != nil {
				kinds[len(kinds)-1] = "tool:" + v.Status.Message.Parts[0].Text()
			}
		}
	}
	if final != a2a.TaskStateCompleted {
		t.Fatalf("final state %s; events %v", final, kinds)
	}
	if text.String() != "let me look. the answer is 42" {
		t.Fatalf("streamed text %q; events %v", text.String(), kinds)
	}
	joined := strings.Join(kinds, ",")
	for _, want := range []string{"task,", "tool:calling tool untrusted_fetch", "tool:tool untrusted_fetch finished", "artifactUpdate"} {
		if !strings.Contains(joined, want) {
			t.Errorf("events %v lack %q", kinds, want)
		}
	}
	if kinds[0] != "task" {
		t.Errorf("first event %s", kinds[0])
	}
}

func TestNonBlockingAndCancel(t *testing.T) {
	f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "slow" {
			// About 20 s of streaming, unless cancelled.
			return llmtest.Reply{Text: strings.Repeat("x", 1000), Chunks: 1000, Delay: 20 * time.Millisecond}
		}
		return llmtest.Reply{Text: "done"}
	}, fixtureOptions{})
	cl := f.a2aClient("alpha")
	ctx := context.Background()
	t.Run("non-blocking", func(t *testing.T) {
		res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("fast")), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		f.waitTask(task.ID, a2a.TaskStateCompleted)
	})
	t.Run("cancel", func(t *testing.T) {
		res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("slow")), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateWorking {
			t.Fatalf("state %s", task.Status.State)
		}
		canceled, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("state after cancel %s", canceled.Status.State)
		}
		got := f.waitTask(task.ID, a2a.TaskStateCanceled)
		if got.Status.State != a2a.TaskStateCanceled {
			t.Fatal(got.Status.State)
		}
		// The run itself stopped: the server forgets it.
		deadline := time.Now().Add(5 * time.Second)
		for f.s.run(task.ID) != nil {
			if time.Now().After(deadline) {
				t.Fatal("run still registered after cancel")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if _, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "no-such-task"}); err == nil {
			t.Fatal("cancel of unknown task succeeded")
		}
	})
}

func TestInputRequired(t *testing.T) {
	script := func(r *llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == llm.RoleUser:
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("untrusted_fetch", `{}`)}}
		case last.ToolResults[0].Name == "untrusted_fetch":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("danger", `{"what":"rm"}`)}}
		default:
			return llmtest.Reply{Text: "result: " + last.ToolResults[0].Content}
		}
	}
	for _, tc := range []struct {
		name, answer string
		calls        int32
		want         string
	}{
		{"approved", "yes, go ahead", 1, "result: done something dangerous"},
		{"refused", "no", 0, "the user rejected the call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, script, fixtureOptions{})
			cl := f.a2aClient("alpha")
			ctx := context.Background()
			res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("do it"))})
			if err != nil {
				t.Fatal(err)
			}
			task := res.(*a2a.Task)
			if task.Status.State != a2a.TaskStateInputRequired {
				t.Fatalf("state %s", task.Status.State)
			}
			if !strings.Contains(task.Status.Message.Parts[0].Text(), "danger") {
				t.Fatalf("question %q", task.Status.Message.Parts[0].Text())
			}
			if f.danger.Load() != 0 {
				t.Fatal("tool ran before approval")
			}
			msg := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewTextPart(tc.answer))
			res, err = cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
			if err != nil {
				t.Fatal(err)
			}
			done := res.(*a2a.Task)
			if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("task %s state %s", done.ID, done.Status.State)
			}
			if f.danger.Load() != tc.calls {
				t.Fatalf("danger called %d times", f.danger.Load())
			}
			if got := ResultText(done); !strings.Contains(got, tc.want) {
				t.Fatalf("answer %q lacks %q", got, tc.want)
			}
		})
	}
	t.Run("replica shutting down while waiting", func(t *testing.T) {
		f := newFixture(t, script, fixtureOptions{})
		cl := f.a2aClient("alpha")
		ctx := context.Background()
		res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("do it"))})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %s", task.Status.State)
		}
		// What a drain that timed out does.
		f.s.opts.Kernel.FailRuns(agent.ErrShuttingDown)
		f.s.FailRuns(agent.ErrShuttingDown)
		got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State != a2a.TaskStateFailed || !strings.Contains(got.Status.Message.Parts[0].Text(), "replica shutting down") {
			t.Fatalf("a task waiting for input when its replica stops: %s %v; want failed, replica shutting down", got.Status.State, got.Status.Message)
		}
		if rec, _ := f.db.GetTask(ctx, string(task.ID)); !rec.Terminal {
			t.Error("the failure is not stored")
		}
	})
	t.Run("cancel while waiting", func(t *testing.T) {
		f := newFixture(t, script, fixtureOptions{})
		cl := f.a2aClient("alpha")
		ctx := context.Background()
		res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("do it"))})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if _, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
		f.waitTask(task.ID, a2a.TaskStateCanceled)
		if f.danger.Load() != 0 {
			t.Fatal("tool ran after cancel")
		}
	})
}

func TestFailedRun(t *testing.T) {
	f := newFixture(t, llmtest.Always(llmtest.Reply{Status: 500, ErrorMessage: "model exploded"}), fixtureOptions{})
	res, err := f.a2aClient("alpha").SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("x"))})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(task.Status.Message.Parts[0].Text(), "model exploded") {
		t.Fatalf("state %s message %+v", task.Status.State, task.Status.Message)
	}
}
