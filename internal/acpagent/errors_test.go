package acpagent

import (
	"errors"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/sentineltest"
)

// TestErrorMapCoversCoreSentinels checks that wireError decides a code
// for every sentinel error of the core.
func TestErrorMapCoversCoreSentinels(t *testing.T) {
	sentineltest.Check(t, map[int][]string{
		resourceNotFound: {"agent.ErrSessionNotFound", "store.ErrNotFound"},
		-32602:           {"agent.ErrWrongAgent", "tool.ErrUnknownTool", "tool.ErrNoSuchApproval"},
		-32600:           {"agent.ErrAgentNotFound", "agent.ErrNoModel", "agent.ErrForbidden", "agent.ErrReadOnly", "agent.ErrSessionBusy"},
		// Not the editor's to fix: agentd's own state, its model
		// provider's key, an upstream, a shutdown.
		-32603: {"tool.ErrDisconnected", "store.ErrExists", "store.ErrConflict", "llm.ErrAuth", "netguard.ErrBlocked", "auditlog.ErrClosed",
			"store.ErrUnavailable", "agent.ErrShuttingDown"},
	}, func(err error) int {
		var re *acp.RequestError
		if !errors.As(wireError(err), &re) {
			return 0
		}
		return re.Code
	})
}
