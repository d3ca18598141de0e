package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/a2aedge"
)

// MCP tasks over A2A tasks. An MCP client's task-augmented tools/call of
// an agent tool (the MCP edge's agentd_agent_*, or a local agent the
// bridge serves, a2a_local_*) starts an A2A task of that agent, and the
// MCP task is that task: one id, one record in the A2A task store, one
// state machine read by both protocols (TaskView), on any replica.
// Remote A2A agents are not served as tasks: their tasks live in
// another system's store.

// TaskView is an A2A task as an MCP task (SEP-1686) sees it.
type TaskView struct {
	ID string
	// Status is the MCP status: working, input_required, completed,
	// failed or cancelled (MCPStatus).
	Status  string
	Message string
	Created time.Time
	Updated time.Time
	// TTL is the ttl granted when an MCP client started the task; 0 for
	// a task an A2A client started.
	TTL time.Duration
}

// MCPStatus maps an A2A task state to an MCP task status. A2A's states
// that need the client (auth-required too) are input_required; submitted
// is working; rejected is failed.
func MCPStatus(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return "input_required"
	case a2a.TaskStateCompleted:
		return "completed"
	case a2a.TaskStateFailed, a2a.TaskStateRejected:
		return "failed"
	case a2a.TaskStateCanceled:
		return "cancelled"
	}
	return "working"
}

// The kinds of tool an MCP task was started by, kept in its metadata:
// they decide the shape of its result.
const (
	kindAgent  = "agent"  // the MCP edge's agent tool: {session_id, stop_reason}
	kindBridge = "bridge" // a bridge tool: {agent, task_id, context_id, state}
)

// taskMeta is what an MCP task's A2A task keeps of its start, under
// a2aedge.MCPTaskKey.
type taskMeta struct {
	Tool    string `json:"tool"`
	Agent   string `json:"agent"`
	Kind    string `json:"kind"`
	TTLMs   int64  `json:"ttlMs"`
	Created string `json:"createdAt"`
}

// TaskTool reports whether a call of tool may run as an MCP task: the
// local agents the bridge serves (the MCP edge's own agent tools always
// may).
func (b *Bridge) TaskTool(tool string) bool {
	return b.opts.Server != nil && strings.HasPrefix(tool, LocalToolPrefix)
}

