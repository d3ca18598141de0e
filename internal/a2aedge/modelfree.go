package a2aedge

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/tool"
)

// ModelFree serves the agents of a kind that runs no model: the MCP tool
// proxy (manifest.KindMCPProxy), which package bridge implements, so
// that this edge speaks A2A only.
type ModelFree interface {
	// Card completes the card of agent m.
	Card(card *a2a.AgentCard, m manifest.Manifest)
	// Run runs one task to its end and returns its terminal state and the
	// parts of its last message.
	Run(ctx context.Context, t *Task) (a2a.TaskState, []*a2a.Part)
}

// Task is a model-free agent's task, as its run sees it.
type Task struct {
	ContextID string
	Manifest  manifest.Manifest
	// Message is the message that started the task.
	Message *a2a.Message
	r       *run
}

// Ask turns the task input-required with the question msg builds and
// returns the next message on the task.
func (t *Task) Ask(ctx context.Context, msg func(ec *a2asrv.ExecutorContext) *a2a.Message) (*a2a.Message, error) {
	return t.r.ask(ctx, msg)
}

// Report relays an event of the run (tool progress) to the task's
// clients.
func (t *Task) Report(e agent.Event) { t.r.push(item{ev: &e}) }

// Approver asks the task's client to approve a call: the task turns
// input-required, and the next message answers.
func (t *Task) Approver() tool.Approver { return t.r }

// startProxy starts the model-free run of a proxy agent's task; the
// server owns the goroutine.
func (s *Server) startProxy(id a2a.TaskID, contextID string, m manifest.Manifest, msg *a2a.Message) *run {
	ctx, cancel := s.owned.detach(context.Background())
	ctx, byClient := cancelledByClient(ctx)
	r := &run{taskID: id, cancel: byClient, signal: make(chan struct{}, 1)}
	s.mu.Lock()
	s.runs[id] = r
	s.mu.Unlock()
	s.owned.wg.Go(func() {
		defer cancel()
		end := &outcome{state: a2a.TaskStateFailed, parts: []*a2a.Part{a2a.NewTextPart("this daemon serves no model-free agents")}}
		if s.opts.ModelFree != nil {
			end.state, end.parts = s.opts.ModelFree.Run(ctx, &Task{ContextID: contextID, Manifest: m, Message: msg, r: r})
		}
		r.push(item{end: end})
		s.ended(r)
	})
	return r
}
