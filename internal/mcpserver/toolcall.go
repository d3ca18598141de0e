package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/tool"
)

// ClientAgent is the agent name direct tool calls from MCP clients are
// made (and audited) under; gateway calls use "gateway:{server}".
const ClientAgent = "mcp-client"

// clientRules lets an MCP client see every tool ("*") while the untrusted
// policy still applies: once a session has seen untrusted data, the tools
// it names need approval (asked by elicitation when possible) or are
// denied.
func (s *Server) clientRules() *policy.Rules {
	return s.opts.Kernel.Rules(manifest.Manifest{Name: ClientAgent, Tools: []string{"*"}})
}

// registryHandler serves a registry tool (expose_tools) through the runner
// pipeline. Taint is tracked per MCP session; the loop guard is not, since
// a scope lives for one call: an MCP client repeating a call is not a model
// stuck in a loop.
func (s *Server) registryHandler(name string) mcp.ToolHandler {
	rules := s.clientRules()
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ss := req.Session
		who, refused := mayCall(req, name)
		if refused != nil {
			return refused, nil
		}
		scope := s.opts.Kernel.Runner().Scope(tool.ScopeParams{
			Principal: who,
			Agent:     ClientAgent, SessionID: sessionID(ss), Workspace: s.opts.Workspace,
			Rules: rules, Approver: approver(req), Tainted: s.taint.has(ss),
			CancelledBy: mcpCanceller,
		})
		p := newProgress(ctx, req)
		out := scope.Call(ctx, llm.ToolCall{Name: name, Arguments: req.Params.Arguments}, p.reportFunc())
		p.finish()
		if out.Untrusted {
			s.taint.add(ss, s.main.srv)
		}
		return outcomeResult(out), nil
	}
}

// mcpCanceller is who cancels a call's context without a cause here: the
// SDK cancels a request's context when its client sends
// notifications/cancelled (or drops the stream, see cancelAbandoned); a
// session ending cancels with a cause of its own.
const mcpCanceller = "the MCP client (notifications/cancelled)"

func (p *progress) reportFunc() func(string, float64, float64) {
	if p == nil {
		return nil
	}
	return p.report
}

func sessionID(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	return ss.ID()
}

// outcomeResult renders a pipeline outcome as an MCP result: the text the
// model would see (denials and errors included) and the structured content.
func outcomeResult(out tool.Outcome) *mcp.CallToolResult {
	r := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: out.Result.Content}},
		IsError: out.Result.IsError,
	}
	if len(out.Structured) > 0 {
		r.StructuredContent = out.Structured
	}
	return r
}

// gatewayHandler serves an upstream tool unprefixed. The call still goes
// through the runner pipeline (policy, timeout, audit); a capturing wrapper
// keeps the upstream's own answer so a gateway is transparent: its content
// blocks (images, audio, resources) pass unchanged, its JSON-RPC errors
// stay JSON-RPC errors, and nothing is truncated or wrapped as untrusted
// data, since the caller is not one of agentd's models.
func (s *Server) gatewayHandler(gw, regName string) mcp.ToolHandler {
	call := s.gatewayCall(gw, regName)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return call(ctx, req, gatewayCaller(req))
	}
}

// gatewayCall is gatewayHandler with the caller (the client the upstream
// may ask for input) given: the fast path (fastcall.go) relays the
// upstream's requests itself.
func (s *Server) gatewayCall(gw, regName string) func(context.Context, *mcp.CallToolRequest, *mcpclient.Caller) (*mcp.CallToolResult, error) {
	rules := s.clientRules()
	agentName := "gateway:" + gw
	return func(ctx context.Context, req *mcp.CallToolRequest, caller *mcpclient.Caller) (*mcp.CallToolResult, error) {
		t, ok := s.opts.Tools.Lookup(regName)
		if !ok {
			return toolError("the upstream server "+gw+" is not connected", nil), nil
		}
		who, refused := mayCall(req, regName)
		if refused != nil {
			return refused, nil
		}
		capt := &capture{Tool: t, ex: &mcpclient.Exchange{Caller: caller}}
		scope := s.opts.Kernel.Runner().Scope(tool.ScopeParams{
			Principal: who,
			Agent:     agentName, SessionID: sessionID(req.Session), Workspace: s.opts.Workspace,
			Rules: rules, Extra: []tool.Tool{capt}, CancelledBy: mcpCanceller,
		})
		p := newProgress(ctx, req)
		out := scope.Do(ctx, tool.Request{
			Call:     llm.ToolCall{Name: regName, Arguments: req.Params.Arguments},
			Progress: p.reportFunc(), Relay: capt.ex,
		})
		p.finish()
		switch {
		case capt.rpcErr != nil:
			return nil, capt.rpcErr
		case capt.res != nil:
			return capt.res, nil
		}
		return outcomeResult(out), nil
	}
}

// capture wraps a tool for one call and keeps the upstream's answer; both
// stay nil when the call failed (not connected, timed out), and the
// pipeline's outcome is served instead.
type capture struct {
	tool.Tool
	ex     *mcpclient.Exchange // the call's relay: the caller down, the upstream's answer up
	res    *mcp.CallToolResult
	rpcErr *jsonrpc.Error
}

// Call runs the tool; the MCP client manager's tools fill the call's
// mcpclient.Exchange (its Relay, c.ex) with the upstream's own answer.
func (c *capture) Call(ctx context.Context, call *tool.Call) (tool.Result, error) {
	r, err := c.Tool.Call(ctx, call)
	rec := &c.ex.Record
	switch {
	case err != nil:
	case rec.Result != nil:
		c.res = rec.Result
	case rec.RPCError != nil:
		c.rpcErr = rec.RPCError
	default:
		// Not an MCP client tool: serve what it rendered.
		c.res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Content}}, IsError: r.IsError}
		if len(r.Structured) > 0 {
			c.res.StructuredContent = r.Structured
		}
	}
	return r, err
}

// taintSet remembers which MCP sessions have seen untrusted data.
type taintSet struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]bool
}

func (t *taintSet) has(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[ss]
}

// add marks ss; entries of sessions srv no longer has are dropped then,
// so the set stays as small as the live sessions.
func (t *taintSet) add(ss *mcp.ServerSession, srv *mcp.Server) {
	if ss == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[*mcp.ServerSession]bool{}
	}
	t.m[ss] = true
	if len(t.m) > 16 {
		live := map[*mcp.ServerSession]bool{}
		for s := range srv.Sessions() {
			live[s] = true
		}
		for s := range t.m {
			if !live[s] {
				delete(t.m, s)
			}
		}
	}
}
