package acpagent

import (
	"context"
	"encoding/base64"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/llm"
)

// replay streams a stored history to the editor as session/update
// notifications: the user's messages, the agent's thoughts and text, and
// each tool call with its final status and result. A call is announced
// once, complete, since its result is already known.
func (s *server) replay(ctx context.Context, ss *session, history []llm.Message) error {
	send := func(u acp.SessionUpdate) error {
		return s.peer.SessionUpdate(ctx, acp.SessionNotification{SessionId: acp.SessionId(ss.id), Update: u})
	}
	for i, m := range history {
		switch m.Role {
		case llm.RoleUser:
			for _, p := range m.Parts {
				switch {
				case p.Image != nil:
					if err := send(acp.UpdateUserMessage(acp.ImageBlock(base64.StdEncoding.EncodeToString(p.Image.Data), p.Image.MIMEType))); err != nil {
						return err
					}
				case p.Text != "":
					if err := send(acp.UpdateUserMessageText(p.Text)); err != nil {
						return err
					}
				}
			}
		case llm.RoleAssistant:
			if m.Thinking != "" {
				if err := send(acp.UpdateAgentThoughtText(m.Thinking)); err != nil {
					return err
				}
			}
			if t := m.Text(); t != "" {
				if err := send(acp.UpdateAgentMessageText(t)); err != nil {
					return err
				}
			}
			// The kernel stores a call's results in the message right
			// after it; call ids are only unique within that pair.
			var results []llm.ToolResult
			if i+1 < len(history) && history[i+1].Role == llm.RoleTool {
				results = history[i+1].ToolResults
			}
			for _, c := range m.ToolCalls {
				if err := send(replayedCall(ss.cwd, c, results)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// replayedCall is a finished call as one tool_call update.
func replayedCall(cwd string, c llm.ToolCall, results []llm.ToolResult) acp.SessionUpdate {
	res := llm.ToolResult{Content: "no result was recorded for this call", IsError: true}
	for _, r := range results {
		if r.CallID == c.ID {
			res = r
			break
		}
	}
	status := acp.ToolCallStatusCompleted
	if res.IsError {
		status = acp.ToolCallStatusFailed
	}
	args := parseArgs(c.Arguments)
	return acp.StartToolCall(callID(c), title(c.Name, args),
		acp.WithStartKind(kindOf(c.Name)),
		acp.WithStartStatus(status),
		acp.WithStartLocations(locations(cwd, args)),
		acp.WithStartRawInput(rawInput(c.Arguments)),
		acp.WithStartContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(displayText(res.Content)))}),
	)
}
