package mcpclient

import (
	"slices"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/sandbox"
)

// ServerStatus describes one server for GET /api/mcp/servers: the daemon
// lists every entry as configured and the connected ones as connected.
// No field ever holds a header value.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"` // stdio, http or sse
	State     string `json:"state"`     // connecting, connected, failed, disabled
	Connected bool   `json:"connected"`
	// Tools are the tools agents get from this server.
	Tools      []ToolStatus `json:"tools"`
	ToolsCount int          `json:"tools_count"`
	// Collisions are tools left out because their name was taken.
	Collisions []string `json:"collisions,omitempty"`
	LastError  string   `json:"last_error,omitempty"`
	// Reconnects counts sessions re-established after a drop.
	Reconnects int `json:"reconnects"`
	// LastDownAt and LastDownError are when and why the server last
	// dropped or failed to connect; unlike LastError they are kept after
	// it reconnects, so a restart within seconds still shows.
	LastDownAt    *time.Time `json:"last_down_at,omitempty"`
	LastDownError string     `json:"last_down_error,omitempty"`
	// ConnectedSince is when the current session came up.
	ConnectedSince  *time.Time  `json:"connected_since,omitempty"`
	ProtocolVersion string      `json:"protocol_version,omitempty"`
	ServerInfo      *ServerInfo `json:"server_info,omitempty"`
	// AuthorizeURL is the URL the user must open to authorize agentd,
	// while a connect attempt waits for them (OAuth servers only).
	AuthorizeURL string `json:"authorize_url,omitempty"`
	// Sandbox is how a stdio server is confined on this machine.
	Sandbox *SandboxStatus `json:"sandbox,omitempty"`
}

// SandboxStatus says what confines a stdio server here, and what of its
// policy this machine cannot enforce (shown in the dashboard).
type SandboxStatus struct {
	Confined bool     `json:"confined"`
	Network  string   `json:"network"`
	Enforced string   `json:"enforced"`
	Missing  []string `json:"missing,omitempty"`
}

// ToolStatus is one tool in a ServerStatus.
type ToolStatus struct {
	Name        string `json:"name"`
	Upstream    string `json:"upstream"`
	Description string `json:"description"`
}

// ServerInfo is what the server said about itself.
type ServerInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// Status returns every server, in the order they were added.
func (m *Manager) Status() []ServerStatus {
	offered := map[*mcpTool]bool{}
	for _, t := range *m.snapshot.Load() {
		if mt, ok := t.(*mcpTool); ok {
			offered[mt] = true
		}
	}
	var cross map[string][]string
	if p := m.crossCol.Load(); p != nil {
		cross = *p
	}
	servers := m.serversInOrder()
	out := make([]ServerStatus, 0, len(servers))
	for _, s := range servers {
		s.mu.Lock()
		st := ServerStatus{
			Name:            s.name,
			Transport:       s.cfg.Transport.Type,
			State:           s.state,
			Connected:       s.state == StateConnected && s.sess != nil,
			Tools:           []ToolStatus{},
			Collisions:      slices.Clone(s.collisions),
			LastError:       s.lastErr,
			Reconnects:      s.reconnects,
			LastDownError:   s.lastDownErr,
			ProtocolVersion: s.protocol,
			Sandbox:         m.sandboxStatus(s.cfg),
		}
		if s.oauthMu.TryLock() {
			// Never wait here: the handler may be mid-construction.
			st.AuthorizeURL = s.oauth.authorizeURL()
			s.oauthMu.Unlock()
		}
		if !s.lastDown.IsZero() {
			t := s.lastDown.UTC()
			st.LastDownAt = &t
		}
		if st.Connected && !s.upSince.IsZero() {
			t := s.upSince.UTC()
			st.ConnectedSince = &t
		}
		if s.info != nil {
			st.ServerInfo = &ServerInfo{Name: s.info.Name, Title: s.info.Title, Version: s.info.Version}
		}
		for _, t := range s.tools {
			if offered[t] {
				st.Tools = append(st.Tools, ToolStatus{Name: t.spec.Name, Upstream: t.upstream, Description: t.spec.Description})
			}
		}
		s.mu.Unlock()
		st.Collisions = append(st.Collisions, cross[s.name]...)
		st.ToolsCount = len(st.Tools)
		out = append(out, st)
	}
	return out
}

// sandboxStatus plans a stdio server's confinement as startProcess would.
func (m *Manager) sandboxStatus(cfg config.MCPServer) *SandboxStatus {
	if cfg.Transport.Type != TransportStdio || m.opts.Sandbox == nil {
		return nil
	}
	pol := sandbox.Policy{Network: sandbox.NetworkAny}
	if m.opts.SandboxPolicy != nil {
		path, err := lookPath(cfg.Transport.Command, envValue(childEnv(cfg.Env, m.opts.LookupEnv, m.opts.Home), "PATH"), cfg.Transport.Dir)
		if err != nil {
			path = cfg.Transport.Command
		}
		pol = m.opts.SandboxPolicy(cfg, path)
	}
	enf, confined := m.opts.Sandbox.Plan(pol)
	return &SandboxStatus{Confined: confined, Network: string(pol.Network), Enforced: enf.Summary(), Missing: enf.Missing}
}
