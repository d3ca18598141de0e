package daemon

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
)

// TestJSONRPCRoutes: the requests whose rate-limit refusal is a JSON-RPC
// error are exactly the JSON-RPC endpoints of the MCP and A2A edges.
func TestJSONRPCRoutes(t *testing.T) {
	d := &Daemon{}
	d.cfg.Store(&config.Config{A2A: config.A2A{ListenPath: "/a2a"}})
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

// TestThrottledClientDoesNotStarveAnother: with limit_loopback, one MCP
// client on loopback that runs into the rate limit leaves another
// client on the same address able to open its session and call (issue
// 30 item 6): each connection has the configured budget, the address
// four times it.
func TestThrottledClientDoesNotStarveAnother(t *testing.T) {
	_, srv := testDaemon(t, `
[mcp]
expose_tools = true
[limits]
rate_per_sec = 1
burst = 5
limit_loopback = true
`, nil)
	connect := func(name string) *mcp.ClientSession {
		// A client of its own: its own connections, as another process.
		hc := &http.Client{Transport: &http.Transport{}}
		t.Cleanup(hc.CloseIdleConnections)
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	greedy := connect("greedy")
	throttled := false
	for range 20 {
		if _, err := greedy.ListTools(t.Context(), nil); err != nil {
			if !strings.Contains(strings.ToLower(err.Error()), "too many requests") {
				t.Fatalf("greedy: %v, want a rate-limit refusal", err)
			}
			throttled = true
			break
		}
	}
	if !throttled {
		t.Fatal("20 calls at once were never throttled: the test proves nothing")
	}
	other := connect("other")
	if _, err := other.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("the other client, while the first is throttled: %v", err)
	}
}
