package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	if s.opts.Upstreams != nil {
		e.srv.AddReceivingMiddleware(s.forward(name))
	}
	return e
}

// forward answers the non-tool features from the upstream session. Request
// metadata is not forwarded: the downstream's protocol version and
// capabilities are not the gateway's.
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
			cs, ok := s.opts.Upstreams.Session(server)
			if !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the upstream server %q is not connected", server)}
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
				return cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: p.URI})
			case *mcp.GetPromptParams:
				if p == nil {
					break
				}
				return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: p.Arguments})
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
			return next(ctx, method, req)
		}
	}
}
