package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/tool"
)

// Upstreams gives gateways the live client session of an upstream server,
// for what the tool registry does not carry: resources, prompts and
// completions. The MCP client manager implements it.
type Upstreams interface {
	// Session returns the connected session of the named server, or false
	// when it is not connected.
	Session(server string) (*mcp.ClientSession, bool)
}

// newGateway builds the endpoint serving one upstream server unprefixed.
// Tools come from the registry (so calls pass the runner pipeline);
// resources, prompts and completions are forwarded to the upstream session
// when Upstreams is set.
func (s *Server) newGateway(name string) *endpoint {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if s.opts.Upstreams != nil {
		caps.Resources = &mcp.ResourceCapabilities{Subscribe: true}
		caps.Prompts = &mcp.PromptCapabilities{}
		caps.Completions = &mcp.CompletionCapabilities{}
		// Clients of the initialize-era protocol still set a log level;
		// the gateway accepts it rather than failing them.
		//lint:ignore SA1019 logging is deprecated in 2026-07-28 only
		caps.Logging = &mcp.LoggingCapabilities{}
	}
	so := &mcp.ServerOptions{
		Instructions: fmt.Sprintf("agentd gateway to the MCP server %q.", name),
		Capabilities: caps,
	}
	if s.opts.Upstreams != nil {
		// Subscriptions are forwarded by the middleware; these let the SDK
		// keep its own book of them.
		so.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
		so.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	e := s.newEndpoint(name, so)
	e.srv.AddReceivingMiddleware(s.gwTasks.middleware(name)) // gatewaytasks.go
	if s.opts.Upstreams != nil {
		e.srv.AddReceivingMiddleware(s.forward(name))
	}
	return e
}

// upstreamErrors is implemented by an Upstreams that can hand out the
// upstream's own JSON-RPC error of a failed request (the MCP client
// manager does), so a gateway passes on its code, message and data.
type upstreamErrors interface {
	UpstreamError(server string, err error) (*jsonrpc.Error, bool)
}

// upstreamError is what a forwarded request that failed with err answers.
func (s *Server) upstreamError(server string, err error) error {
	if u, ok := s.opts.Upstreams.(upstreamErrors); ok {
		if e, ok := u.UpstreamError(server, err); ok {
			return e
		}
	}
	return wireError(err)
}

// forward answers the non-tool features from the upstream session. Request
// metadata is not forwarded: the downstream's protocol version is not the
// gateway's; only its capabilities are, where the upstream may ask for
// input (see caller.go).
func (s *Server) forward(server string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "resources/list", "resources/templates/list", "resources/read",
				"resources/subscribe", "resources/unsubscribe",
				"prompts/list", "prompts/get", "completion/complete":
			default:
				return next(ctx, method, req)
			}
			res, err := s.forwardOne(ctx, server, req, func() (mcp.Result, error) { return next(ctx, method, req) })
			if err != nil {
				return nil, s.upstreamError(server, err)
			}
			if ss, _ := downstream(req); ss != nil && sessionless(ss) {
				// The SDK types only the results of its own handlers.
				switch r := res.(type) {
				case *mcp.ReadResourceResult:
					return withResultType(r)
				case *mcp.GetPromptResult:
					return withResultType(r)
				}
			}
			return res, nil
		}
	}
}

// withResultType is r with the resultType a 2026-07-28 client requires,
// when the upstream (of an earlier protocol) left it out. The field is the
// SDK's own to set, so r goes through its JSON form.
func withResultType[T any](r *T) (*T, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if _, ok := m["resultType"]; ok {
		return r, nil
	}
	m["resultType"] = json.RawMessage(`"complete"`)
	if _, ok := m["inputRequests"]; ok {
		m["resultType"] = json.RawMessage(`"input_required"`)
	}
	if b, err = json.Marshal(m); err != nil {
		return nil, err
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		return nil, err
	}
	return out, nil
}

// requestBridge is implemented by an Upstreams that can run a 2026-07-28
// client's prompts/get and resources/read on an initialize-era link,
// where the upstream asks for input by requests of its own (the MCP
// client manager does: mcpclient.Manager.BridgeRequest).
type requestBridge interface {
	BridgeRequest(ctx context.Context, server, method string, caps *mcp.ClientCapabilities, answers mcp.InputResponseMap, state string,
		do func(ctx context.Context, cs *mcp.ClientSession) (mcp.Result, error),
		asInput func(reqs mcp.InputRequestMap, state string) mcp.Result) (mcp.Result, error)
}

