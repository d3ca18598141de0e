package mcpserver

import (
	"context"
	"encoding/json"
	"github.com/agentd/agentd/internal/principal"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolSet is a changing set of tools that answer MCP clients themselves,
// in MCP's own terms (progress, cancellation, elicitation, resource
// content), rather than through the tool pipeline's flat tool.Result. The
// A2A bridge (bridge.Bridge), which serves A2A agents as tools, is one.
// Its tools are served on the main endpoint beside the agents; a name an
// agent tool already has is left out, and a set's tool wins over a
// registry tool of the same name (expose_tools).
type ToolSet interface {
	// MCPTools lists the set's tools. It is called on every re-sync.
	MCPTools(ctx context.Context) ([]*mcp.Tool, error)
	// CallMCPTool serves a tools/call of one of them.
	CallMCPTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
	// OnChange registers f, called when the list may have changed; the
	// returned function unregisters it. f must not block.
	OnChange(f func()) (cancel func())
}

// AddToolSet serves ts's tools from now on, following its changes until
// Close. Sets built after the server (the daemon builds the A2A edge
// after the MCP edge) are added this way; Options.ToolSets takes the
// others.
func (s *Server) AddToolSet(ts ToolSet) {
	s.syncMu.Lock()
	if s.closed {
		s.syncMu.Unlock()
		return
	}
	s.sets = append(s.sets, ts)
	s.syncMu.Unlock()
	cancel := ts.OnChange(s.kick)
	s.syncMu.Lock()
	closed := s.closed
	if !closed {
		s.unwatchSets = append(s.unwatchSets, cancel)
	}
	s.syncMu.Unlock()
	if closed {
		cancel()
		return
	}
	s.kick()
}

// toolSets returns the sets served now.
func (s *Server) toolSets() []ToolSet {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	return append([]ToolSet(nil), s.sets...)
}

// setWants lists the tools of every set not already taken; a set that
// fails to list keeps nothing this round and the error is logged.
func (s *Server) setWants(ctx context.Context, taken map[string]string) []want {
	var out []want
	for _, ts := range s.toolSets() {
		tools, err := ts.MCPTools(ctx)
		if err != nil {
			s.log.Error("mcp server: listing a tool set failed", "err", err)
			continue
		}
		for _, t := range tools {
			if t == nil || t.Name == "" {
				continue
			}
			if other, dup := taken[t.Name]; dup {
				s.log.Warn("mcp server: a bridged tool's name is taken; serving the first", "tool", t.Name, "served", other)
				continue
			}
			taken[t.Name] = ""
			fp, err := json.Marshal(t)
			if err != nil {
				continue
			}
			handler := ts.CallMCPTool
			name := t.Name
			out = append(out, want{
				name:    name,
				fp:      "set\x00" + string(fp),
				allowed: func(p *principal.Principal) bool { return p.MayCallTool(name) },
				build: func() (*mcp.Tool, mcp.ToolHandler) {
					return t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						if _, refused := mayCall(req, name); refused != nil {
							return refused, nil
						}
						return handler(ctx, req)
					}
				},
			})
		}
	}
	return out
}
