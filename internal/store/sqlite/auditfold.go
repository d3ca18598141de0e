package sqlite

import (
	"context"
	"database/sql"
)

// Audit records in two steps.
//
// The audit writer (internal/auditlog) commits a tool call's record before
// the call is answered, so a gateway call pays a commit, and at c=16 a
// commit carried about three records. A commit into audit wrote seven WAL
// pages (the table's leaf, one leaf per index, the AUTOINCREMENT counter),
// each a pwrite of a frame header and one of the page, nearly all of the
// commit's cost. So AppendAuditBatch commits into audit_pending, a table
// with no index, where a commit writes one or two pages; the records are
// moved (folded) into audit in bulk, in one transaction that writes
// audit's pages once for many records:
//
//   - by the committer when it is idle and foldRows records are pending, or
//     after a batch once maxPending are (a committer that is never idle);
//   - before a batch of foldRows records or more, which goes to audit;
//   - before every read of the log (QueryAudit, CountAudit), so readers see
//     every record whose append has returned, with its final id;
//   - before AppendAudit's own insert, so ids keep the order of appends;
//   - at Open (records a crash left pending) and at Close.
//
// Durability is unchanged: a record is in the WAL (write(2),
// synchronous=NORMAL) before its append returns, in one table or the
// other; the fold moves it in one transaction, so it is never in both or
// neither.
//
// Batches of foldRows or more go to audit directly (AppendAuditBatch):
// they write audit's pages for many records anyway.
//
// Measured (BenchmarkAuditBatch, medians of 3 interleaved runs on 2 shared
// cores, wall time per record, folds included): batch=1 193 -> 75 µs,
// batch=8 42 -> 25 µs, batch=64 15 -> 15 µs.

// foldRows is how many pending records make an idle committer fold;
// maxPending how many make it fold even though writes are queued.
const (
	foldRows   = 64
	maxPending = 4096
)

// auditFoldSQL moves the pending records into audit in their order, then
// empties audit_pending.
const (
	auditFoldInsertSQL = "INSERT INTO audit (" + auditColumns + ") SELECT " + auditColumns + " FROM audit_pending ORDER BY id"
	auditFoldDeleteSQL = "DELETE FROM audit_pending"
)

// foldTx moves the pending audit records into audit within tx and returns
// how many it moved. The caller subtracts them from db.auditPending once
// tx is committed.
func (db *DB) foldTx(ctx context.Context, tx *sql.Tx) (int64, error) {
	res, err := tx.StmtContext(ctx, db.stmts.foldAudit).ExecContext(ctx)
	if err != nil {
		return 0, err
	}
	moved, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if _, err := tx.StmtContext(ctx, db.stmts.clearPending).ExecContext(ctx); err != nil {
		return 0, err
	}
	return moved, nil
}

// foldAudit folds through the committer, if any record is pending: what a
// reader calls first.
func (db *DB) foldAudit(ctx context.Context) error {
	if db.auditPending.Load() <= 0 {
		return nil
	}
	var moved int64
	err := db.write(ctx, 0, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		moved, err = db.foldTx(ctx, tx)
		return err
	})
	if err != nil {
		return wrap("move pending audit records", err)
	}
	db.auditPending.Add(-moved)
	return nil
}

// foldNow folds in a transaction of its own on the writer connection, if
// at least rows records are pending. The committer's alone, between
// transactions (or Open and Close, when no committer runs). A failure is
// logged: the records stay pending, readers fold them or report it.
func (db *DB) foldNow(rows int64) {
	if db.auditPending.Load() < rows {
		return
	}
	ctx := context.Background()
	tx, err := db.w.BeginTx(ctx, nil)
	if err == nil {
		var moved int64
		if moved, err = db.foldTx(ctx, tx); err == nil {
			if err = tx.Commit(); err == nil {
				db.auditPending.Add(-moved)
				return
			}
		} else {
			_ = tx.Rollback() // the fold's error says more
		}
	}
	db.log.Warn("moving pending audit records failed; they stay pending", "err", err)
}

// countPending sets db.auditPending from the table, at Open.
func (db *DB) countPending(ctx context.Context) error {
	var n int64
	if err := db.w.QueryRowContext(ctx, "SELECT count(*) FROM audit_pending").Scan(&n); err != nil {
		return wrap("count pending audit records", err)
	}
	db.auditPending.Store(n)
	return nil
}
