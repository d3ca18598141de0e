package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/tool"
)

// Tools returns the built-in tools that need the kernel: agent_list and
// agent_send, which let one local agent delegate to another.
func (k *Kernel) Tools() []tool.Tool {
	return []tool.Tool{agentList{k}, agentSend{k}}
}

type agentList struct{ k *Kernel }

// Spec implements tool.Tool. The kernel's tools' Specs are made once:
// the runner reads every tool's Spec several times per model call.
func (t agentList) Spec() tool.Spec { return t.k.specs.list }

func agentListSpec() tool.Spec {
	return tool.Spec{
		Name:        "agent_list",
		Description: "List the other local agents you can delegate to with agent_send, with their descriptions.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Origin:      tool.OriginBuiltin,
		ReadOnly:    true,
	}
}

func (t agentList) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	entries, err := t.k.opts.Agents.List(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	var b strings.Builder
	for _, e := range entries {
		if e.Manifest.Name == c.Agent {
			continue
		}
		fmt.Fprintf(&b, "- %s: %s\n", e.Manifest.Name, e.Manifest.Description)
	}
	if b.Len() == 0 {
		return tool.Result{Content: "There are no other agents."}, nil
	}
	return tool.Result{Content: b.String()}, nil
}

type agentSend struct{ k *Kernel }

func (t agentSend) Spec() tool.Spec { return t.k.specs.send }

func agentSendSpec() tool.Spec {
	return tool.Spec{
		Name:        "agent_send",
		Description: "Send a message to another local agent and get its answer. Use agent_list to see the agents. The other agent starts a fresh conversation unless you pass the session_id it returned before.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"agent":{"type":"string","description":"Name of the agent to ask."},` +
			`"message":{"type":"string","description":"What to ask or tell it, with all the context it needs."},` +
			`"session_id":{"type":"string","description":"Continue an earlier conversation with that agent."}},` +
			`"required":["agent","message"]}`),
		Origin: tool.OriginBuiltin,
		// A long delegated run should not be cut by the default tool timeout.
		TimeoutSecs: 600,
	}
}

func (t agentSend) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var args struct {
		Agent     string `json:"agent"`
		Message   string `json:"message"`
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(c.Args, &args); err != nil || args.Agent == "" || args.Message == "" {
		return tool.Result{Content: "agent_send needs {\"agent\": name, \"message\": text}", IsError: true}, nil
	}
	if args.Agent == c.Agent {
		return tool.Result{Content: "an agent cannot send a message to itself", IsError: true}, nil
	}
	if c.Depth+1 > t.k.opts.MaxDepth {
		return tool.Result{Content: fmt.Sprintf("refused: delegation depth limit (%d) reached; answer with what you have", t.k.opts.MaxDepth), IsError: true}, nil
	}
	res, err := t.k.Run(ctx, &RunRequest{
		Agent: args.Agent, SessionID: args.SessionID, Input: llm.TextMessage(llm.RoleUser, args.Message),
		Origin: "agent", Depth: c.Depth + 1, Principal: c.Principal,
	})
	if err != nil {
		return tool.Result{Content: fmt.Sprintf("agent %q failed: %v", args.Agent, err), IsError: true}, nil
	}
	out, _ := json.Marshal(map[string]string{"session_id": res.SessionID, "stop_reason": string(res.StopReason)})
	return tool.Result{Content: res.Message.Text() + "\n\n(session_id: " + res.SessionID + ")", Structured: out}, nil
}
