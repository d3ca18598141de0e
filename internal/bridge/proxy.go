package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/tool"
)

// The MCP tool proxy agent (manifest.KindMCPProxy) runs no model: a task
// is one MCP tools/call on a configured upstream server, described by a
// data part {"target_mcp_server_id", "tool_name", "arguments"}. The call
// goes through the tool pipeline under the proxy agent's own manifest, so
// its tool patterns and mcp_servers, the servers' allowed_tools, the
// timeouts and the audit log apply exactly as they do to a model's call.
// Unlike the proxies this replaces, the A2A task is kept whole: progress
// notifications become working status updates, a cancel cancels the
// upstream call, missing required arguments turn the task input-required
// (the next message on the same task supplies them), and the reply
// carries the MCP result as the server sent it.

// Error sources of a ProxyReply.
const (
	// SourceProxy: the request was bad, or named a server or tool the
	// proxy does not know or may not reach, or the call was refused.
	SourceProxy = "A2A_PROXY"
	// SourceProtocol: the server answered a JSON-RPC error, or could not
	// be reached, or the link broke or timed out under the call.
	SourceProtocol = "MCP_PROTOCOL"
	// SourceTool: the tool ran and reported an error (isError: true).
	SourceTool = "MCP_TOOL"
)

// ProxyExtensionURI identifies the card extension in which the proxy agent
// lists the tools it reaches with their input schemas.
const ProxyExtensionURI = "https://github.com/agentd/agentd/blob/main/docs/bridges.md#mcp-proxy-extension"

// proxyConnectWait bounds how long a call waits for a server that is
// still connecting (the daemon just started, or it is reconnecting).
const proxyConnectWait = 30 * time.Second

// MCPServers lists the upstream MCP servers; *mcpclient.Manager
// satisfies it.
type MCPServers interface {
	Status() []mcpclient.ServerStatus
}

