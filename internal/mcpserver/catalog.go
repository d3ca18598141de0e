package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/tool"
)

// AgentToolPrefix starts the name of every agent tool.
const AgentToolPrefix = "agentd_agent_"

// AgentToolName is the MCP tool name of an agent: agentd_agent_{name} with
// '-' replaced by '_', since some clients reject '-' in tool names.
func AgentToolName(agent string) string {
	return AgentToolPrefix + strings.ReplaceAll(agent, "-", "_")
}

// want is one tool an endpoint should serve. build runs only when the
// fingerprint differs from what is served, so an unchanged tool costs a
// string comparison per sync, not an SDK update.
type want struct {
	name  string
	fp    string
	build func() (*mcp.Tool, mcp.ToolHandler)
	// allowed reports whether a principal may use the tool: run the agent
	// behind it, or call the registry tool it serves.
	allowed func(p *principal.Principal) bool
	// fast lets stateless calls of the tool take the fast path (see
	// fastcall.go): its handler needs no session of the SDK's.
	fast bool
	// relayed, when set, is the handler with the caller given, which
	// lets calls of a session take the fast path too.
	relayed func(context.Context, *mcp.CallToolRequest, *mcpclient.Caller) (*mcp.CallToolResult, error)
}

// sync brings every endpoint's tools in line with the agent directory and
// the tool registry.
func (s *Server) sync(ctx context.Context) error {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	entries, err := s.opts.Kernel.Agents().List(ctx)
	if err != nil {
		return fmt.Errorf("list agents for mcp: %w", err)
	}
	var tools []tool.Tool
	if s.opts.Tools != nil && (s.opts.Config.ExposeTools || len(s.gateways) > 0) {
		tools = s.opts.Tools.List()
	}

	var main []want
	taken := map[string]string{} // tool name → agent it serves
	for _, e := range entries {
		m := e.Manifest
		if !m.Expose.MCP || (m.Kind != "" && m.Kind != manifest.KindLLM) {
			continue
		}
		name := AgentToolName(m.Name)
		if other, dup := taken[name]; dup {
			s.log.Warn("mcp server: two agents map to one tool name; serving the first", "tool", name, "served", other, "skipped", m.Name)
			continue
		}
		taken[name] = m.Name
		main = append(main, s.agentWant(name, m))
	}
	main = append(main, s.setWants(ctx, taken)...)
	if s.opts.Config.ExposeTools {
		for _, t := range tools {
			sp := t.Spec()
			if _, dup := taken[sp.Name]; dup {
				continue
			}
			taken[sp.Name] = ""
			main = append(main, s.registryWant(sp))
		}
	}
	s.main.apply(s, main)
	if s.main.count() > 0 {
		s.noToolsLogged.Store(false)
	}

	for name, gw := range s.gateways {
		var ws []want
		for _, t := range tools {
			sp := t.Spec()
			if up, ok := s.gatewayTool(t, sp, name); ok {
				ws = append(ws, s.gatewayWant(name, up, sp))
			}
		}
		gw.apply(s, ws)
	}
	return nil
}

// apply adds changed tools and removes gone ones. The SDK debounces the
// resulting list_changed notifications.
func (e *endpoint) apply(s *Server, ws []want) {
	e.mu.Lock()
	defer e.mu.Unlock()
	keep := make(map[string]bool, len(ws))
	var gone []string
	for _, w := range ws {
		keep[w.name] = true
		e.allowed[w.name] = w.allowed
		if fp, ok := e.served[w.name]; ok && fp == w.fp {
			continue
		}
		t, h := w.build()
		if err := addTool(e.srv, t, h); err != nil {
			s.log.Error("mcp server: cannot serve tool", "tool", w.name, "endpoint", e.name, "err", err)
			if _, ok := e.served[w.name]; ok {
				gone = append(gone, w.name)
				delete(e.served, w.name)
			}
			delete(e.fast, w.name)
			continue
		}
		e.served[w.name] = w.fp
		if w.fast {
			e.fast[w.name] = fastTool{h: h, relayed: w.relayed, paramHeaders: paramHeaders(t)}
		} else {
			delete(e.fast, w.name)
		}
	}
	for n := range e.served {
		if !keep[n] {
			gone = append(gone, n)
			delete(e.served, n)
			delete(e.fast, n)
		}
	}
	for n := range e.allowed {
		if !keep[n] {
			delete(e.allowed, n)
		}
	}
	if len(gone) > 0 {
		e.srv.RemoveTools(gone...)
	}
}

