package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// errAny stands for any error.
var errAny = errors.New("any error")

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestFinalTask: an edge's task is stored in the same transaction as the
// reply that ends the turn, once, and only then; declined, the reply is
// stored alone; if the combined write fails, the run fails and neither
// the reply nor the task is stored.
func TestFinalTask(t *testing.T) {
	listFiles := fn{name: "file_list", origin: tool.OriginBuiltin, call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
		return tool.Result{Content: "a.go"}, nil
	}}
	for _, tc := range []struct {
		name      string
		replies   []llmtest.Reply
		decline   bool
		takenID   bool // a task with the id exists already
		wantTask  bool
		wantErr   error
		wantMsgs  int // messages in the session after the run
		wantFinal string
		noCall    bool // FinalTask is not called
		existing  bool // the session has a first turn already
	}{
		{name: "stored with the reply", replies: []llmtest.Reply{{Text: "ok"}}, wantTask: true, wantMsgs: 2, wantFinal: "ok"},
		{name: "after a tool call, only at the end",
			replies:  []llmtest.Reply{{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_list", `{}`)}}, {Text: "one file"}},
			wantTask: true, wantMsgs: 4, wantFinal: "one file"},
		{name: "declined", replies: []llmtest.Reply{{Text: "ok"}}, decline: true, wantMsgs: 2, wantFinal: "ok"},
		{name: "task id taken", replies: []llmtest.Reply{{Text: "ok"}}, takenID: true, wantErr: store.ErrExists, wantMsgs: 1},
		{name: "model fails", replies: []llmtest.Reply{{Status: 500}}, wantErr: errAny, wantMsgs: 1, noCall: true},
		{name: "existing session", replies: []llmtest.Reply{{Text: "ok"}}, existing: true, wantTask: true, wantMsgs: 3, wantFinal: "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := append(append([]llmtest.Reply{}, tc.replies...), llmtest.Reply{Text: "next answer"})
			e := newEnv(t, llmtest.Script(script...), []manifest.Manifest{assistant("file_*")}, listFiles)
			ctx := context.Background()
			if tc.takenID {
				if _, err := e.db.CreateTask(ctx, store.Task{ID: "task-1", State: "working", Data: json.RawMessage(`{"old":true}`)}); err != nil {
					t.Fatal(err)
				}
			}
			req0 := agent.RunRequest{Agent: "assistant", Input: user("hi"), NewSessionID: "s-1"}
			if tc.existing {
				if err := e.db.CreateSession(ctx, store.Session{ID: "s-1", Agent: "assistant"}, store.Message{Role: "user", Content: json.RawMessage(`{"role":"user","parts":[{"text":"before"}]}`)}); err != nil {
					t.Fatal(err)
				}
				req0 = agent.RunRequest{Agent: "assistant", Input: user("hi"), SessionID: "s-1"}
			}
			var calls []agent.RunResult
			c := &collect{}
			req := &agent.RunRequest{Agent: req0.Agent, Input: req0.Input, NewSessionID: req0.NewSessionID, SessionID: req0.SessionID, OnEvent: c.add,
				FinalTask: func(res agent.RunResult) (store.Task, bool) {
					calls = append(calls, res)
					return store.Task{ID: "task-1", ContextID: res.SessionID, Agent: "assistant", State: "completed", Terminal: true,
						Data: json.RawMessage(`{"answer":"` + res.Message.Text() + `"}`)}, !tc.decline
				}}
			res, err := e.k.Run(ctx, req)
			if tc.wantErr == errAny && err == nil || tc.wantErr != errAny && (!errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil)) {
				t.Fatalf("Run: %v, want %v", err, tc.wantErr)
			}
			types := c.types()
			if last := types[len(types)-1]; (err == nil) != (last == "final") {
				t.Errorf("events %v end with %s after error %v", types, last, err)
			}
			if tc.noCall {
				if len(calls) != 0 {
					t.Errorf("FinalTask called for a failed run: %+v", calls)
				}
			} else if len(calls) != 1 || calls[0].SessionID != "s-1" || calls[0].Message.Text() != tc.replies[len(tc.replies)-1].Text || calls[0].StopReason != agent.StopEndTurn {
				t.Errorf("FinalTask calls = %+v, want one with the last reply", calls)
			}
			if err == nil && res.Message.Text() != tc.wantFinal {
				t.Errorf("result message %q, want %q", res.Message.Text(), tc.wantFinal)
			}
			// Whatever the outcome, the session holds the user's message
			// (a failed run's too) and is not busy any more.
			msgs, merr := e.db.Messages(ctx, "s-1")
			if merr != nil || len(msgs) != tc.wantMsgs {
				t.Errorf("session holds %d messages (%v), want %d", len(msgs), merr, tc.wantMsgs)
			} else if !strings.Contains(string(msgs[len(msgs)-tc.wantMsgs+boolInt(tc.existing)].Content), `"hi"`) {
				t.Errorf("the user's message is not where expected: %s", msgs[boolInt(tc.existing)].Content)
			}
			if next, err := e.k.Run(ctx, &agent.RunRequest{Agent: "assistant", Input: user("next"), SessionID: "s-1"}); err != nil || next.Message.Text() != "next answer" {
				t.Errorf("a next turn on the session: %+v, %v", next, err)
			}
			got, gerr := e.db.GetTask(ctx, "task-1")
			switch {
			case tc.takenID:
				if gerr != nil || !strings.Contains(string(got.Data), "old") {
					t.Errorf("the existing task changed: %+v %v", got, gerr)
				}
			case tc.wantTask:
				if gerr != nil || string(got.Data) != `{"answer":"`+tc.wantFinal+`"}` || got.State != "completed" {
					t.Errorf("task = %+v (%v), want the finished task", got, gerr)
				}
			default:
				if !errors.Is(gerr, store.ErrNotFound) {
					t.Errorf("a declined task was stored: %+v %v", got, gerr)
				}
			}
		})
	}
}

// TestKernelToolSpecsDoNotAllocate: the runner reads every tool's Spec
// several times per model call, so the kernel's are made once.
func TestKernelToolSpecsDoNotAllocate(t *testing.T) {
	e := newEnv(t, llmtest.Always(llmtest.Reply{Text: "ok"}), []manifest.Manifest{assistant()})
	for _, tl := range e.k.Tools() {
		sp := tl.Spec()
		if sp.Name == "" || !json.Valid(sp.InputSchema) || sp.Origin != tool.OriginBuiltin {
			t.Errorf("spec %+v", sp)
		}
		if n := testing.AllocsPerRun(100, func() { _ = tl.Spec() }); n != 0 {
			t.Errorf("%s: Spec allocates %v times per call", sp.Name, n)
		}
	}
}