// StartTask starts the A2A task of a task-augmented tools/call: of agent
// for the MCP edge's agent tool (args {"message", "session_id"}), else of
// the local agent the bridge serves as tool (its own arguments). The
// principal in ctx owns it.
func (b *Bridge) StartTask(ctx context.Context, tool, agent string, args json.RawMessage, ttl time.Duration) (TaskView, error) {
	s := b.opts.Server
	if s == nil {
		return TaskView{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q does not run as a task: A2A is off", tool)}
	}
	var msg *a2a.Message
	kind := kindAgent
	if agent != "" {
		var a struct {
			Message   string `json:"message"`
			SessionID string `json:"session_id"`
		}
		if err := decodeObject(args, &a); err != nil || strings.TrimSpace(a.Message) == "" {
			return TaskView{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `invalid arguments: want {"message": string, "session_id"?: string}`}
		}
		msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(a.Message))
		msg.ContextID = a.SessionID
	} else {
		kind = kindBridge
		t, ok, err := b.find(ctx, tool)
		if err != nil {
			return TaskView{}, err
		}
		if !ok || t.where != "local" {
			return TaskView{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q does not run as a task", tool)}
		}
		agent = t.agent
		var a bridgeArgs
		if err := decodeObject(args, &a); err != nil {
			return TaskView{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid arguments: %v", err)}
		}
		if a.TaskID != "" {
			return TaskView{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "task_id answers a task that waits for input, which starts no task: call without params.task"}
		}
		if strings.TrimSpace(a.Message) == "" && a.Data == nil {
			return TaskView{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `give a message (or data) for the agent: {"message": string}`}
		}
		var parts a2a.ContentParts
		if a.Message != "" {
			parts = append(parts, a2a.NewTextPart(a.Message))
		}
		if a.Data != nil {
			parts = append(parts, a2a.NewDataPart(a.Data))
		}
		msg = a2a.NewMessage(a2a.MessageRoleUser, parts...)
		msg.ContextID = a.ContextID
	}
	// A map, not a taskMeta: a2a-go copies tasks with gob, which knows
	// no struct of ours inside an any.
	meta := map[string]any{"tool": tool, "agent": agent, "kind": kind, "ttlMs": ttl.Milliseconds(), "createdAt": time.Now().UTC().Format(time.RFC3339Nano)}
	task, err := s.StartTask(ctx, agent, msg, map[string]any{a2aedge.MCPTaskKey: meta})
	if err != nil {
		return TaskView{}, taskError(err)
	}
	return viewTask(task), nil
}

// GetTask returns the task id, if the principal in ctx may see it.
func (b *Bridge) GetTask(ctx context.Context, id string) (TaskView, error) {
	t, err := b.getTask(ctx, id)
	if err != nil {
		return TaskView{}, err
	}
	return viewTask(t), nil
}

func (b *Bridge) getTask(ctx context.Context, id string) (*a2a.Task, error) {
	if b.opts.Server == nil {
		return nil, taskError(a2a.ErrTaskNotFound)
	}
	t, err := b.opts.Server.GetTask(ctx, "", a2a.TaskID(id))
	if err != nil {
		return nil, taskError(err)
	}
	return t, nil
}

// TaskResult returns the task and, once it is terminal, the tool result
// its call ended with, shaped as the tool that started it answers.
func (b *Bridge) TaskResult(ctx context.Context, id string) (TaskView, *mcp.CallToolResult, error) {
	t, err := b.getTask(ctx, id)
	if err != nil {
		return TaskView{}, nil, err
	}
	v := viewTask(t)
	if !t.Status.State.Terminal() {
		return v, nil, nil
	}
	m, _ := metaOf(t)
	if m.Kind == kindAgent {
		return v, agentResult(t), nil
	}
	tv := &taskView{id: t.ID, contextID: t.ContextID, state: t.Status.State, status: t.Status.Message, artifacts: t.Artifacts}
	return v, tv.result(bridgeTarget{tool: m.Tool, agent: m.Agent}), nil
}

// agentResult is the result the MCP edge's agent tool gives for a run:
// the answer's text, and {session_id, stop_reason} as structured content
// (and repeated as text).
func agentResult(t *a2a.Task) *mcp.CallToolResult {
	var text strings.Builder
	for _, a := range t.Artifacts {
		a2aedge.WriteParts(&text, a.Parts)
	}
	if text.Len() == 0 && t.Status.Message != nil {
		a2aedge.WriteParts(&text, t.Status.Message.Parts)
	}
	stop := "end_turn"
	if ag, ok := t.Metadata["agentd"].(map[string]any); ok {
		if s, ok := ag["stopReason"].(string); ok && s != "" {
			stop = s
		}
	}
	failed := t.Status.State != a2a.TaskStateCompleted
	switch t.Status.State {
	case a2a.TaskStateCanceled:
		stop = "cancelled"
	case a2a.TaskStateFailed, a2a.TaskStateRejected:
		stop = "error"
	}
	body := text.String()
	if body == "" {
		body = fmt.Sprintf("(the agent's task ended %s without an answer)", stateName(t.Status.State))
	}
	sc := mustMarshal(map[string]string{"session_id": t.ContextID, "stop_reason": stop})
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: body}, &mcp.TextContent{Text: string(sc)}},
		StructuredContent: json.RawMessage(sc),
		IsError:           failed,
	}
}

// ListTasks lists a page of the tasks the principal in ctx owns (of
// every agent, started over either protocol), newest first.
func (b *Bridge) ListTasks(ctx context.Context, cursor string) ([]TaskView, string, error) {
	if b.opts.Server == nil {
		return nil, "", nil
	}
	res, err := b.opts.Server.ListTasks(ctx, &a2a.ListTasksRequest{PageToken: cursor, PageSize: 50})
	if err != nil {
		return nil, "", taskError(err)
	}
	out := make([]TaskView, 0, len(res.Tasks))
	for _, t := range res.Tasks {
		out = append(out, viewTask(t))
	}
	return out, res.NextPageToken, nil
}

