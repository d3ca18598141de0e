package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
)

// Group commit.
//
// Every write transaction goes through one goroutine, the committer. A
// commit costs mostly system calls (a pwrite per WAL frame header and per
// page, and the WAL lock), and concurrent writers touch the same pages
// (session rows and their indexes, the tails of the messages, tasks and
// audit tables), so the committer runs all the transactions queued at the
// moment it becomes free as one SQLite transaction: each shared page is
// written once per batch and the per-commit costs are paid once per batch
// instead of once per caller.
//
// Each caller's work runs in its own SAVEPOINT, so a caller whose work fails
// rolls back only its part and gets only its own error. Callers are answered
// after the shared COMMIT, so a write that returned without error is
// committed, exactly as with one transaction per caller. The committer never
// waits for a batch to fill: a lone writer is served as soon as it arrives.
//
// Measured on 2 shared cores (medians of 6 interleaved runs, against one
// transaction per caller on the caller's goroutine):
// BenchmarkAppendMessages/parallel (32 writers) went from 10,000 to 34,000
// messages/s; the agent package's BenchmarkTurnWithToolCallParallel from
// 1,200 to 3,350 turns/s, at less than half the CPU time per turn. A lone
// writer pays one goroutine hand-off, which did not show above the noise
// (AppendMessages/batch=1: 111 µs before, 82 µs after).

// Bounds of one batch, so that one commit does not make the callers in it
// wait for an unbounded amount of work (and the WAL grow in one go).
const (
	maxBatchWrites = 64
	maxBatchBytes  = 1 << 20
)

// errClosed is returned by writes that arrive after Close.
var errClosed = errors.New("database is closed")

// writeFunc is one caller's part of a write transaction. Its ctx is the
// committer's, never cancelled: once the committer has started a caller's
// work it lets it finish, because an interrupted statement can make SQLite
// roll back the whole shared transaction. The work is short (a few
// statements); the caller's cancellation is honoured up to the moment it
// starts, through writeReq.state.
type writeFunc func(ctx context.Context, tx *sql.Tx) error

// writeReq is a write waiting for the committer. It holds no ctx: a caller
// whose ctx ends while its write is queued marks it abandoned (state), and
// the committer skips it.
type writeReq struct {
	fn    writeFunc
	bytes int          // estimated size of what fn writes
	state atomic.Int32 // reqQueued, then reqStarted (committer) or reqAbandoned (caller's ctx ended)
	done  chan error   // buffered: the committer never blocks on a caller
	// pending is how many audit records fn adds to audit_pending: the
	// committer counts them once they are committed (auditfold.go).
	pending int64
}

// States of a writeReq; whoever moves it out of reqQueued owns its fate.
const (
	reqQueued int32 = iota
	reqStarted
	reqAbandoned
)

// newWriteReq makes the request for fn. The moment ctx ends, the request
// is marked abandoned (unless the committer has started it), even before
// its caller's goroutine runs again, so the committer, which holds no
// caller's ctx, skips it. stop releases the watch on ctx.
func newWriteReq(ctx context.Context, bytes int, fn writeFunc) (req *writeReq, stop func() bool) {
	req = &writeReq{fn: fn, bytes: bytes, done: make(chan error, 1)}
	if ctx.Done() == nil {
		return req, func() bool { return false } // never cancelled
	}
	return req, context.AfterFunc(ctx, func() { req.abandon() })
}

// abandon is the caller giving req up: true if the committer has not
// started it (and now never will).
func (req *writeReq) abandon() bool {
	return req.state.CompareAndSwap(reqQueued, reqAbandoned) || req.state.Load() == reqAbandoned
}

// claim is the committer taking req on: false if its caller abandoned it
// or it was already taken.
func (req *writeReq) claim() bool { return req.state.CompareAndSwap(reqQueued, reqStarted) }

