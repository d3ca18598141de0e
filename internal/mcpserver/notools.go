package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/manifest"
)

// explainNoTools is a receiving middleware of the main endpoint: when a
// client lists tools and the endpoint serves none, it logs why, once until
// tools are served again. An empty list is otherwise silent, and common:
// MCP hosts start `agentd mcp` with a minimal environment, without the
// AGENTD_HOME of the user's shell, so it reads another config file than
// the user expects, or none.
func (s *Server) explainNoTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "tools/list" && err == nil && s.main.count() == 0 && s.noToolsLogged.CompareAndSwap(false, true) {
			config := s.opts.ConfigOrigin
			if config == "" {
				config = "unknown"
			}
			s.log.Warn("mcp server: serving no tools", "why", s.whyNoTools(ctx), "config", config)
		}
		return res, err
	}
}

// whyNoTools says why the main endpoint serves nothing and which keys
// would change that.
func (s *Server) whyNoTools(ctx context.Context) string {
	var why []string
	entries, err := s.opts.Kernel.Agents().List(ctx)
	switch {
	case err != nil:
		why = append(why, "the agents could not be listed: "+err.Error())
	case len(entries) == 0:
		why = append(why, "no agents are configured (add an [[agents]] table whose [agents.expose] table says mcp = true)")
	default:
		var names, proxies []string
		for _, e := range entries {
			names = append(names, e.Manifest.Name)
			if e.Manifest.Expose.MCP && e.Manifest.Kind == manifest.KindMCPProxy {
				proxies = append(proxies, e.Manifest.Name)
			}
		}
		msg := fmt.Sprintf("no agent has expose.mcp = true (agents: %s; set mcp = true in an agent's [agents.expose] table)", strings.Join(names, ", "))
		if len(proxies) > 0 {
			msg += fmt.Sprintf("; %s exposed but of kind %s, which is not served as a tool", strings.Join(proxies, ", "), manifest.KindMCPProxy)
		}
		why = append(why, msg)
	}
	switch {
	case !s.opts.Config.ExposeTools:
		why = append(why, "[mcp] expose_tools is false (set it to true to serve the tool set too)")
	case s.opts.Tools == nil:
		why = append(why, "[mcp] expose_tools is true but this server has no tool registry")
	default:
		why = append(why, "[mcp] expose_tools is true but no tool is registered")
	}
	return strings.Join(why, "; ")
}

// count is how many tools the endpoint serves now.
func (e *endpoint) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.served)
}