// CancelTask cancels the task (its run stops, wherever it runs) and
// returns it.
func (b *Bridge) CancelTask(ctx context.Context, id string) (TaskView, error) {
	if b.opts.Server == nil {
		return TaskView{}, taskError(a2a.ErrTaskNotFound)
	}
	if err := b.opts.Server.CancelTask(ctx, "", a2a.TaskID(id)); err != nil {
		return TaskView{}, taskError(err)
	}
	return b.GetTask(ctx, id)
}

// TaskQuestion returns the question task id waits for, as the
// elicitation an MCP client answers (tasks/result asks it while the
// task is input_required); nil when the task does not wait for input.
func (b *Bridge) TaskQuestion(ctx context.Context, id string) (*mcp.ElicitParams, error) {
	t, err := b.getTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Status.State != a2a.TaskStateInputRequired {
		return nil, nil
	}
	_, params := questionOf(inputView(t))
	return params, nil
}

// AnswerTask gives task id the MCP client's answer to its question, as
// an A2A client's follow-up message would. A declined approval is a
// refusal (the agent hears "not approved" and goes on); any other
// declined or dismissed question is no answer: answered is false and the
// task still waits (for another answer, over either protocol, or a
// cancel).
func (b *Bridge) AnswerTask(ctx context.Context, id string, ans *mcp.ElicitResult) (answered bool, err error) {
	t, err := b.getTask(ctx, id)
	if err != nil {
		return false, err
	}
	m, _ := metaOf(t)
	if t.Status.State != a2a.TaskStateInputRequired || m.Agent == "" {
		return false, nil
	}
	tv := inputView(t)
	kind, _ := questionOf(tv)
	if kind == questionApproval && ans != nil && ans.Action == "decline" {
		ans = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approved": false}}
	}
	msg, none := answerMessage(bridgeTarget{tool: m.Tool, agent: m.Agent}, tv, kind, ans)
	if none != nil {
		return false, nil
	}
	if err := b.opts.Server.AnswerTask(ctx, m.Agent, msg); err != nil {
		return false, taskError(err)
	}
	return true, nil
}

// inputView is the part of t that its question and answer are made of.
func inputView(t *a2a.Task) *taskView {
	return &taskView{id: t.ID, contextID: t.ContextID, state: t.Status.State, status: t.Status.Message}
}

// taskError is err as the MCP client sees it: an unknown task and a task
// that cannot be cancelled any more are invalid params, as SEP-1686 says.
func taskError(err error) error {
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task"}
	case errors.Is(err, a2a.ErrTaskNotCancelable):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case errors.Is(err, a2a.ErrInvalidParams), errors.Is(err, a2a.ErrUnauthorized):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return err
}

// viewTask is t as an MCP task.
func viewTask(t *a2a.Task) TaskView {
	v := TaskView{ID: string(t.ID), Status: MCPStatus(t.Status.State)}
	if t.Status.Message != nil {
		var b strings.Builder
		a2aedge.WriteParts(&b, t.Status.Message.Parts)
		v.Message = truncate(b.String(), 500)
	}
	if t.Status.Timestamp != nil {
		v.Updated = *t.Status.Timestamp
	}
	if m, ok := metaOf(t); ok {
		v.TTL = time.Duration(m.TTLMs) * time.Millisecond
		if c, err := time.Parse(time.RFC3339Nano, m.Created); err == nil {
			v.Created = c
		}
	}
	switch {
	case v.Created.IsZero() && v.Updated.IsZero():
		v.Created = time.Now()
		v.Updated = v.Created
	case v.Created.IsZero():
		v.Created = v.Updated
	case v.Updated.IsZero() || v.Updated.Before(v.Created):
		v.Updated = v.Created
	}
	return v
}

// metaOf reads the MCP start of t; ok is false for a task an A2A client
// started.
func metaOf(t *a2a.Task) (taskMeta, bool) {
	raw, ok := t.Metadata[a2aedge.MCPTaskKey]
	if !ok {
		return taskMeta{}, false
	}
	var m taskMeta
	b, err := json.Marshal(raw)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return taskMeta{}, false
	}
	return m, true
}

// decodeObject decodes tool arguments; absent arguments are an empty
// object.
func decodeObject(raw json.RawMessage, v any) error {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}