// ProxyRequest is the data part a client sends the proxy agent.
type ProxyRequest struct {
	// Server names a configured [[mcp_servers]] entry.
	Server string `json:"target_mcp_server_id"`
	// Tool is the tool's name on that server ("echo"); agentd's own name
	// for it ("mcp_everything_echo") is accepted too.
	Tool      string         `json:"tool_name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// ProxyReply is the data part of the proxy agent's last message.
type ProxyReply struct {
	Success bool   `json:"success"`
	Server  string `json:"target_mcp_server_id,omitempty"`
	Tool    string `json:"tool_name,omitempty"`
	// MCPResult is the MCP CallToolResult as the server sent it (content,
	// structuredContent, isError); absent when the call produced none.
	MCPResult map[string]any `json:"mcp_result,omitempty"`
	// MCPTaskID is the upstream's task, when the call ran as an MCP task
	// (see proxytask.go).
	MCPTaskID string      `json:"mcp_task_id,omitempty"`
	Error     *ProxyError `json:"error,omitempty"`
}

// ProxyError says why a proxied call failed.
type ProxyError struct {
	Source string `json:"source"` // SourceProxy, SourceProtocol or SourceTool
	// Code is the JSON-RPC error code (a number) when the server answered
	// one, else a snake_case word: invalid_request, unknown_server,
	// unknown_tool, not_allowed, rejected, canceled, shutting_down (A2A_PROXY);
	// disconnected, timeout, result_too_large, canceled (MCP_PROTOCOL: the
	// upstream's task was cancelled upstream); tool_error
	// (MCP_TOOL).
	Code    any    `json:"code"`
	Message string `json:"message"`
}

func (e *ProxyError) Error() string { return fmt.Sprintf("%s %v: %s", e.Source, e.Code, e.Message) }

func proxyErr(source string, code any, format string, args ...any) *ProxyError {
	return &ProxyError{Source: source, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	Kernel *agent.Kernel
	// MCP lists the upstream MCP servers the proxy agents reach; nil
	// means none.
	MCP MCPServers
}

// Proxy runs the tasks of MCP tool proxy agents for the A2A edge
// (a2aedge.ModelFree).
type Proxy struct{ opts ProxyOptions }

var _ a2aedge.ModelFree = (*Proxy)(nil)

// NewProxy returns the runner of proxy agents' tasks.
func NewProxy(opts ProxyOptions) *Proxy { return &Proxy{opts: opts} }

// Run implements a2aedge.ModelFree: one proxied call.
func (s *Proxy) Run(ctx context.Context, t *a2aedge.Task) (a2a.TaskState, []*a2a.Part) {
	end := s.proxyCall(ctx, t)
	return end.state, end.parts
}

// outcome is how a proxy task ends: its terminal state and the parts of
// its last message.
type outcome struct {
	state a2a.TaskState
	parts []*a2a.Part
}

// proxyCall runs one proxied call and returns how the task ends.
func (s *Proxy) proxyCall(ctx context.Context, r *a2aedge.Task) *outcome {
	m := r.Manifest
	req, perr := parseProxyRequest(r.Message)
	if perr != nil {
		return proxyFailure(ProxyReply{Error: perr})
	}
	reply := ProxyReply{Server: req.Server, Tool: req.Tool}
	target, perr := s.resolveProxy(ctx, m, req)
	if perr != nil {
		reply.Error = perr
		return proxyFailure(reply)
	}
	reply.Tool = target.upstream
	args := req.Arguments
	if args == nil {
		args = map[string]any{}
	}
	// Missing required arguments are asked for, on the same task, rather
	// than sent to fail upstream: the client keeps its task and context.
	for missing := missingArgs(target.schema, args); len(missing) > 0; {
		answer, err := r.Ask(ctx, func(ec *a2asrv.ExecutorContext) *a2a.Message {
			return argumentsQuestion(ec, target, missing)
		})
		if err != nil {
			return proxyCanceled(ctx, reply)
		}
		if !mergeAnswer(args, answer, missing, target.schema) {
			reply.Error = proxyErr(SourceProxy, "invalid_request", "the reply gave none of the missing arguments (%s); send a data part {\"arguments\": {...}}", strings.Join(missing, ", "))
			return proxyFailure(reply)
		}
		left := missingArgs(target.schema, args)
		if len(left) >= len(missing) {
			reply.Error = proxyErr(SourceProxy, "invalid_request", "arguments still missing: %s", strings.Join(left, ", "))
			return proxyFailure(reply)
		}
		missing = left
	}
	raw, err := json.Marshal(args)
	if err != nil {
		reply.Error = proxyErr(SourceProxy, "invalid_request", "arguments: %v", err)
		return proxyFailure(reply)
	}

	scope := s.opts.Kernel.Runner().Scope(tool.ScopeParams{
		Agent: m.Name, SessionID: r.ContextID, Rules: s.opts.Kernel.Rules(m), Approver: r.Approver(),
	})
	call := llm.ToolCall{ID: "proxy-" + agent.NewID(), Name: target.name, Arguments: raw}
	ex := proxyExchange(r, target, &call)
	out := scope.Do(ctx, tool.Request{Call: call, Relay: ex, Progress: func(message string, progress, total float64) {
		r.Report(agent.Event{Type: agent.EventToolProgress, ToolCall: &call,
			Progress: &agent.Progress{Message: message, Progress: progress, Total: total}})
	}})
	return proxyResult(ctx, reply, out, &ex.Record)
}

// proxyResult turns the pipeline's outcome and the upstream's own answer
// into the task's end.
func proxyResult(ctx context.Context, reply ProxyReply, out tool.Outcome, rec *mcpclient.CallRecord) *outcome {
	if rec.Task != nil {
		reply.MCPTaskID = rec.Task.ID
	}
	switch {
	case ctx.Err() != nil:
		return proxyCanceled(ctx, reply)
	case rec.Result == nil && upstreamCancelled(rec):
		reply.Error = proxyErr(SourceProtocol, "canceled", "the MCP server's task %s was cancelled", rec.Task.ID)
		return &outcome{state: a2a.TaskStateCanceled, parts: replyParts(reply, reply.Error.Message)}
	case out.Decision == "deny":
		reply.Error = proxyErr(SourceProxy, "not_allowed", "%s", out.Result.Content)
	case out.Decision == "rejected":
		reply.Error = proxyErr(SourceProxy, "rejected", "%s", out.Result.Content)
	case rec.Result != nil:
		reply.MCPResult = callResultValue(rec.Result)
		if !rec.Result.IsError {
			reply.Success = true
			return &outcome{state: a2a.TaskStateCompleted, parts: replyParts(reply, summarize(rec.Result))}
		}
		msg := summarize(rec.Result)
		if msg == "" {
			msg = "the tool reported an error without saying why"
		}
		reply.Error = proxyErr(SourceTool, "tool_error", "%s", msg)
	case rec.RPCError != nil:
		reply.Error = &ProxyError{Source: SourceProtocol, Code: rec.RPCError.Code, Message: rec.RPCError.Message}
	case rec.Err != nil:
		code := "disconnected"
		switch {
		case errors.Is(rec.Err, context.DeadlineExceeded):
			code = "timeout"
		case errors.Is(rec.Err, mcpclient.ErrResultTooLarge):
			code = "result_too_large"
		}
		reply.Error = proxyErr(SourceProtocol, code, "%v", rec.Err)
	default:
		// The pipeline answered without reaching the server.
		reply.Error = proxyErr(SourceProxy, "not_allowed", "%s", out.Result.Content)
	}
	return proxyFailure(reply)
}

func proxyFailure(reply ProxyReply) *outcome {
	reply.Success = false
	return &outcome{state: a2a.TaskStateFailed, parts: replyParts(reply, reply.Error.Source+" error: "+reply.Error.Message)}
}

// proxyCanceled is the end of a call whose ctx ended: the client's
// cancel, or a stopping daemon's (agent.ErrShuttingDown, the cause its
// drain gives), which fails the task: nobody canceled it, and the client
// may retry on another replica.
func proxyCanceled(ctx context.Context, reply ProxyReply) *outcome {
	if cause := context.Cause(ctx); errors.Is(cause, agent.ErrShuttingDown) {
		reply.Error = proxyErr(SourceProxy, "shutting_down", "replica shutting down: the MCP call was stopped with it; retry")
		return proxyFailure(reply)
	}
	reply.Error = proxyErr(SourceProxy, "canceled", "the task was canceled; the MCP call was canceled with it")
	return &outcome{state: a2a.TaskStateCanceled, parts: replyParts(reply, reply.Error.Message)}
}

// replyParts is the reply message: a short text for people and the
// ProxyReply for programs. The data part holds plain JSON values only:
// a2a-go copies tasks with gob, which cannot copy arbitrary Go types.
func replyParts(reply ProxyReply, text string) []*a2a.Part {
	return []*a2a.Part{a2a.NewTextPart(text), a2a.NewDataPart(jsonValue(reply))}
}

// jsonValue is v as JSON-decoded values (maps, slices, strings, float64).
func jsonValue(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return map[string]any{"error": err.Error()}
	}
	return out
}

// callResultValue is an MCP CallToolResult as JSON values, with content
// and isError always present.
func callResultValue(res *mcp.CallToolResult) map[string]any {
	v := jsonValue(res)
	if v["content"] == nil {
		v["content"] = []any{}
	}
	v["isError"] = res.IsError
	return v
}

// summarize is the short text of a result: its text blocks, notes for
// other content, cut to 1,000 characters.
func summarize(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, "[resource link "+c.URI+"]")
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				parts = append(parts, "[resource "+c.Resource.URI+"]")
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(b))
	}
	return truncate(strings.Join(parts, "\n"), 1000)
}

// parseProxyRequest finds the request in a message: a data part holding
// tool_name or target_mcp_server_id, else a text part that is such a JSON
// object (for clients that can send only text).
func parseProxyRequest(m *a2a.Message) (ProxyRequest, *ProxyError) {
	var raw []byte
	if m != nil {
		for _, p := range m.Parts {
			if d, ok := p.Content.(a2a.Data); ok {
				if obj, ok := d.Value.(map[string]any); ok && (obj["tool_name"] != nil || obj["target_mcp_server_id"] != nil) {
					raw, _ = json.Marshal(obj)
					break
				}
			}
		}
		if raw == nil {
			for _, p := range m.Parts {
				t := bytes.TrimSpace([]byte(p.Text()))
				if len(t) > 0 && t[0] == '{' && bytes.Contains(t, []byte(`"tool_name"`)) {
					raw = t
					break
				}
			}
		}
	}
	if raw == nil {
		return ProxyRequest{}, proxyErr(SourceProxy, "invalid_request",
			`this agent proxies MCP tool calls: send a data part {"target_mcp_server_id": server, "tool_name": tool, "arguments": {...}}`)
	}
	var req ProxyRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return ProxyRequest{}, proxyErr(SourceProxy, "invalid_request", "bad request data part: %v (arguments must be a JSON object)", err)
	}
	req.Server, req.Tool = strings.TrimSpace(req.Server), strings.TrimSpace(req.Tool)
	if req.Server == "" || req.Tool == "" {
		return req, proxyErr(SourceProxy, "invalid_request", "target_mcp_server_id and tool_name are both required")
	}
	return req, nil
}

// proxyTarget is a resolved tool.
type proxyTarget struct {
	server, upstream string
	name             string // agentd's name, for the pipeline
	schema           json.RawMessage
}

// resolveProxy finds the tool req names among those agent m may reach.
func (s *Proxy) resolveProxy(ctx context.Context, m manifest.Manifest, req ProxyRequest) (proxyTarget, *ProxyError) {
	if s.opts.MCP == nil {
		return proxyTarget{}, proxyErr(SourceProxy, "unknown_server", "no MCP servers are configured")
	}
	st, ok := s.proxyServer(ctx, req.Server)
	if !ok {
		return proxyTarget{}, proxyErr(SourceProxy, "unknown_server", "no MCP server %q; this agent reaches: %s", req.Server, orNone(s.reachableServers(m)))
	}
	if len(m.MCPServers) > 0 && !slices.ContainsFunc(m.MCPServers, func(n string) bool { return strings.EqualFold(n, st.Name) }) {
		return proxyTarget{}, proxyErr(SourceProxy, "not_allowed", "mcp server %q is not among this agent's mcp_servers (%s)", st.Name, strings.Join(m.MCPServers, ", "))
	}
	if !st.Connected {
		msg := fmt.Sprintf("mcp server %q is %s", st.Name, st.State)
		if st.LastError != "" {
			msg += ": " + st.LastError
		}
		return proxyTarget{}, proxyErr(SourceProtocol, "disconnected", "%s", msg)
	}
	i := slices.IndexFunc(st.Tools, func(t mcpclient.ToolStatus) bool { return t.Upstream == req.Tool })
	if i < 0 {
		i = slices.IndexFunc(st.Tools, func(t mcpclient.ToolStatus) bool { return t.Name == req.Tool })
	}
	if i < 0 {
		return proxyTarget{}, proxyErr(SourceProxy, "unknown_tool", "mcp server %q offers no tool %q (it has none of that name, or its allowed_tools leave it out)", st.Name, req.Tool)
	}
	t := st.Tools[i]
	if d := s.opts.Kernel.Rules(m).Visible(policy.Call{Tool: t.Name, Server: st.Name}); d.Action != policy.Allow {
		return proxyTarget{}, proxyErr(SourceProxy, "not_allowed", "%s", d.Reason)
	}
	target := proxyTarget{server: st.Name, upstream: t.Upstream, name: t.Name, schema: json.RawMessage(`{"type":"object"}`)}
	for _, sp := range s.proxySpecs(m) {
		if sp.Name == t.Name {
			target.schema = sp.InputSchema
		}
	}
	return target, nil
}

// proxyServer returns the status of server name, waiting a while for it
// if it is still connecting.
func (s *Proxy) proxyServer(ctx context.Context, name string) (mcpclient.ServerStatus, bool) {
	deadline := time.Now().Add(proxyConnectWait)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		all := s.opts.MCP.Status()
		i := slices.IndexFunc(all, func(st mcpclient.ServerStatus) bool { return st.Name == name })
		if i < 0 {
			return mcpclient.ServerStatus{}, false
		}
		st := all[i]
		if st.Connected || st.State != mcpclient.StateConnecting || time.Now().After(deadline) {
			return st, true
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return st, true
		}
	}
}

// proxySpecs are the tools agent m may see.
func (s *Proxy) proxySpecs(m manifest.Manifest) []tool.Spec {
	return s.opts.Kernel.Runner().Scope(tool.ScopeParams{Agent: m.Name, Rules: s.opts.Kernel.Rules(m)}).Specs()
}

// reachableServers names the servers whose tools agent m may call.
func (s *Proxy) reachableServers(m manifest.Manifest) []string {
	var out []string
	for _, t := range s.proxyTools(m) {
		if !slices.Contains(out, t.server) {
			out = append(out, t.server)
		}
	}
	return out
}

// proxyTools lists every upstream tool agent m may reach.
func (s *Proxy) proxyTools(m manifest.Manifest) []proxyTarget {
	if s.opts.MCP == nil {
		return nil
	}
	specs := map[string]tool.Spec{}
	for _, sp := range s.proxySpecs(m) {
		specs[sp.Name] = sp
	}
	var out []proxyTarget
	for _, st := range s.opts.MCP.Status() {
		for _, t := range st.Tools {
			if sp, ok := specs[t.Name]; ok && sp.Server == st.Name {
				out = append(out, proxyTarget{server: st.Name, upstream: t.Upstream, name: t.Name, schema: sp.InputSchema})
			}
		}
	}
	return out
}

// Card implements a2aedge.ModelFree: it fills in a proxy agent's card: one skill per reachable tool,
// with its input schema in the description and, whole, in the
// ProxyExtensionURI extension.
func (s *Proxy) Card(card *a2a.AgentCard, m manifest.Manifest) {
	if m.Description == "" {
		card.Description = `MCP tool proxy: send a data part {"target_mcp_server_id": server, "tool_name": tool, "arguments": {...}}; the reply's data part holds {"success", "mcp_result", "error"}.`
	}
	card.DefaultInputModes = []string{"application/json", "text/plain"}
	card.DefaultOutputModes = []string{"application/json", "text/plain"}
	var listed []any
	for _, t := range s.proxyTools(m) {
		desc := ""
		for _, st := range s.opts.MCP.Status() {
			if st.Name != t.server {
				continue
			}
			for _, ts := range st.Tools {
				if ts.Name == t.name {
					desc = ts.Description
				}
			}
		}
		// mcpclient tags descriptions for models ("[MCP:server] ..."); the
		// skill names its server already.
		desc = strings.TrimPrefix(desc, "[MCP:"+t.server+"] ")
		var schema any
		_ = json.Unmarshal(t.schema, &schema)
		compact := new(bytes.Buffer)
		_ = json.Compact(compact, t.schema)
		example, _ := json.Marshal(map[string]any{"target_mcp_server_id": t.server, "tool_name": t.upstream, "arguments": map[string]any{}})
		id := t.server + "/" + t.upstream
		card.Skills = append(card.Skills, a2a.AgentSkill{
			ID:          id,
			Name:        t.upstream + " (" + t.server + ")",
			Description: truncate(strings.TrimSpace(desc+"\nInput schema (arguments): "+compact.String()), 4000),
			Tags:        []string{"mcp", t.server},
			Examples:    []string{string(example)},
			InputModes:  []string{"application/json"},
			OutputModes: []string{"application/json", "text/plain"},
		})
		listed = append(listed, map[string]any{"skill_id": id, "target_mcp_server_id": t.server, "tool_name": t.upstream, "input_schema": schema})
	}
	if listed == nil {
		listed = []any{}
	}
	card.Capabilities.Extensions = append(card.Capabilities.Extensions, a2a.AgentExtension{
		URI:         ProxyExtensionURI,
		Description: "The MCP tools this proxy agent reaches, with their input schemas.",
		Params:      map[string]any{"tools": listed},
	})
}

