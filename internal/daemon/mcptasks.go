package daemon

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/bridge"
	"github.com/agentd/agentd/internal/mcpserver"
)

// mcpTasks serves the MCP edge's tasks (mcpserver.Tasks) with the A2A
// edge's, through the bridge: the MCP task is the A2A task. It only
// translates the bridge's view into the MCP edge's types, so that
// neither package imports the other.
type mcpTasks struct{ b *bridge.Bridge }

var (
	_ mcpserver.Tasks         = mcpTasks{}
	_ mcpserver.TaskQuestions = mcpTasks{}
)

func (t mcpTasks) TaskTool(tool string) bool { return t.b.TaskTool(tool) }

func (t mcpTasks) Start(ctx context.Context, c mcpserver.TaskCall) (mcpserver.Task, error) {
	v, err := t.b.StartTask(ctx, c.Tool, c.Agent, c.Arguments, c.TTL)
	return mcpTask(v), err
}

func (t mcpTasks) Get(ctx context.Context, id string) (mcpserver.Task, error) {
	v, err := t.b.GetTask(ctx, id)
	return mcpTask(v), err
}

func (t mcpTasks) Result(ctx context.Context, id string) (mcpserver.Task, *mcp.CallToolResult, error) {
	v, res, err := t.b.TaskResult(ctx, id)
	return mcpTask(v), res, err
}

func (t mcpTasks) List(ctx context.Context, cursor string) ([]mcpserver.Task, string, error) {
	vs, next, err := t.b.ListTasks(ctx, cursor)
	out := make([]mcpserver.Task, len(vs))
	for i, v := range vs {
		out[i] = mcpTask(v)
	}
	return out, next, err
}

func (t mcpTasks) Cancel(ctx context.Context, id string) (mcpserver.Task, error) {
	v, err := t.b.CancelTask(ctx, id)
	return mcpTask(v), err
}

func (t mcpTasks) Question(ctx context.Context, id string) (*mcp.ElicitParams, error) {
	return t.b.TaskQuestion(ctx, id)
}

func (t mcpTasks) Answer(ctx context.Context, id string, ans *mcp.ElicitResult) (bool, error) {
	return t.b.AnswerTask(ctx, id, ans)
}

func mcpTask(v bridge.TaskView) mcpserver.Task {
	return mcpserver.Task{ID: v.ID, Status: mcpserver.TaskStatus(v.Status), Message: v.Message, Created: v.Created, Updated: v.Updated, TTL: v.TTL}
}
