package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/mcpclient"
)

// A proxied call to an upstream that runs it as an MCP task (SEP-1686,
// see mcpclient's tasks.go) is one piece of work in both protocols, and
// the A2A task follows the MCP task's states:
//
//	MCP task          A2A task
//	working           working (a status update per status message)
//	input_required    input-required: the upstream's elicitation/create
//	                  becomes the task's question, and the next message
//	                  on the task answers it
//	completed         completed
//	failed            failed (MCP_TOOL tool_error)
//	cancelled         canceled (by either side)
//
// An A2A CancelTask cancels the call, which sends tasks/cancel upstream.
// The reply names the upstream task (mcp_task_id). Elicitation is relayed
// the same way for a plain call whose server asks during it.

// proxyExchange is the mcpclient.Exchange of a proxied call on task r:
// the upstream's questions go to the A2A client, and its task's statuses
// to the A2A task.
func proxyExchange(r *a2aedge.Task, t proxyTarget, call *llm.ToolCall) *mcpclient.Exchange {
	return &mcpclient.Exchange{
		Caller: &mcpclient.Caller{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
			Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				answer, err := r.Ask(ctx, func(ec *a2asrv.ExecutorContext) *a2a.Message { return elicitQuestion(ec, t, p) })
				if err != nil {
					return nil, err
				}
				return elicitAnswer(answer, p), nil
			},
		},
		TaskStatus: func(u mcpclient.UpstreamTask) {
			if u.Terminal() || u.Status == mcpclient.TaskInputRequired {
				// The end is the reply's; a question comes as the
				// upstream's elicitation request.
				return
			}
			msg := "MCP task " + u.ID + " " + u.Status
			if u.StatusMessage != "" {
				msg += ": " + u.StatusMessage
			}
			r.Report(agent.Event{Type: agent.EventToolProgress, ToolCall: call, Progress: &agent.Progress{Message: msg}})
		},
	}
}

// elicitQuestion is the question of an upstream's elicitation/create.
func elicitQuestion(ec *a2asrv.ExecutorContext, t proxyTarget, p *mcp.ElicitParams) *a2a.Message {
	data := map[string]any{
		"type": "elicitation", "target_mcp_server_id": t.server, "tool_name": t.upstream, "message": p.Message,
	}
	text := fmt.Sprintf("MCP server %s asks, for tool %s: %s", t.server, t.upstream, p.Message)
	if p.URL != "" {
		data["url"] = p.URL
		text += " (" + p.URL + ")"
	}
	if p.RequestedSchema != nil {
		if b, err := json.Marshal(p.RequestedSchema); err == nil {
			var schema any
			_ = json.Unmarshal(b, &schema)
			data["requested_schema"] = schema
		}
	}
	text += `. Reply on this task with a data part holding the requested fields, or the text "decline" or "cancel"`
	if len(schemaProperties(p)) == 1 {
		text += ", or the value as text"
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text+"."), a2a.NewDataPart(data))
}

// elicitAnswer reads the A2A client's answer: a data part (the fields, or
// {"action", "content"}), or text: "decline", "cancel", or the value of
// the one requested field.
func elicitAnswer(m *a2a.Message, p *mcp.ElicitParams) *mcp.ElicitResult {
	var text strings.Builder
	if m != nil {
		for _, part := range m.Parts {
			if d, ok := part.Content.(a2a.Data); ok {
				obj, ok := d.Value.(map[string]any)
				if !ok {
					continue
				}
				if action, ok := obj["action"].(string); ok && slices.Contains([]string{"accept", "decline", "cancel"}, action) {
					content, _ := obj["content"].(map[string]any)
					return &mcp.ElicitResult{Action: action, Content: content}
				}
				if c, ok := obj["content"].(map[string]any); ok {
					obj = c
				}
				return &mcp.ElicitResult{Action: "accept", Content: obj}
			}
			text.WriteString(part.Text())
		}
	}
	v := strings.TrimSpace(text.String())
	switch strings.ToLower(v) {
	case "decline", "cancel":
		return &mcp.ElicitResult{Action: strings.ToLower(v)}
	}
	if props := schemaProperties(p); len(props) == 1 && v != "" {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{props[0]: v}}
	}
	return &mcp.ElicitResult{Action: "decline"}
}

// schemaProperties names the fields an elicitation asks for.
func schemaProperties(p *mcp.ElicitParams) []string {
	if p == nil || p.RequestedSchema == nil {
		return nil
	}
	b, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(b, &s)
	var out []string
	for k := range s.Properties {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// upstreamCancelled reports whether the call's upstream task ended
// cancelled (by someone other than this task's client, whose cancel ends
// the call's context first).
func upstreamCancelled(rec *mcpclient.CallRecord) bool {
	return rec.Task != nil && rec.Task.Status == mcpclient.TaskCancelled
}
