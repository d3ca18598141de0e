package agent

import (
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/tool"
)

// EventType names what an Event reports.
type EventType string

// Event types, in the order a run emits them.
const (
	// EventSession is the first event of every run: it carries the
	// session id (new or resumed).
	EventSession      EventType = "session"
	EventText         EventType = "text"
	EventThinking     EventType = "thinking"
	EventToolStarted  EventType = "tool_started"
	EventToolProgress EventType = "tool_progress"
	EventToolFinished EventType = "tool_finished"
	// EventApproval says a tool call waits for a person's decision in
	// the operator's queue (Event.Approval, with the id to decide it by
	// at POST /api/approvals/{id}); the tool_finished that follows says
	// how it went.
	EventApproval EventType = "approval_required"
	// EventFinal ends a successful (or cancelled, or bounded) run.
	EventFinal EventType = "final"
	// EventError ends a failed run.
	EventError EventType = "error"
)

// StopReason says why a run ended.
type StopReason string

// Stop reasons of a run.
const (
	StopEndTurn       StopReason = "end_turn"
	StopMaxTokens     StopReason = "max_tokens"
	StopMaxIterations StopReason = "max_iterations"
	StopTokenBudget   StopReason = "token_budget"
	StopRefusal       StopReason = "refusal"
	StopCancelled     StopReason = "cancelled"
)

// Progress is an intermediate report of a long tool call.
type Progress struct {
	Message  string  `json:"message,omitempty"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
}

// Event is one thing that happened during a run. Each protocol edge
// translates events to its wire format; no edge reaches into the loop.
type Event struct {
	Type       EventType       `json:"type"`
	SessionID  string          `json:"session_id,omitempty"`
	Text       string          `json:"text,omitempty"`
	ToolCall   *llm.ToolCall   `json:"tool_call,omitempty"`
	ToolResult *llm.ToolResult `json:"tool_result,omitempty"`
	// Untrusted marks a tool result that came from an untrusted source.
	Untrusted bool      `json:"untrusted,omitempty"`
	Progress  *Progress `json:"progress,omitempty"`
	// Approval is the waiting request of an EventApproval.
	Approval   *tool.PendingApproval `json:"approval,omitempty"`
	Message    *llm.Message          `json:"message,omitempty"`
	StopReason StopReason            `json:"stop_reason,omitempty"`
	Usage      *llm.Usage            `json:"usage,omitempty"`
	Error      string                `json:"error,omitempty"`
}
