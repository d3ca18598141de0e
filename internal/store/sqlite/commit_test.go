package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/agentd/agentd/internal/store"
)

// These tests steer batches with testing/synctest: a write whose function
// blocks holds the committer, writers started meanwhile queue up (durably
// blocked on the channel to the committer), and synctest.Wait tells when
// they all have. Once the first write is released, the committer takes
// everything queued as one batch.

// openBubble opens a database inside the current synctest bubble; the
// caller closes it before the bubble ends.
func openBubble(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "agentd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// blocker is a write that holds the committer until released.
type blocker struct {
	started, release chan struct{}
	err              chan error
}

// hold starts a write that holds the committer (inside the transaction of
// its own batch) and returns once it is running.
func hold(db *DB, ctx context.Context, bytes int) *blocker {
	b := &blocker{started: make(chan struct{}), release: make(chan struct{}), err: make(chan error, 1)}
	go func() {
		b.err <- db.write(ctx, bytes, func(context.Context, *sql.Tx) error {
			close(b.started)
			<-b.release
			return nil
		})
	}()
	<-b.started
	return b
}

// insertAgent returns a write that inserts the agent name and then fails
// with fail, if not nil; ran records that it ran.
func insertAgent(name string, fail error, ran *atomic.Bool) writeFunc {
	return func(ctx context.Context, tx *sql.Tx) error {
		if ran != nil {
			ran.Store(true)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO agents (name, manifest, created_at, updated_at) VALUES (?, '{}', 0, 0)", name); err != nil {
			return err
		}
		return fail
	}
}

// agentNames returns the committed agents, as a reader sees them.
func agentNames(t *testing.T, db *DB) map[string]bool {
	t.Helper()
	as, err := db.ListAgents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, a := range as {
		out[a.Name] = true
	}
	return out
}

// queue starts a write in the background, waits until it is queued
// behind the committer, and returns the channel its result arrives on.
func queue(ctx context.Context, db *DB, fn writeFunc) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- db.write(ctx, 0, fn) }()
	synctest.Wait()
	return errc
}

// TestGroupCommitIsolatesFailures runs one batch in which two writers fail
// (one with its own error after writing, one on a constraint) between
// writers that succeed: each gets its own outcome, and only the failures'
// changes are undone.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := openBubble(t)
		defer db.Close()
		ctx := context.Background()
		if err := db.PutAgent(ctx, store.Agent{Name: "taken"}); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		var sawFirstUncommitted atomic.Bool

		b := hold(db, ctx, 0)
		first := queue(ctx, db, insertAgent("first", nil, nil))
		failing := queue(ctx, db, insertAgent("failing", boom, nil))
		dup := queue(ctx, db, insertAgent("taken", nil, nil))
		last := queue(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
			// Same transaction as "first": this transaction sees it, a
			// reader cannot yet.
			const q = "SELECT COUNT(*) FROM agents WHERE name = 'first'"
			var inTx, committed int
			if err := tx.QueryRowContext(ctx, q).Scan(&inTx); err != nil {
				return err
			}
			if err := db.r.QueryRowContext(ctx, q).Scan(&committed); err != nil {
				return err
			}
			sawFirstUncommitted.Store(inTx == 1 && committed == 0)
			return insertAgent("last", nil, nil)(ctx, tx)
		})
		close(b.release)
		if err := <-b.err; err != nil {
			t.Fatalf("blocking write: %v", err)
		}

		for _, c := range []struct {
			name string
			errc <-chan error
			want error // nil: success
		}{
			{"first", first, nil},
			{"failing", failing, boom},
			{"duplicate", dup, nil},
			{"last", last, nil},
		} {
			err := <-c.errc
			switch {
			case c.name == "duplicate":
				if err == nil || errors.Is(err, boom) {
					t.Errorf("%s: got %v, want its own constraint error", c.name, err)
				}
			case c.want == nil && err != nil, c.want != nil && !errors.Is(err, c.want):
				t.Errorf("%s: got %v, want %v", c.name, err, c.want)
			}
		}
		if !sawFirstUncommitted.Load() {
			t.Error("the queued writes did not run in one transaction")
		}
		got := agentNames(t, db)
		want := map[string]bool{"taken": true, "first": true, "last": true}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("committed agents = %v, want %v", got, want)
		}
	})
}

