package a2aedge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/tool"
)

// Remote agents' answers are data from outside: every tool here has
// Origin a2a and Untrusted set, so the runner labels results as untrusted
// and taints the run.

const sendProps = `"message":{"type":"string","description":"What to ask or tell the agent, with all the context it needs."},` +
	`"context_id":{"type":"string","description":"Continue an earlier conversation: the context_id a previous answer gave."},` +
	`"task_id":{"type":"string","description":"Answer a task that is waiting for input (state input-required)."}`

const sendSchema = `{"type":"object","properties":{` + sendProps + `},"required":["message"]}`

// agentTool delegates to one discovered external agent.
type agentTool struct {
	c    *Client
	name string    // configured name
	spec tool.Spec // agentSpec's, made when the card was discovered
}

// Spec implements tool.Tool. Specs are made once, not per call: the
// runner reads every tool's Spec on each model call (sorting and
// filtering the list), and building one cost an allocation each time.
func (t agentTool) Spec() tool.Spec { return t.spec }

// agentSpec is the Spec of the tool toolName, delegating to the agent
// configured as name, whose card is card.
func agentSpec(name, toolName string, card *a2a.AgentCard) tool.Spec {
	var b strings.Builder
	fmt.Fprintf(&b, "Send a message to the remote A2A agent %q and get its answer. %s", card.Name, card.Description)
	for i, s := range card.Skills {
		if i == 0 {
			b.WriteString(" Skills:")
		}
		fmt.Fprintf(&b, " %s (%s);", s.Name, s.Description)
	}
	return tool.Spec{
		Name: toolName, Description: truncate(b.String(), 1000), InputSchema: json.RawMessage(sendSchema),
		Origin: tool.OriginA2A, Server: name, Untrusted: true, TimeoutSecs: 600,
	}
}

func (t agentTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var req SendRequest
	if err := json.Unmarshal(c.Args, &req); err != nil || req.Message == "" {
		return tool.Result{Content: t.spec.Name + ` needs {"message": text}`, IsError: true}, nil
	}
	return t.c.sendResult(ctx, t.name, req)
}

// sendResult sends and renders the task for a model.
func (c *Client) sendResult(ctx context.Context, target string, req SendRequest) (tool.Result, error) {
	task, msg, err := c.SendReply(ctx, target, req)
	if err != nil {
		return tool.Result{Content: fmt.Sprintf("a2a agent %s failed: %v", target, err), IsError: true}, nil
	}
	if msg != nil {
		return messageResult(msg), nil
	}
	text := ResultText(task)
	state := LegacyStatus(task.Status.State)
	var b strings.Builder
	b.WriteString(text)
	fmt.Fprintf(&b, "\n\n(state: %s, context_id: %s, task_id: %s)", task.Status.State, task.ContextID, task.ID)
	if task.Status.State == a2a.TaskStateInputRequired {
		b.WriteString("\nThe agent is waiting for input: call again with this task_id and your answer.")
	}
	structured, _ := json.Marshal(map[string]any{"task_id": task.ID, "context_id": task.ContextID, "state": state})
	return tool.Result{Content: b.String(), IsError: task.Status.State == a2a.TaskStateFailed || task.Status.State == a2a.TaskStateRejected, Structured: structured}, nil
}

// messageResult renders an agent's answer that is a message, not a task,
// for a model: the agent made no task (unless the message names one it
// refers to), so there is no state to report and, without a task id,
// nothing to answer but by a new message, in the same context if the
// message gave one.
func messageResult(m *a2a.Message) tool.Result {
	var b strings.Builder
	WriteParts(&b, m.Parts)
	b.WriteString("\n\n(the agent answered with a message, not a task")
	if m.ContextID != "" {
		fmt.Fprintf(&b, "; context_id: %s", m.ContextID)
	}
	if m.TaskID != "" {
		fmt.Fprintf(&b, "; it refers to task_id: %s", m.TaskID)
	}
	b.WriteString(")")
	out := map[string]any{"reply": "message", "message_id": m.ID}
	if m.ContextID != "" {
		out["context_id"] = m.ContextID
	}
	if m.TaskID != "" {
		out["task_id"] = string(m.TaskID)
	}
	structured, _ := json.Marshal(out)
	return tool.Result{Content: b.String(), Structured: structured}
}

// sendTool sends to any external agent, by configured name or URL.
type sendTool struct{ c *Client }

func (t sendTool) Spec() tool.Spec { return t.c.specs.send }

func sendSpec() tool.Spec {
	return tool.Spec{
		Name:        "a2a_send",
		Description: "Send a message to a remote A2A agent, named as configured or by the URL of its Agent Card, and get its answer.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"agent":{"type":"string","description":"A configured external agent's name, or the base URL of an A2A agent."},` +
			sendProps + `},"required":["agent","message"]}`),
		Origin: tool.OriginA2A, Server: "a2a", Untrusted: true, TimeoutSecs: 600,
	}
}

func (t sendTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var args struct {
		Agent string `json:"agent"`
		SendRequest
	}
	if err := json.Unmarshal(c.Args, &args); err != nil || args.Agent == "" || args.Message == "" {
		return tool.Result{Content: `a2a_send needs {"agent": name or URL, "message": text}`, IsError: true}, nil
	}
	return t.c.sendResult(ctx, args.Agent, args.SendRequest)
}

// discoverTool reads a remote agent's card.
type discoverTool struct{ c *Client }

func (t discoverTool) Spec() tool.Spec { return t.c.specs.discover }

func discoverSpec() tool.Spec {
	return tool.Spec{
		Name:        "a2a_discover",
		Description: "Read the Agent Card of a remote A2A agent at a URL: its name, description and skills. Then use a2a_send to talk to it.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"Base URL of the agent (its card is at /.well-known/agent-card.json)."}},"required":["url"]}`),
		Origin:      tool.OriginA2A, Server: "a2a", Untrusted: true, ReadOnly: true,
	}
}

func (t discoverTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var args struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(c.Args, &args); err != nil || args.URL == "" {
		return tool.Result{Content: `a2a_discover needs {"url": URL}`, IsError: true}, nil
	}
	card, err := t.c.Discover(ctx, args.URL, urlReach, "")
	if err != nil {
		return tool.Result{Content: fmt.Sprintf("discovery failed: %v", err), IsError: true}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\ndescription: %s\nversion: %s\nstreaming: %v\n", card.Name, card.Description, card.Version, card.Capabilities.Streaming)
	for _, s := range card.Skills {
		fmt.Fprintf(&b, "skill %s: %s: %s\n", s.ID, s.Name, s.Description)
	}
	data, _ := json.Marshal(card)
	return tool.Result{Content: b.String(), Structured: data}, nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