// addTool is srv.AddTool, with its panics (bad schemas) turned into errors:
// one malformed upstream tool must not take the server down.
func addTool(srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	srv.AddTool(t, h)
	return nil
}

const (
	agentInputSchema = (`{"type":"object","properties":{` +
		`"message":{"type":"string","description":"What to ask or tell the agent, with all the context it needs."},` +
		`"session_id":{"type":"string","description":"Continue an earlier conversation: the session_id of a previous answer."}},` +
		`"required":["message"],"additionalProperties":false}`)
	agentOutputSchema = (`{"type":"object","properties":{` +
		`"session_id":{"type":"string","description":"Pass it back to continue this conversation."},` +
		`"stop_reason":{"type":"string","description":"Why the agent stopped: end_turn, max_tokens, max_iterations, token_budget, refusal or cancelled."}},` +
		`"required":["session_id","stop_reason"]}`)
)

func (s *Server) agentWant(name string, m manifest.Manifest) want {
	desc := m.Description
	if desc == "" {
		desc = fmt.Sprintf("Ask the agentd agent %q.", m.Name)
	}
	desc += fmt.Sprintf(" (agentd agent %q; the answer's session_id continues the conversation.)", m.Name)
	agentName := m.Name
	return want{
		name:    name,
		allowed: func(p *principal.Principal) bool { return p.MayRunAgent(agentName) },
		fp:      "agent\x00" + agentName + "\x00" + desc,
		build: func() (*mcp.Tool, mcp.ToolHandler) {
			return &mcp.Tool{
				Name:         name,
				Title:        "Agent " + agentName,
				Description:  desc,
				InputSchema:  json.RawMessage(agentInputSchema),
				OutputSchema: json.RawMessage(agentOutputSchema),
			}, s.agentHandler(agentName)
		},
	}
}

func (s *Server) registryWant(sp tool.Spec) want {
	return want{
		name:    sp.Name,
		allowed: func(p *principal.Principal) bool { return p.MayCallTool(sp.Name) },
		fp:      specFingerprint("tool", sp),
		fast:    true,
		build: func() (*mcp.Tool, mcp.ToolHandler) {
			return specTool(sp.Name, sp), s.registryHandler(sp.Name)
		},
	}
}

func (s *Server) gatewayWant(gw, name string, sp tool.Spec) want {
	return want{
		name:    name,
		allowed: func(p *principal.Principal) bool { return p.MayCallTool(sp.Name) },
		fp:      specFingerprint("gateway\x00"+sp.Name, sp),
		fast:    true,
		build: func() (*mcp.Tool, mcp.ToolHandler) {
			return specTool(name, sp), s.gatewayHandler(gw, sp.Name)
		},
		relayed: s.gatewayCall(gw, sp.Name),
	}
}

func specFingerprint(kind string, sp tool.Spec) string {
	ro := "0"
	if sp.ReadOnly {
		ro = "1"
	}
	return kind + "\x00" + sp.Description + "\x00" + string(sp.InputSchema) + "\x00" + ro
}

func specTool(name string, sp tool.Spec) *mcp.Tool {
	t := &mcp.Tool{Name: name, Description: sp.Description, InputSchema: objectSchema(sp.InputSchema)}
	if sp.ReadOnly {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	return t
}

// objectSchema returns raw if it is a JSON Schema of type object, adds the
// type when it is missing, and otherwise falls back to an open object: the
// SDK refuses (panics on) any other input schema.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	switch m["type"] {
	case "object":
		return raw
	case nil:
		m["type"] = "object"
		if out, err := json.Marshal(m); err == nil {
			return out
		}
	}
	return json.RawMessage(`{"type":"object"}`)
}

// gatewayTool reports whether t is a tool of the upstream server gw and
// the name the gateway serves it under: the upstream's own name when
// Options.UpstreamName knows it, else the registry name without its
// "mcp_{server}_" prefix.
func (s *Server) gatewayTool(t tool.Tool, sp tool.Spec, gw string) (string, bool) {
	if server, name, ok := s.opts.UpstreamName(t); ok {
		return name, server == gw
	}
	if sp.Origin != tool.OriginMCP || sp.Server != gw {
		return "", false
	}
	prefix := "mcp_" + normalizeName(gw) + "_"
	if !strings.HasPrefix(sp.Name, prefix) {
		return "", false
	}
	return strings.TrimPrefix(sp.Name, prefix), true
}

// normalizeName lower-cases s and replaces every rune outside [a-z0-9_]
// with '_', as upstream tool names are normalised in the registry.
func normalizeName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
