// Package sentineltest lists the core's sentinel errors so that every
// protocol edge's test can check that its error map decides a wire code
// for each one. Its own test keeps the list complete: a new Err* variable
// in a core package fails it until it is listed here, and then every
// edge's test fails until the edge has decided.
package sentineltest

import (
	"fmt"
	"testing"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/auditlog"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// Sentinel is one core error, by the name code uses for it.
type Sentinel struct {
	Name string // agent.ErrAgentNotFound
	Err  error
}

// Core returns every exported sentinel error of the core and vocabulary
// packages (TestImportGraph's list).
func Core() []Sentinel {
	return []Sentinel{
		{"agent.ErrAgentNotFound", agent.ErrAgentNotFound},
		{"agent.ErrReadOnly", agent.ErrReadOnly},
		{"agent.ErrSessionNotFound", agent.ErrSessionNotFound},
		{"agent.ErrSessionBusy", agent.ErrSessionBusy},
		{"agent.ErrNoModel", agent.ErrNoModel},
		{"agent.ErrWrongAgent", agent.ErrWrongAgent},
		{"agent.ErrForbidden", agent.ErrForbidden},
		{"tool.ErrUnknownTool", tool.ErrUnknownTool},
		{"tool.ErrNoSuchApproval", tool.ErrNoSuchApproval},
		{"tool.ErrDisconnected", tool.ErrDisconnected},
		{"store.ErrNotFound", store.ErrNotFound},
		{"store.ErrExists", store.ErrExists},
		{"store.ErrConflict", store.ErrConflict},
		{"store.ErrUnavailable", store.ErrUnavailable},
		{"agent.ErrShuttingDown", agent.ErrShuttingDown},
		{"llm.ErrAuth", llm.ErrAuth},
		{"netguard.ErrBlocked", netguard.ErrBlocked},
		{"auditlog.ErrClosed", auditlog.ErrClosed},
	}
}

// Check fails t for every core sentinel that want does not list, and for
// every one that wire, given the sentinel wrapped as callers wrap it,
// maps to something else than want says. want is the edge's decisions:
// for each wire result (a status, a code), the sentinels that get it;
// wire is the edge's one error map, reduced to that result.
func Check[T comparable](t testing.TB, want map[T][]string, wire func(error) T) {
	t.Helper()
	decided := map[string]T{}
	for w, names := range want {
		for _, n := range names {
			decided[n] = w
		}
	}
	for _, s := range Core() {
		w, ok := decided[s.Name]
		if !ok {
			t.Errorf("%s: no wire code decided; handle it in the edge's error map and list it in this test", s.Name)
			continue
		}
		delete(decided, s.Name)
		if got := wire(fmt.Errorf("doing something: %w", s.Err)); got != w {
			t.Errorf("%s maps to %v, want %v", s.Name, got, w)
		}
	}
	for name := range decided {
		t.Errorf("%s is not a core sentinel (sentineltest.Core)", name)
	}
}