// write runs fn in a write transaction and returns nil once it is
// committed, or fn's or the transaction's error once it is rolled back.
// bytes estimates how much fn writes (payloads; 0 for small records), to
// bound batches. A ctx that ends before fn starts makes write return its
// error with nothing written.
func (db *DB) write(ctx context.Context, bytes int, fn writeFunc) error {
	return db.writePending(ctx, bytes, 0, fn)
}

// writePending is write for an fn that adds pending records to
// audit_pending.
func (db *DB) writePending(ctx context.Context, bytes int, pending int64, fn writeFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req, stop := newWriteReq(ctx, bytes, fn)
	req.pending = pending
	defer stop()
	select {
	case db.writes <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.closing:
		return errClosed
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		if req.abandon() {
			return ctx.Err() // the committer will skip it
		}
		return <-req.done // already started: its outcome is the answer
	}
}

// commitLoop is the committer. Open starts it once the writer is open;
// Close stops it and waits for it. A request it has received is always
// answered before it looks at Close again.
func (db *DB) commitLoop() {
	var batch []*writeReq
	for {
		var req *writeReq
		select {
		case req = <-db.writes:
		case <-db.closing:
			return
		default:
			// Idle: a fold or a checkpoint now keeps no caller
			// waiting (auditfold.go, checkpoint.go).
			db.foldNow(foldRows)
			db.checkpointIfDue(checkpointPages)
			select {
			case req = <-db.writes:
			case <-db.closing:
				return
			}
		}
		batch = db.gather(append(batch[:0], req))
		db.commit(batch)
		clear(batch) // let the callers' closures be collected
		db.foldNow(maxPending)
		db.countWAL()
		db.checkpointIfDue(maxWALPages)
	}
}

// gather appends the writes queued right now to batch, up to the bounds.
// It never waits for more: a writer that is not yet queued goes into the
// next batch.
func (db *DB) gather(batch []*writeReq) []*writeReq {
	bytes := batch[0].bytes
	for len(batch) < maxBatchWrites && bytes < maxBatchBytes {
		select {
		case req := <-db.writes:
			batch = append(batch, req)
			bytes += req.bytes
		default:
			return batch
		}
	}
	return batch
}

// commit runs batch in one transaction and answers every caller still
// waiting.
func (db *DB) commit(batch []*writeReq) {
	errs := make([]error, len(batch))
	txErr := db.runBatch(batch, errs)
	for i, req := range batch {
		switch {
		case req.claim():
			errs[i] = txErr // not reached: the transaction failed before its turn
		case req.state.Load() == reqAbandoned:
			continue // its caller has returned
		case errs[i] == nil:
			errs[i] = txErr // its work succeeded: it shares the COMMIT's fate
		}
		if errs[i] == nil {
			// Counted before its caller is answered, and before
			// the committer next looks for an idle fold.
			db.auditPending.Add(req.pending)
		}
		req.done <- errs[i]
	}
}

// runBatch runs the batch's writes in one transaction, each at its turn,
// storing each one's error in errs, and returns the error that rolled back
// the whole transaction, if any.
func (db *DB) runBatch(batch []*writeReq, errs []error) error {
	// The committer's own context: Close waits for the batch in progress,
	// and no caller may cancel the others' transaction.
	ctx := context.Background()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for i, req := range batch {
		if !req.claim() {
			continue // abandoned: its caller gave up and has returned
		}
		if len(batch) == 1 {
			// Alone, the transaction is the caller's: no savepoint needed.
			if errs[i] = req.fn(ctx, tx); errs[i] != nil {
				_ = tx.Rollback() // fn's error says more than a failed rollback
				return nil
			}
			break
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT write"); err != nil {
			_ = tx.Rollback()
			return err
		}
		if errs[i] = req.fn(ctx, tx); errs[i] != nil {
			// Undoes this write only. Should SQLite have rolled back the
			// whole transaction (it may after an I/O error or a full disk),
			// the savepoint is gone and this fails: the batch is lost.
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO write"); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("shared transaction lost after another write in it failed (%v): %w", errs[i], err)
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE write"); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}
