// Package storetest is the contract test suite every store.Store backend
// must pass. It only uses the store package's API, so a backend that passes
// it behaves, as far as agentd can observe, like every other one.
//
// Beyond what store.go states, the suite pins down these behaviours, which
// callers rely on:
//
//   - Timestamps come back in UTC with at least millisecond precision; a
//     zero CreatedAt, UpdatedAt or Time is set by the store to the current
//     time, a non-zero one is kept.
//   - Put* on an existing record keeps its CreatedAt; UpdateTask keeps the
//     task's CreatedAt; AppendMessages moves the session's UpdatedAt up to
//     the current time.
//   - CreateSession with messages stores them as AppendMessages would
//     (Seqs from 1, UpdatedAt moved up to now), all or nothing.
//   - Delete* of an absent record, and Messages or AppendMessages on an
//     absent session, return store.ErrNotFound; AppendMessages with no
//     messages is a no-op.
//   - ListAgents and ListMCPServers return every record (in no particular
//     order as far as the suite is concerned).
//   - Push configs are keyed by (task, id); a config needs no stored task,
//     and PruneTasks deletes the configs of the tasks it deletes (and
//     counts only tasks).
//   - TaskFilter.UpdatedAfter is exclusive, AuditFilter.Since inclusive;
//     audit records with equal Time come back most recently appended first.
//   - AppendAuditBatch (auditlog.BatchAppender, which every backend
//     implements) stores a batch whole, in order, in one transaction.
//   - AppendMessagesCreateTask (store.SessionTaskWriter, which every
//     backend implements) does both writes or neither.
//   - RecallMemory's query is literal text (no wildcards) and its case
//     folding covers non-ASCII letters.
//   - AuditFilter.ToolMatch is what store.MatchTool says, in every
//     backend.
//   - A revoked API key stays listed and resolves to nothing; revoking it
//     again is store.ErrNotFound.
//   - Every method fails with an error wrapping context.Canceled, and
//     changes nothing, when its context is already canceled.
//   - JSON payloads round-trip semantically (a backend may reformat them),
//     strings holding \u0000 included.
//   - Free text (session titles, memory keys and values, audit details)
//     round-trips byte for byte, NUL bytes and invalid UTF-8 included: it
//     comes from users, models and tools, cut at byte lengths.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// Run runs the contract suite. open must return a new, empty store each
// time it is called; Run closes it when the subtest that opened it ends.
// Subtests run in parallel, so open must be safe to call concurrently.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	s := suite{open: open}
	groups := []struct {
		name  string
		tests map[string]func(t *testing.T, s suite)
	}{
		{"Agents", agentTests},
		{"Sessions", sessionTests},
		{"Tasks", taskTests},
		{"PushConfigs", pushTests},
		{"Memory", memoryTests},
		{"Audit", auditTests},
		{"AuditBatch", auditBatchTests},
		{"SessionTask", sessionTaskTests},
		{"MCPServers", mcpTests},
		{"APIKeys", keyTests},
		{"Time", timeTests},
		{"Context", contextTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			names := make([]string, 0, len(g.tests))
			for name := range g.tests {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					g.tests[name](t, s)
				})
			}
		})
	}
}

// suite carries the opener so that individual tests can open as many fresh
// stores as their table needs.
type suite struct {
	open func(t *testing.T) store.Store
}

// store opens a fresh store that is closed when t ends.
func (s suite) store(t *testing.T) store.Store {
	t.Helper()
	st := s.open(t)
	if st == nil {
		t.Fatal("open returned a nil store")
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return st
}

// base is a fixed instant with sub-millisecond digits in a zone that is not
// UTC, so that tests notice both lost precision and lost zone conversion.
var base = time.Date(2025, time.March, 4, 5, 6, 7, 123_456_789, time.FixedZone("UTC+5:30", 5*3600+1800))

// at returns base plus n minutes.
func at(n int) time.Time { return base.Add(time.Duration(n) * time.Minute) }

// ok fails the test if err is not nil.
func ok(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", fmt.Sprintf(what, args...), err)
	}
}

// isErr fails the test unless errors.Is(err, want).
func isErr(t *testing.T, err, want error, what string, args ...any) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", fmt.Sprintf(what, args...), err, want)
	}
}

// raw builds a JSON payload from a Go value.
func raw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	return b
}

// jsonEqual reports whether a and b encode the same JSON value; backends
// may store JSON in a normalised form (PostgreSQL's jsonb does).
func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// checkJSON fails the test unless got and want are the same JSON value.
func checkJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if !jsonEqual(got, want) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// checkTime fails the test unless got is in UTC and denotes want to within
// a millisecond.
func checkTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if got.Location() != time.UTC {
		t.Errorf("%s location = %v, want UTC", what, got.Location())
	}
	if d := got.Sub(want); d <= -time.Millisecond || d >= time.Millisecond {
		t.Errorf("%s = %v, want %v (off by %v)", what, got, want.UTC(), d)
	}
}

// clockSlack absorbs the difference between the test's clock and a
// backend's (a database server may keep its own).
const clockSlack = time.Second

// checkRecent fails the test unless got is in UTC and lies between before
// and after, give or take clockSlack.
func checkRecent(t *testing.T, what string, got, before, after time.Time) {
	t.Helper()
	if got.Location() != time.UTC {
		t.Errorf("%s location = %v, want UTC", what, got.Location())
	}
	if got.Before(before.Add(-clockSlack)) || got.After(after.Add(clockSlack)) {
		t.Errorf("%s = %v, want between %v and %v", what, got, before.UTC(), after.UTC())
	}
}

// equalStrings fails the test unless got and want are equal.
func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// keys maps records to their identifying strings, for comparisons.
func keys[T any](xs []T, key func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = key(x)
	}
	return out
}

// canceled returns a context that is already canceled.
func canceled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

// jsonUnmarshal decodes a stored payload.
func jsonUnmarshal(b json.RawMessage, v any) error { return json.Unmarshal(b, v) }
