package auditlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/sqlite"
)

func openSQLite(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agentd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestReadsOwnWrites: 64 concurrent callers append 20 records each to a
// real SQLite file; a query right after sees every one of them, and the
// records keep their own times and fields.
func TestReadsOwnWrites(t *testing.T) {
	db := openSQLite(t)
	w := New(db, nil)
	defer w.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for i := range 20 {
				if _, err := w.AppendAudit(ctx, store.AuditRecord{
					Time: time.Unix(1700000000, 0).UTC(), Agent: fmt.Sprint("a", g), Tool: fmt.Sprint("t", i), Decision: "allow", Outcome: "ok",
				}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	recs, err := w.QueryAudit(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 64*20 {
		t.Fatalf("query after appends sees %d records, want %d", len(recs), 64*20)
	}
	a5, err := w.QueryAudit(ctx, store.AuditFilter{Agent: "a5", Tool: "t7"})
	if err != nil || len(a5) != 1 || !a5[0].Time.Equal(time.Unix(1700000000, 0)) || a5[0].Decision != "allow" {
		t.Fatalf("a5/t7: %+v, %v", a5, err)
	}
}

// TestCloseDrains: what is queued when the daemon shuts down is written.
func TestCloseDrains(t *testing.T) {
	db := openSQLite(t)
	w := New(db, nil)
	ctx := context.Background()
	for i := range 500 {
		w.AppendAudit(ctx, store.AuditRecord{Tool: fmt.Sprint("t", i)})
	}
	w.Close()
	recs, err := db.QueryAudit(ctx, store.AuditFilter{})
	if err != nil || len(recs) != 500 {
		t.Fatalf("after Close the store holds %d records (%v), want 500", len(recs), err)
	}
	// After Close an append is written at once, not lost.
	if _, err := w.AppendAudit(ctx, store.AuditRecord{Tool: "late"}); err != nil {
		t.Fatal(err)
	}
	if recs, _ := db.QueryAudit(ctx, store.AuditFilter{Tool: "late"}); len(recs) != 1 {
		t.Fatalf("append after Close: %d records", len(recs))
	}
}

// gate is an audit store whose batch writes wait until released.
type gate struct {
	mu      sync.Mutex
	release chan struct{}
	batches [][]store.AuditRecord
}

func (g *gate) AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error) {
	return 0, g.AppendAuditBatch(ctx, []store.AuditRecord{r})
}

func (g *gate) AppendAuditBatch(_ context.Context, recs []store.AuditRecord) error {
	<-g.release
	g.mu.Lock()
	g.batches = append(g.batches, recs)
	g.mu.Unlock()
	return nil
}

func (g *gate) CountAudit(ctx context.Context, f store.AuditFilter) (int, error) {
	rs, err := g.QueryAudit(ctx, f)
	return len(rs), err
}

func (g *gate) QueryAudit(context.Context, store.AuditFilter) ([]store.AuditRecord, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []store.AuditRecord
	for _, b := range g.batches {
		out = append(out, b...)
	}
	return out, nil
}

// TestFullQueueWaitsAndBatches: while the store is slow, callers fill the
// queue and then wait (nothing is dropped); when the store catches up,
// what accumulated is written in few batches, not one write per record.
func TestFullQueueWaitsAndBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		w := New(g, &Options{Queue: 4, MaxBatch: 100})
		ctx := context.Background()
		// The first record is taken by the writer, which blocks in the
		// store once its linger time is over; four more fill the queue.
		for i := range 5 {
			w.AppendAudit(ctx, store.AuditRecord{Tool: fmt.Sprint("t", i)})
			synctest.Wait()
			if i == 0 {
				time.Sleep(defaultLinger)
				synctest.Wait()
			}
		}
		appended := make(chan struct{})
		go func() {
			w.AppendAudit(ctx, store.AuditRecord{Tool: "t5"})
			close(appended)
		}()
		synctest.Wait()
		select {
		case <-appended:
			t.Fatal("an append returned while the queue was full: the record was dropped or the queue is unbounded")
		default:
		}
		close(g.release)
		<-appended
		recs, err := w.QueryAudit(ctx, store.AuditFilter{})
		if err != nil || len(recs) != 6 {
			t.Fatalf("%d records after the store caught up (%v), want 6", len(recs), err)
		}
		if len(g.batches) > 3 {
			t.Fatalf("6 records took %d writes; want them batched", len(g.batches))
		}
		w.Close()
	})
}