// TestGroupCommitCancellation checks that a writer whose context ends
// before its turn returns at once with the context's error and is skipped,
// whether it was still queued or already taken into a batch; and that a
// writer whose work has started is not interrupted.
func TestGroupCommitCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := openBubble(t)
		defer db.Close()
		ctx := context.Background()

		// Cancelled while queued behind the committer.
		b := hold(db, ctx, 0)
		qctx, qcancel := context.WithCancel(ctx)
		var queuedRan atomic.Bool
		queued := queue(qctx, db, insertAgent("queued", nil, &queuedRan))
		qcancel()
		if err := <-queued; !errors.Is(err, context.Canceled) {
			t.Errorf("queued writer cancelled: got %v, want context.Canceled", err)
		}

		// Cancelled after the committer took it into a batch, while an
		// earlier write of the same batch runs; and cancelled after its
		// own work started.
		inBatchCtx, inBatchCancel := context.WithCancel(ctx)
		startedCtx, startedCancel := context.WithCancel(ctx)
		running, release := make(chan struct{}), make(chan struct{})
		started := queue(startedCtx, db, func(ctx context.Context, tx *sql.Tx) error {
			close(running)
			<-release
			return insertAgent("started", nil, nil)(ctx, tx)
		})
		var inBatchRan atomic.Bool
		inBatch := queue(inBatchCtx, db, insertAgent("in-batch", nil, &inBatchRan))
		after := queue(ctx, db, insertAgent("after", nil, nil))
		close(b.release) // the committer takes started, in-batch, after
		<-running
		inBatchCancel()
		if err := <-inBatch; !errors.Is(err, context.Canceled) {
			t.Errorf("writer cancelled in a batch: got %v, want context.Canceled", err)
		}
		startedCancel()
		synctest.Wait()
		select {
		case err := <-started:
			t.Fatalf("writer cancelled while its work runs returned early: %v", err)
		default:
		}
		close(release)
		if err := <-started; err != nil {
			t.Errorf("writer cancelled while its work ran: %v, want its commit's nil", err)
		}
		if err := <-after; err != nil {
			t.Errorf("writer after the cancelled ones: %v", err)
		}
		if err := <-b.err; err != nil {
			t.Errorf("blocking write: %v", err)
		}
		if queuedRan.Load() || inBatchRan.Load() {
			t.Errorf("cancelled writers ran: queued %v, in batch %v", queuedRan.Load(), inBatchRan.Load())
		}
		got := agentNames(t, db)
		want := map[string]bool{"started": true, "after": true}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("committed agents = %v, want %v", got, want)
		}
	})
}

// TestCommitSkipsCancelled hands the committer a batch directly, as the
// committer loop would, with a writer whose context ended before its turn
// while its caller's goroutine has not run since: the request is abandoned
// by the end of its context alone, so that writer is skipped and gets no
// answer (its caller returns its context's error), the others commit.
func TestCommitSkipsCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := openBubble(t)
		defer db.Close()
		dead, cancel := context.WithCancel(t.Context())
		var ran [3]atomic.Bool
		var batch []*writeReq
		for i, c := range []context.Context{t.Context(), dead, t.Context()} {
			req, stop := newWriteReq(c, 0, insertAgent(string(rune('a'+i)), nil, &ran[i]))
			defer stop()
			batch = append(batch, req)
		}
		cancel()
		synctest.Wait()
		db.commit(batch)
		for i, want := range []error{nil, nil, nil} {
			if i == 1 {
				select {
				case err := <-batch[i].done:
					t.Errorf("the cancelled writer was answered (%v); its caller returns on its own", err)
				default:
				}
				if !batch[i].abandon() {
					t.Error("the cancelled writer's request is not abandoned")
				}
				continue
			}
			if err := <-batch[i].done; !errors.Is(err, want) {
				t.Errorf("writer %d: got %v, want %v", i, err, want)
			}
		}
		if ran[1].Load() {
			t.Error("the cancelled writer's work ran")
		}
		got := agentNames(t, db)
		if want := map[string]bool{"a": true, "c": true}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("committed agents = %v, want %v", got, want)
		}
	})
}

// TestGroupCommitClose checks that Close lets the batch in progress commit
// and fails the writers still queued.
func TestGroupCommitClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := openBubble(t)
		ctx := context.Background()
		b := hold(db, ctx, 0)
		queued := queue(ctx, db, insertAgent("queued", nil, nil))
		closed := make(chan error, 1)
		go func() { closed <- db.Close() }()
		synctest.Wait()
		if err := <-queued; !errors.Is(err, errClosed) {
			t.Errorf("writer queued at Close: got %v, want errClosed", err)
		}
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while a write was in progress", err)
		default:
		}
		close(b.release)
		if err := <-b.err; err != nil {
			t.Errorf("write in progress at Close: %v", err)
		}
		if err := <-closed; err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := db.PutAgent(ctx, store.Agent{Name: "late"}); !errors.Is(err, errClosed) {
			t.Errorf("write after Close: got %v, want errClosed", err)
		}
	})
}

// TestGatherBounds checks that a batch takes what is queued up to its
// bounds, and never waits for more.
func TestGatherBounds(t *testing.T) {
	for _, c := range []struct {
		name          string
		queued, bytes int
		want          int
	}{
		{"Alone", 0, 0, 1},
		{"AllQueued", 9, 10, 10},
		{"MaxWrites", maxBatchWrites + 5, 10, maxBatchWrites},
		{"MaxBytes", 5, maxBatchBytes / 2, 2},
		{"OneHuge", 3, maxBatchBytes * 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				db := &DB{writes: make(chan *writeReq)}
				var wg sync.WaitGroup
				for range c.queued {
					wg.Go(func() { db.writes <- &writeReq{bytes: c.bytes} })
				}
				synctest.Wait()
				batch := db.gather([]*writeReq{{bytes: c.bytes}})
				if len(batch) != c.want {
					t.Errorf("batch of %d, want %d", len(batch), c.want)
				}
				for range c.queued + 1 - len(batch) {
					<-db.writes // let the rest go
				}
				wg.Wait()
			})
		})
	}
}
