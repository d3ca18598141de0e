package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// tableCounts reads how many rows audit_pending and audit hold, below the
// Store API.
func tableCounts(t *testing.T, raw *sql.DB) (pending, audit int) {
	t.Helper()
	if err := raw.QueryRowContext(t.Context(), "SELECT (SELECT count(*) FROM audit_pending), (SELECT count(*) FROM audit)").Scan(&pending, &audit); err != nil {
		t.Fatal(err)
	}
	return pending, audit
}

func auditRecs(tools ...string) []store.AuditRecord {
	recs := make([]store.AuditRecord, len(tools))
	for i, tool := range tools {
		recs[i] = store.AuditRecord{Agent: "a", Tool: tool, Decision: "allow", Outcome: "ok"}
	}
	return recs
}

// TestAuditFold checks the two steps of auditfold.go through the Store
// API and below it: a batch is committed to audit_pending, every read and
// AppendAudit move it into audit first, and ids follow the order of the
// appends.
func TestAuditFold(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	db := open(t, path)
	defer db.Close()
	raw := rawDB(t, path)

	if err := db.AppendAuditBatch(ctx, auditRecs("t1", "t2", "t3")); err != nil {
		t.Fatal(err)
	}
	// Fewer than foldRows: an idle committer leaves them pending.
	if p, a := tableCounts(t, raw); p != 3 || a != 0 {
		t.Fatalf("after a batch of 3: %d pending, %d in audit; want 3, 0", p, a)
	}
	id, err := db.AppendAudit(ctx, auditRecs("t4")[0])
	if err != nil {
		t.Fatal(err)
	}
	if p, a := tableCounts(t, raw); p != 0 || a != 4 {
		t.Fatalf("after AppendAudit: %d pending, %d in audit; want 0, 4", p, a)
	}
	if err := db.AppendAuditBatch(ctx, auditRecs("t5", "t6")); err != nil {
		t.Fatal(err)
	}
	if n, err := db.CountAudit(ctx, store.AuditFilter{}); err != nil || n != 6 {
		t.Fatalf("CountAudit = %d, %v; want 6", n, err)
	}
	if err := db.AppendAuditBatch(ctx, auditRecs("t7")); err != nil {
		t.Fatal(err)
	}
	recs, err := db.QueryAudit(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	var ids []int64
	for _, r := range slices.Backward(recs) {
		tools = append(tools, r.Tool)
		ids = append(ids, r.ID)
	}
	if want := []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7"}; !slices.Equal(tools, want) {
		t.Errorf("records oldest first = %v, want %v", tools, want)
	}
	if !slices.IsSorted(ids) || ids[3] != id {
		t.Errorf("ids oldest first = %v (AppendAudit returned %d for t4): want them in append order", ids, id)
	}
	if p, _ := tableCounts(t, raw); p != 0 {
		t.Errorf("%d records still pending after QueryAudit", p)
	}
}

// TestAuditFoldIdle checks that an idle committer moves foldRows pending
// records without a read asking it to.
func TestAuditFoldIdle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentd.db")
	db := open(t, path)
	defer db.Close()
	raw := rawDB(t, path)
	// Batches of 8: a batch of foldRows would go to audit directly.
	for range 8 {
		if err := db.AppendAuditBatch(t.Context(), auditRecs("t", "t", "t", "t", "t", "t", "t", "t")); err != nil {
			t.Fatal(err)
		}
	}
	// The committer folds once it has answered the batch and found no
	// write queued; the bound only keeps a broken fold from hanging.
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, a := tableCounts(t, raw)
		if p == 0 && a == 64 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pending, %d in audit 10s after the batch; want 0, 64", p, a)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAuditPendingAtOpenAndClose checks that records a crash left pending
// are in audit once the database is opened, and that Close leaves none
// pending.
func TestAuditPendingAtOpenAndClose(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	db := open(t, path)
	if err := db.AppendAuditBatch(ctx, auditRecs("closed")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	if p, a := tableCounts(t, raw); p != 0 || a != 1 {
		t.Fatalf("after Close: %d pending, %d in audit; want 0, 1", p, a)
	}
	// What a kill -9 between a commit and its fold leaves.
	if _, err := raw.ExecContext(ctx, `INSERT INTO audit_pending (time, agent, session_id, tool, args_digest, decision, outcome, detail, untrusted, duration_ns, principal)
		VALUES (1, 'a', '', 'crashed', '', 'allow', 'ok', '', 0, 0, '')`); err != nil {
		t.Fatal(err)
	}
	db = open(t, path)
	defer db.Close()
	if p, a := tableCounts(t, raw); p != 0 || a != 2 {
		t.Fatalf("after Open: %d pending, %d in audit; want 0, 2", p, a)
	}
	recs, err := db.QueryAudit(ctx, store.AuditFilter{Tool: "crashed"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("QueryAudit(crashed) = %v, %v; want the record", recs, err)
	}
}

// TestAuditLargeBatchDirect checks that a batch of foldRows records goes
// to audit directly, after the records pending before it.
func TestAuditLargeBatchDirect(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	db := open(t, path)
	defer db.Close()
	raw := rawDB(t, path)
	if err := db.AppendAuditBatch(ctx, auditRecs("first")); err != nil {
		t.Fatal(err)
	}
	tools := make([]string, 64)
	for i := range tools {
		tools[i] = "large"
	}
	if err := db.AppendAuditBatch(ctx, auditRecs(tools...)); err != nil {
		t.Fatal(err)
	}
	if p, a := tableCounts(t, raw); p != 0 || a != 65 {
		t.Fatalf("after a batch of 64: %d pending, %d in audit; want 0, 65", p, a)
	}
	var first int64
	var minLarge int64
	if err := raw.QueryRowContext(ctx, "SELECT (SELECT id FROM audit WHERE tool = 'first'), (SELECT min(id) FROM audit WHERE tool = 'large')").Scan(&first, &minLarge); err != nil {
		t.Fatal(err)
	}
	if first >= minLarge {
		t.Errorf("the pending record got id %d, the large batch's start at %d: want the pending one first", first, minLarge)
	}
}