// missingArgs lists the schema's required properties args lacks.
func missingArgs(schema json.RawMessage, args map[string]any) []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	var out []string
	for _, name := range s.Required {
		if _, ok := args[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// argumentsQuestion asks for missing arguments.
func argumentsQuestion(ec *a2asrv.ExecutorContext, t proxyTarget, missing []string) *a2a.Message {
	var schema any
	_ = json.Unmarshal(t.schema, &schema)
	text := fmt.Sprintf("Tool %s on MCP server %s needs %s. Reply on this task with a data part {\"arguments\": {...}}", t.upstream, t.server, strings.Join(missing, ", "))
	if len(missing) == 1 {
		text += " or with the value as text"
	}
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text+"."), a2a.NewDataPart(map[string]any{
		"type": "arguments_required", "target_mcp_server_id": t.server, "tool_name": t.upstream,
		"missing": toAnySlice(missing), "input_schema": schema,
	}))
}

// mergeAnswer adds the arguments of a reply to args: a data part's
// "arguments" object, or the data part itself; or, when one argument is
// missing, the reply's text as its value (parsed as JSON when the schema
// wants something other than a string). It reports whether it added any.
func mergeAnswer(args map[string]any, m *a2a.Message, missing []string, schema json.RawMessage) bool {
	if m == nil {
		return false
	}
	added := false
	var text strings.Builder
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			obj, ok := d.Value.(map[string]any)
			if !ok {
				continue
			}
			if a, ok := obj["arguments"].(map[string]any); ok {
				obj = a
			}
			for k, v := range obj {
				if k == "target_mcp_server_id" || k == "tool_name" {
					continue
				}
				args[k] = v
				added = true
			}
			continue
		}
		text.WriteString(p.Text())
	}
	if added || len(missing) != 1 || strings.TrimSpace(text.String()) == "" {
		return added
	}
	value := strings.TrimSpace(text.String())
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	if typ, ok := s.Properties[missing[0]].Type.(string); ok && typ != "string" {
		var v any
		if json.Unmarshal([]byte(value), &v) == nil {
			args[missing[0]] = v
			return true
		}
	}
	args[missing[0]] = value
	return true
}

func toAnySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
