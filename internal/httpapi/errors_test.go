package httpapi

import (
	"fmt"
	"testing"

	"github.com/agentd/agentd/internal/sentineltest"
)

// TestErrorMapCoversCoreSentinels checks that ToError decides a status for
// every sentinel error of the core.
func TestErrorMapCoversCoreSentinels(t *testing.T) {
	sentineltest.Check(t, map[string][]string{
		"404 not_found":         {"agent.ErrAgentNotFound", "agent.ErrSessionNotFound", "store.ErrNotFound", "tool.ErrUnknownTool", "tool.ErrNoSuchApproval"},
		"403 forbidden":         {"agent.ErrForbidden"},
		"403 blocked":           {"netguard.ErrBlocked"},
		"409 read_only":         {"agent.ErrReadOnly"},
		"409 conflict":          {"agent.ErrSessionBusy", "store.ErrExists", "store.ErrConflict"},
		"400 bad_request":       {"agent.ErrWrongAgent", "agent.ErrNoModel"},
		"502 model_auth":        {"llm.ErrAuth"},
		"502 upstream":          {"tool.ErrDisconnected"},
		"503 unavailable":       {"auditlog.ErrClosed"},
		"503 store_unavailable": {"store.ErrUnavailable"},
		"503 shutting_down":     {"agent.ErrShuttingDown"},
	}, func(err error) string {
		e := ToError(err)
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	})
}
