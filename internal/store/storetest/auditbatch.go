package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/auditlog"
	"github.com/agentd/agentd/internal/store"
)

// Batched audit inserts: every backend writes a batch from the
// asynchronous audit writer (auditlog.BatchAppender) in one transaction.
var auditBatchTests = map[string]func(t *testing.T, s suite){
	// A batch is stored whole and in order: records keep their fields,
	// IDs grow with the batch's order, a zero Time becomes now.
	"RoundTrip": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		b := batcher(t, st)
		var recs []store.AuditRecord
		for i := range 300 {
			r := store.AuditRecord{
				Agent: fmt.Sprint("a", i%3), SessionID: fmt.Sprint("s", i), Tool: "fs.read", ArgsDigest: fmt.Sprintf("%064x", i),
				Decision: "allow", Outcome: "ok", Detail: fmt.Sprint("detail\x00", i), Untrusted: i%2 == 0,
				Duration: time.Duration(i) * time.Microsecond, Principal: "p",
			}
			if i%10 != 0 {
				r.Time = at(i)
			}
			recs = append(recs, r)
		}
		before := time.Now()
		ok(t, b.AppendAuditBatch(ctx, recs), "AppendAuditBatch")
		after := time.Now()
		got, err := st.QueryAudit(ctx, store.AuditFilter{})
		ok(t, err, "QueryAudit")
		if len(got) != len(recs) {
			t.Fatalf("QueryAudit returned %d records, want %d", len(got), len(recs))
		}
		bySession := map[string]store.AuditRecord{}
		for _, r := range got {
			bySession[r.SessionID] = r
		}
		var lastID int64
		for i, want := range recs {
			r, found := bySession[want.SessionID]
			if !found {
				t.Fatalf("record %d (%s) not stored", i, want.SessionID)
			}
			if r.ID <= lastID {
				t.Fatalf("record %d has ID %d after %d: batch order lost", i, r.ID, lastID)
			}
			lastID = r.ID
			if want.Time.IsZero() {
				checkRecent(t, fmt.Sprint("record ", i, " default Time"), r.Time, before, after)
			} else {
				checkTime(t, fmt.Sprint("record ", i, " Time"), r.Time, want.Time)
			}
			want.ID, want.Time = r.ID, r.Time
			if r != want {
				t.Fatalf("record %d = %+v, want %+v", i, r, want)
			}
		}
	},
	"Empty": func(t *testing.T, s suite) {
		st := s.store(t)
		ok(t, batcher(t, st).AppendAuditBatch(t.Context(), nil), "AppendAuditBatch(nil)")
		got, err := st.QueryAudit(t.Context(), store.AuditFilter{})
		ok(t, err, "QueryAudit")
		if len(got) != 0 {
			t.Errorf("an empty batch stored %d records", len(got))
		}
	},
	"Canceled": func(t *testing.T, s suite) {
		st := s.store(t)
		err := batcher(t, st).AppendAuditBatch(canceled(t), []store.AuditRecord{{Tool: "a"}, {Tool: "b"}})
		isErr(t, err, context.Canceled, "AppendAuditBatch with a canceled context")
		got, err := st.QueryAudit(t.Context(), store.AuditFilter{})
		ok(t, err, "QueryAudit")
		if len(got) != 0 {
			t.Errorf("a canceled batch stored %d records", len(got))
		}
	},
	// Through the asynchronous writer, as the daemon uses it: concurrent
	// callers' records are written in batches, a query through the writer
	// reads its own writes, and Close leaves every record in the store.
	"ThroughWriter": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		w := auditlog.New(st, &auditlog.Options{MaxBatch: 64, Queue: 128})
		const callers, each = 16, 50
		var wg sync.WaitGroup
		for c := range callers {
			wg.Go(func() {
				for i := range each {
					if _, err := w.AppendAudit(ctx, store.AuditRecord{Agent: fmt.Sprint("a", c), Tool: fmt.Sprint("t", i), Decision: "allow", Outcome: "ok"}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		got, err := w.QueryAudit(ctx, store.AuditFilter{})
		ok(t, err, "QueryAudit through the writer")
		if len(got) != callers*each {
			t.Errorf("a query right after the appends sees %d records, want %d", len(got), callers*each)
		}
		one, err := w.QueryAudit(ctx, store.AuditFilter{Agent: "a7", Tool: "t42"})
		ok(t, err, "QueryAudit a7/t42")
		if len(one) != 1 || one[0].Decision != "allow" || one[0].ID <= 0 {
			t.Errorf("a7/t42 = %+v", one)
		}
		for i := range 100 {
			if _, err := w.AppendAudit(ctx, store.AuditRecord{Agent: "late", Tool: fmt.Sprint("t", i)}); err != nil {
				t.Error(err)
			}
		}
		ok(t, w.Close(), "Close")
		late, err := st.QueryAudit(ctx, store.AuditFilter{Agent: "late"})
		ok(t, err, "QueryAudit after Close")
		if len(late) != 100 {
			t.Errorf("after Close the store holds %d of the 100 records queued before it", len(late))
		}
	},
}

// batcher is st as an auditlog.BatchAppender; every backend must be one.
func batcher(t *testing.T, st store.Store) auditlog.BatchAppender {
	t.Helper()
	b, isB := st.(auditlog.BatchAppender)
	if !isB {
		t.Fatalf("%T does not implement auditlog.BatchAppender", st)
	}
	return b
}
