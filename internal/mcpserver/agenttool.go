package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/tool"
)

type agentArgs struct {
	Message   string `json:"message"`
	SessionID string `json:"session_id"`
}

// agentHandler runs one turn of the agent per tools/call. A failed run is
// a tool error (isError) the calling model can read; only a call that
// names no agent is a protocol error.
func (s *Server) agentHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args agentArgs
		if err := decodeArgs(req.Params.Arguments, &args); err != nil || strings.TrimSpace(args.Message) == "" {
			return toolError(`invalid arguments: want {"message": string, "session_id"?: string}`, nil), nil
		}
		p := newProgress(ctx, req)
		res, err := s.opts.Kernel.Run(ctx, &agent.RunRequest{
			Principal: callerPrincipal(req),
			Agent:     name,
			SessionID: args.SessionID,
			Input:     llm.TextMessage(llm.RoleUser, args.Message),
			Origin:    "mcp",
			Approver:  approver(req),
			OnEvent:   p.event,
		})
		p.finish()
		if errors.Is(err, agent.ErrForbidden) {
			return toolError(fmt.Sprintf("forbidden: %v", err), nil), nil
		}
		if errors.Is(err, agent.ErrAgentNotFound) {
			return nil, failf(agent.ErrAgentNotFound, "agent %q no longer exists", name)
		}
		if err != nil {
			var sc json.RawMessage
			if res != nil && res.SessionID != "" {
				sc = mustJSON(map[string]string{"session_id": res.SessionID, "stop_reason": "error"})
			}
			return toolError(fmt.Sprintf("agent %q failed: %v", name, err), sc), nil
		}
		text := res.Message.Text()
		if text == "" {
			text = fmt.Sprintf("(agent %q stopped without an answer: %s)", name, res.StopReason)
		}
		sc := mustJSON(map[string]string{"session_id": res.SessionID, "stop_reason": string(res.StopReason)})
		return &mcp.CallToolResult{
			// The structured content is repeated as text, as the spec
			// advises, so clients without structured output still see the
			// session_id that continues the conversation.
			Content:           []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(sc)}},
			StructuredContent: sc,
		}, nil
	}
}

// decodeArgs decodes tool arguments; absent arguments are an empty object.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return json.Unmarshal(raw, v)
}

func toolError(msg string, structured json.RawMessage) *mcp.CallToolResult {
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
	if len(structured) > 0 {
		r.StructuredContent = structured
	}
	return r
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with maps of strings
	}
	return b
}

// approver asks the MCP client through elicitation when the session can
// carry it (an initialize-era session whose client declared elicitation);
// otherwise it is nil and the pipeline denies with a reason the model sees.
func approver(req *mcp.CallToolRequest) tool.Approver {
	ss := req.Session
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.ProtocolVersion >= "2026-07-28" || ss.ID() == "" {
		return nil
	}
	return tool.ApproverFunc(func(ctx context.Context, ar tool.ApprovalRequest) (bool, error) {
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{
			Message:         fmt.Sprintf("Agent %q wants to call the tool %q with %s. %s. Allow it?", ar.Agent, ar.Tool, abbreviate(string(ar.Args), 300), ar.Reason),
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean","title":"Allow this call","default":false}},"required":["approve"]}`),
		})
		if err != nil {
			return false, err
		}
		ok, _ := res.Content["approve"].(bool)
		return res.Action == "accept" && ok, nil
	})
}

func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// progress turns run events into notifications/progress when the client
// sent a progress token. Events arrive on the agent loop's goroutine,
// which must not wait on a slow client, so they are queued (consecutive
// text deltas merged) and sent by a goroutine that finish waits for: every
// notification precedes the result.
type progress struct {
	ss    *mcp.ServerSession
	token any

	mu      sync.Mutex
	queue   []progressItem
	stopped bool
	wake    chan struct{}
	stop    chan struct{} // closed by finish
	done    chan struct{}
}

// progressInterval paces notifications: text deltas arriving faster are
// merged, so a long answer costs a few notifications a second, not one
// per token.
const progressInterval = 50 * time.Millisecond

type progressItem struct {
	text bool // a text delta, merged with the next ones
	msg  string
	// raw items carry a tool's own figures, passed through unchanged
	// (direct tool calls); others are numbered 1, 2, 3...
	raw             bool
	progress, total float64
}

// newProgress returns nil when there is nobody to report to; a nil
// *progress accepts events and ignores them.
func newProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	p := &progress{ss: req.Session, token: token, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go p.send(ctx)
	return p
}

func (p *progress) event(e agent.Event) {
	if p == nil {
		return
	}
	switch e.Type {
	case agent.EventText:
		p.push(progressItem{text: true, msg: e.Text})
	case agent.EventToolStarted:
		p.push(progressItem{msg: "calling tool " + e.ToolCall.Name})
	case agent.EventToolProgress:
		msg := "tool " + e.ToolCall.Name
		if e.Progress != nil && e.Progress.Message != "" {
			msg += ": " + e.Progress.Message
		}
		p.push(progressItem{msg: msg})
	case agent.EventToolFinished:
		msg := "tool " + e.ToolCall.Name + " finished"
		if e.ToolResult != nil && e.ToolResult.IsError {
			msg = "tool " + e.ToolCall.Name + " failed: " + firstLine(e.ToolResult.Content, 200)
		}
		p.push(progressItem{msg: msg})
	}
}

// report is a tool.Call progress callback for direct tool calls.
func (p *progress) report(msg string, progress, total float64) {
	if p == nil {
		return
	}
	p.push(progressItem{msg: msg, raw: true, progress: progress, total: total})
}

func (p *progress) push(it progressItem) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	if n := len(p.queue); it.text && n > 0 && p.queue[n-1].text {
		p.queue[n-1].msg += it.msg
	} else {
		p.queue = append(p.queue, it)
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// send delivers the queue under ctx, the request's context, until finish.
func (p *progress) send(ctx context.Context) {
	defer close(p.done)
	var n float64
	pace := time.NewTimer(0)
	defer pace.Stop()
	for {
		select {
		case <-pace.C:
		case <-p.stop:
		}
		<-p.wake
		p.mu.Lock()
		items, stopped := p.queue, p.stopped
		p.queue = nil
		p.mu.Unlock()
		for _, it := range items {
			prog, total := it.progress, it.total
			if !it.raw {
				n++
				prog, total = n, 0
			}
			if ctx.Err() != nil {
				continue
			}
			_ = p.ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: p.token, Progress: prog, Total: total, Message: it.msg,
			})
		}
		if stopped {
			return
		}
		pace.Reset(progressInterval)
	}
}

// finish flushes the queue and waits for the sender.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	close(p.stop)
	select {
	case p.wake <- struct{}{}:
	default:
	}
	<-p.done
}

func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return abbreviate(s, n)
}
