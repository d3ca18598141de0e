package mcpserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/principal"
)

// principalKey is where a request's principal travels in the SDK's token
// info, from the HTTP middleware to the tool handlers.
const principalKey = "agentd.principal"

// bindPrincipal hands the principal the daemon's middleware authenticated
// to the SDK as token info. The SDK then binds a session to the principal
// that opened it (a session id presented with another principal's key is
// refused, so one principal cannot ride another's session), and handlers
// find the principal in req.Extra.TokenInfo.
func bindPrincipal(h http.Handler) http.Handler {
	withToken := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p := principal.FromContext(r.Context())
		if p == nil {
			return nil, auth.ErrInvalidToken
		}
		return principalToken(p), nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := principal.FromContext(r.Context()); p != nil && p != principal.Local && r.Header.Get("Authorization") != "" {
			withToken.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// callerPrincipal is the principal of the request a handler serves, or nil
// for a local client (stdio, a daemon without keys).
func callerPrincipal(req mcp.Request) *principal.Principal {
	if req == nil {
		return nil
	}
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	p, _ := extra.TokenInfo.Extra[principalKey].(*principal.Principal)
	return p
}

// mayCall refuses a direct tool call its principal has no right to, as a
// tool error the client's model can read.
func mayCall(req mcp.Request, name string) (*principal.Principal, *mcp.CallToolResult) {
	p := callerPrincipal(req)
	if p != nil && !p.MayCallTool(name) {
		return p, toolError(fmt.Sprintf("forbidden: principal %q may not call tool %q", p.Name, name), nil)
	}
	return p, nil
}

// filterTools is a receiving middleware that lists only the tools the
// caller's principal may use: agents it may run, tools it may call.
func (s *Server) filterTools(allowed func(p *principal.Principal, tool string) bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			p := callerPrincipal(req)
			if method != "tools/list" || err != nil || p == nil {
				return res, err
			}
			lr, ok := res.(*mcp.ListToolsResult)
			if !ok {
				return res, err
			}
			out := *lr
			out.Tools = make([]*mcp.Tool, 0, len(lr.Tools))
			for _, t := range lr.Tools {
				if allowed(p, t.Name) {
					out.Tools = append(out.Tools, t)
				}
			}
			return &out, nil
		}
	}
}
