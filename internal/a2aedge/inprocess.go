package a2aedge

import (
	"context"
	"iter"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The methods below serve agentd's agents to callers in this process
// (package bridge): through the server's own request handler, without
// HTTP, so that their tasks are the ones A2A clients see, and can get,
// cancel or answer from any replica.

// SendStreamingMessage sends req to agent name and yields the task's
// events as they come.
func (s *Server) SendStreamingMessage(ctx context.Context, name string, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return s.handler.SendStreamingMessage(withAgent(ctx, name), req)
}

// GetTask returns task id of agent name.
func (s *Server) GetTask(ctx context.Context, name string, id a2a.TaskID) (*a2a.Task, error) {
	return s.handler.GetTask(withAgent(ctx, name), &a2a.GetTaskRequest{ID: id})
}

// CancelTask cancels task id of agent name.
func (s *Server) CancelTask(ctx context.Context, name string, id a2a.TaskID) error {
	_, err := s.handler.CancelTask(withAgent(ctx, name), &a2a.CancelTaskRequest{ID: id})
	return err
}
