package a2aedge

import (
	"context"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The methods below let package bridge serve agentd's A2A tasks as MCP
// tasks (SEP-1686): an MCP client's task-augmented tools/call starts an
// A2A task and gets its id back at once; tasks/get, tasks/list and
// tasks/cancel read and cancel it, on any replica, like an A2A client.
// Like the other in-process calls they go through the server's own
// request handler, so ownership (the principal in ctx) is checked the
// same way.

// StartTask sends msg to agent name and returns the task as soon as it
// exists (A2A's returnImmediately): the run goes on without the caller.
// meta becomes the task's metadata.
func (s *Server) StartTask(ctx context.Context, name string, msg *a2a.Message, meta map[string]any) (*a2a.Task, error) {
	res, err := s.handler.SendMessage(withAgent(ctx, name), &a2a.SendMessageRequest{
		Message:  msg,
		Config:   &a2a.SendMessageConfig{ReturnImmediately: true},
		Metadata: meta,
	})
	if err != nil {
		return nil, err
	}
	t, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("agent %q answered with a message, not a task", name)
	}
	return t, nil
}

// ListTasks lists the tasks of every agent that ctx's principal owns
// (every task for an admin or the daemon itself), most recently updated
// first.
func (s *Server) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return s.handler.ListTasks(withAgent(ctx, ""), req)
}

// MCPTaskKey names the task metadata an MCP client's task carries from
// its start (the tool, the ttl granted, the creation time): A2A tasks
// have no creation time, and the MCP view needs all three on any replica.
const MCPTaskKey = "agentd.mcp"

// startMetadata is the metadata a new task starts with: only the MCP
// task's own key of the request's, so that a client's other request
// metadata stays out of the task as before.
func startMetadata(req map[string]any) map[string]any {
	v, ok := req[MCPTaskKey]
	if !ok {
		return nil
	}
	return map[string]any{MCPTaskKey: v}
}

// AnswerTask sends msg, the answer to the question a task waits for
// (msg.TaskID), to agent name, and returns once the task has taken it:
// the run goes on without the caller. A task another replica runs gets it
// there, as an A2A client's answer would.
func (s *Server) AnswerTask(ctx context.Context, name string, msg *a2a.Message) error {
	_, err := s.handler.SendMessage(withAgent(ctx, name), &a2a.SendMessageRequest{
		Message: msg,
		Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
	})
	return err
}