// TestLingerCoalesces: records that arrive one at a time, within the
// linger time of the batch's first, share one write; a record alone is
// written once the linger time is over, without anyone flushing; and a
// read does not wait for the linger time.
func TestLingerCoalesces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		close(g.release)
		w := New(g, &Options{Linger: 10 * time.Millisecond})
		defer w.Close()
		ctx := context.Background()
		for i := range 4 {
			w.AppendAudit(ctx, store.AuditRecord{Tool: fmt.Sprint("t", i)})
			time.Sleep(2 * time.Millisecond) // one call's worth at c=1
		}
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		g.mu.Lock()
		got := len(g.batches)
		g.mu.Unlock()
		if got != 1 {
			t.Fatalf("4 records within the linger time took %d writes, want 1", got)
		}
		start := time.Now()
		w.AppendAudit(ctx, store.AuditRecord{Tool: "read-after"})
		recs, err := w.QueryAudit(ctx, store.AuditFilter{})
		if err != nil || len(recs) != 5 {
			t.Fatalf("query sees %d records (%v), want 5", len(recs), err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("a read waited %v for the linger time", d)
		}
	})
}

// TestCloseEndsLinger: Close does not wait out the linger time of the
// batch in progress; its records are written.
func TestCloseEndsLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		close(g.release)
		w := New(g, &Options{Linger: time.Hour})
		for i := range 3 {
			w.AppendAudit(context.Background(), store.AuditRecord{Tool: fmt.Sprint("t", i)})
		}
		synctest.Wait()
		start := time.Now()
		w.Close()
		if d := time.Since(start); d != 0 {
			t.Fatalf("Close waited %v for the linger time", d)
		}
		if recs, _ := g.QueryAudit(context.Background(), store.AuditFilter{}); len(recs) != 3 {
			t.Fatalf("%d records written by Close, want 3", len(recs))
		}
	})
}

// BenchmarkAppend compares a synchronous SQLite audit insert with the
// queued writer, 16 callers at once as under gateway load.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []string{"sync", "queued"} {
		b.Run(mode, func(b *testing.B) {
			db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "agentd.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			var st store.AuditStore = db
			if mode == "queued" {
				w := New(db, nil)
				defer w.Close()
				st = w
			}
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					st.AppendAudit(context.Background(), store.AuditRecord{Tool: "echo", Decision: "allow", Outcome: "ok"})
				}
			})
		})
	}
}

// TestDurableWaitsForCommit: with Durable, an append returns only once
// its batch is committed (a tool call's answer waits for its record),
// and the records that arrive while a commit is under way are committed
// together in the next one (group commit), each caller released by it.
func TestDurableWaitsForCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		w := New(g, &Options{Durable: true})
		ctx := context.Background()
		first := make(chan error, 1)
		go func() { _, err := w.AppendAudit(ctx, store.AuditRecord{Tool: "first"}); first <- err }()
		synctest.Wait()
		select {
		case <-first:
			t.Fatal("an append returned before its record was committed")
		default:
		}
		// 15 more arrive while the first commit is held up.
		rest := make(chan error, 15)
		for i := range 15 {
			go func() { _, err := w.AppendAudit(ctx, store.AuditRecord{Tool: fmt.Sprint("t", i)}); rest <- err }()
		}
		synctest.Wait()
		if len(rest) != 0 {
			t.Fatal("an append returned before its record was committed")
		}
		close(g.release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		for range 15 {
			if err := <-rest; err != nil {
				t.Fatal(err)
			}
		}
		g.mu.Lock()
		batches, n := len(g.batches), 0
		for _, b := range g.batches {
			n += len(b)
		}
		g.mu.Unlock()
		if n != 16 {
			t.Fatalf("%d records committed when all 16 appends returned", n)
		}
		if batches != 2 {
			t.Fatalf("16 records in %d commits, want 2 (the first, then the 15 that waited for it together)", batches)
		}
		w.Close()
	})
}

