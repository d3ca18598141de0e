package daemon

import (
	"net/http/httptest"
	"testing"

	"github.com/agentd/agentd/internal/config"
)

// TestJSONRPCRoutes: the requests whose rate-limit refusal is a JSON-RPC
// error are exactly the JSON-RPC endpoints of the MCP and A2A edges.
func TestJSONRPCRoutes(t *testing.T) {
	d := &Daemon{cfg: &config.Config{A2A: config.A2A{ListenPath: "/a2a"}}}
	for _, tt := range []struct {
		method, path string
		want         bool
	}{
		{"POST", "/mcp", true},
		{"POST", "/mcp/gateway/everything", true},
		{"GET", "/mcp", false},
		{"POST", "/mcpx", false},
		{"POST", "/a2a", true},
		{"POST", "/a2a/agents/helper", true},
		{"POST", "/a2a/tasks/send", true},
		{"POST", "/a2a/agents/helper/message:send", false}, // REST binding
		{"GET", "/a2a/agents/helper/.well-known/agent-card.json", false},
		{"POST", "/api/agents/helper/messages", false},
	} {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		if got := d.jsonRPC(r); got != tt.want {
			t.Errorf("%s %s: jsonRPC = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}
