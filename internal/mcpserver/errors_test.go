package mcpserver

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentd/agentd/internal/sentineltest"
)

// TestErrorMapCoversCoreSentinels checks that wireError decides a code
// for every sentinel error of the core.
func TestErrorMapCoversCoreSentinels(t *testing.T) {
	sentineltest.Check(t, map[int64][]string{
		jsonrpc.CodeInvalidParams: {"agent.ErrAgentNotFound", "agent.ErrSessionNotFound", "agent.ErrWrongAgent",
			"store.ErrNotFound", "tool.ErrUnknownTool", "tool.ErrNoSuchApproval"},
		jsonrpc.CodeInvalidRequest: {"agent.ErrForbidden", "agent.ErrReadOnly", "agent.ErrSessionBusy"},
		// Not the client's to fix: agentd's own state, its model
		// provider's key, an upstream, a shutdown.
		jsonrpc.CodeInternalError: {"agent.ErrNoModel", "tool.ErrDisconnected", "store.ErrExists", "store.ErrConflict",
			"llm.ErrAuth", "netguard.ErrBlocked", "auditlog.ErrClosed",
			"store.ErrUnavailable", "agent.ErrShuttingDown"},
	}, func(err error) int64 { return wireError(err).Code })
}