// failing is an audit store whose writes fail.
type failing struct{ gate }

func (f *failing) AppendAuditBatch(context.Context, []store.AuditRecord) error {
	return errors.New("disk full")
}

// TestDurableReportsFailure: a durable append whose batch failed says so
// (the runner logs it); it is not reported as written.
func TestDurableReportsFailure(t *testing.T) {
	w := New(&failing{}, &Options{Durable: true})
	defer w.Close()
	if _, err := w.AppendAudit(context.Background(), store.AuditRecord{Tool: "x"}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("append over a failing store: %v", err)
	}
}

// TestDurableNoLinger: a durable append at c=1 pays one commit, never a
// linger time (every call would wait it out).
func TestDurableNoLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		close(g.release)
		w := New(g, &Options{Durable: true, Linger: time.Hour})
		defer w.Close()
		start := time.Now()
		for i := range 3 {
			w.AppendAudit(context.Background(), store.AuditRecord{Tool: fmt.Sprint("t", i)})
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("3 durable appends took %v (linger 1h)", d)
		}
		if recs, _ := g.QueryAudit(context.Background(), store.AuditFilter{}); len(recs) != 3 {
			t.Fatalf("%d records committed, want 3", len(recs))
		}
	})
}

// TestDurableWaitsForSiblings: a durable record whose commit could take
// the records of calls under way (Ahead) waits up to siblingWait for
// them, and they share its commit; alone (nothing ahead), a record is
// committed at once; after a wait in which nothing came (the calls under
// way are slow), the next siblingSkip commits do not wait.
func TestDurableWaitsForSiblings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		close(g.release)
		w := New(g, &Options{Durable: true})
		defer w.Close()
		ctx := context.Background()
		batches := func() []int {
			g.mu.Lock()
			defer g.mu.Unlock()
			var n []int
			for _, b := range g.batches {
				n = append(n, len(b))
			}
			g.batches = nil
			return n
		}
		// Three calls under way; the first's record arrives, the others
		// 100 and 200 µs later: one commit for the three, when the last
		// arrives. (Two arriving at the same instant may be split: the
		// writer stops waiting once nothing is ahead, which the second
		// says just before its record is queued.)
		w.Ahead(3)
		start := time.Now()
		done := make(chan time.Duration, 3)
		for i := range 3 {
			go func() {
				time.Sleep(time.Duration(i) * 100 * time.Microsecond)
				w.Ahead(-1)
				w.AppendAudit(ctx, store.AuditRecord{Tool: fmt.Sprint("t", i)})
				done <- time.Since(start)
			}()
		}
		for range 3 {
			if d := <-done; d != 200*time.Microsecond {
				t.Errorf("an append returned after %v, want 200µs (when the last sibling joined)", d)
			}
		}
		if b := batches(); !slices.Equal(b, []int{3}) {
			t.Fatalf("batches %v, want one of 3", b)
		}

		// Alone: no wait.
		start = time.Now()
		w.AppendAudit(ctx, store.AuditRecord{Tool: "alone"})
		if d := time.Since(start); d != 0 {
			t.Fatalf("an append with nothing ahead took %v", d)
		}

		// A slow call under way: the first record waits siblingWait in
		// vain, the next siblingSkip do not wait, then waiting resumes.
		w.Ahead(1)
		for i := range siblingSkip + 2 {
			start = time.Now()
			w.AppendAudit(ctx, store.AuditRecord{Tool: "short"})
			want := time.Duration(0)
			if i == 0 || i == siblingSkip+1 {
				want = siblingWait
			}
			if d := time.Since(start); d != want {
				t.Fatalf("append %d beside a slow call took %v, want %v", i, d, want)
			}
		}
		w.Ahead(-1)
		batches()
	})
}