// bridger is the bridge for a request of downstream session ss on the
// upstream link cs, when one is needed: a 2026-07-28 client (asked for
// input in results) on an initialize-era link (which asks by requests).
func (s *Server) bridger(ss *mcp.ServerSession, cs *mcp.ClientSession) (requestBridge, bool) {
	if ss == nil || !sessionless(ss) || modernLink(cs) {
		return nil, false
	}
	b, ok := s.opts.Upstreams.(requestBridge)
	return b, ok
}

// forwardOne forwards one request to the upstream session; next runs the
// SDK's own handling once the upstream has accepted a (un)subscription.
func (s *Server) forwardOne(ctx context.Context, server string, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
	cs, ok := s.opts.Upstreams.Session(server)
	if !ok {
		return nil, failf(tool.ErrDisconnected, "the upstream server %q is not connected", server)
	}
	// Params may be typed nil pointers when the request had none.
	switch p := req.GetParams().(type) {
	case *mcp.ListResourcesParams:
		q := mcp.ListResourcesParams{}
		if p != nil {
			q.Cursor = p.Cursor
		}
		return cs.ListResources(ctx, &q)
	case *mcp.ListResourceTemplatesParams:
		q := mcp.ListResourceTemplatesParams{}
		if p != nil {
			q.Cursor = p.Cursor
		}
		return cs.ListResourceTemplates(ctx, &q)
	case *mcp.ListPromptsParams:
		q := mcp.ListPromptsParams{}
		if p != nil {
			q.Cursor = p.Cursor
		}
		return cs.ListPrompts(ctx, &q)
	case *mcp.ReadResourceParams:
		if p == nil {
			break
		}
		ss, caps := downstream(req)
		if b, ok := s.bridger(ss, cs); ok {
			return b.BridgeRequest(ctx, server, "resources/read", caps, p.InputResponses, p.RequestState,
				func(ctx context.Context, cs *mcp.ClientSession) (mcp.Result, error) {
					return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: p.URI})
				}, func(reqs mcp.InputRequestMap, state string) mcp.Result {
					return &mcp.ReadResourceResult{InputRequests: reqs, RequestState: state}
				})
		}
		return withInput(ctx, ss, caps, func(answers mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, error) {
			return cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: forwardMeta(cs, caps), URI: p.URI, InputResponses: answers, RequestState: state})
		}, func(r *mcp.ReadResourceResult) (mcp.InputRequestMap, string) { return r.InputRequests, r.RequestState },
			p.InputResponses, p.RequestState)
	case *mcp.GetPromptParams:
		if p == nil {
			break
		}
		ss, caps := downstream(req)
		if b, ok := s.bridger(ss, cs); ok {
			return b.BridgeRequest(ctx, server, "prompts/get", caps, p.InputResponses, p.RequestState,
				func(ctx context.Context, cs *mcp.ClientSession) (mcp.Result, error) {
					return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: p.Arguments})
				}, func(reqs mcp.InputRequestMap, state string) mcp.Result {
					return &mcp.GetPromptResult{InputRequests: reqs, RequestState: state}
				})
		}
		return withInput(ctx, ss, caps, func(answers mcp.InputResponseMap, state string) (*mcp.GetPromptResult, error) {
			return cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: forwardMeta(cs, caps), Name: p.Name, Arguments: p.Arguments, InputResponses: answers, RequestState: state})
		}, func(r *mcp.GetPromptResult) (mcp.InputRequestMap, string) { return r.InputRequests, r.RequestState },
			p.InputResponses, p.RequestState)
	case *mcp.CompleteParams:
		if p == nil {
			break
		}
		q := *p
		q.Meta = nil
		return cs.Complete(ctx, &q)
	case *mcp.SubscribeParams:
		if p == nil {
			break
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: p.URI}); err != nil {
			return nil, err
		}
	case *mcp.UnsubscribeParams:
		if p == nil {
			break
		}
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: p.URI}); err != nil {
			return nil, err
		}
	}
	return next()
}

// downstream returns the session and capabilities of the client that sent
// req.
func downstream(req mcp.Request) (*mcp.ServerSession, *mcp.ClientCapabilities) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	var caps *mcp.ClientCapabilities
	if r, ok := req.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}); ok {
		caps = r.ClientCapabilities()
	}
	return ss, caps
}
