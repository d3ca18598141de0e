package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// AppendAudit implements store.AuditStore; a zero Time means now.
func (db *DB) AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error) {
	var id int64
	at := toDB(orNow(r.Time, now()))
	var moved int64
	err := db.write(ctx, 0, func(ctx context.Context, tx *sql.Tx) error {
		if db.auditPending.Load() > 0 {
			// Pending records were appended first: they get the
			// lower ids (auditfold.go).
			var err error
			if moved, err = db.foldTx(ctx, tx); err != nil {
				return err
			}
		}
		return tx.StmtContext(ctx, db.stmts.insertAudit).QueryRowContext(ctx,
			at, r.Agent, r.SessionID, r.Tool, r.ArgsDigest, r.Decision, r.Outcome, r.Detail,
			boolToDB(r.Untrusted), int64(r.Duration), r.Principal).Scan(&id)
	})
	if err != nil {
		return 0, wrap("append audit record", err)
	}
	db.auditPending.Add(-moved)
	return id, nil
}

// AppendAuditBatch writes recs in one transaction (auditlog.BatchAppender):
// the asynchronous audit writer hands over everything queued at once, so
// one commit carries many records. They are committed to audit_pending and
// moved into audit later (auditfold.go), unless there are foldRows of them
// or more: a batch that large writes audit's pages for many records
// already, so it goes there directly, after what is pending.
func (db *DB) AppendAuditBatch(ctx context.Context, recs []store.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	at := now()
	const cols = 11
	args := make([]any, 0, cols*min(len(recs), auditChunks[0]))
	stmts, pending := &db.stmts.insertAudits, int64(len(recs))
	direct := len(recs) >= foldRows
	if direct {
		stmts, pending = &db.stmts.insertAuditsDirect, 0
	}
	var moved int64
	err := db.writePending(ctx, 0, pending, func(ctx context.Context, tx *sql.Tx) error {
		if direct && db.auditPending.Load() > 0 {
			var err error
			if moved, err = db.foldTx(ctx, tx); err != nil {
				return err
			}
		}
		rest := recs
		for i, n := range auditChunks {
			var stmt *sql.Stmt
			for len(rest) >= n {
				if stmt == nil {
					stmt = tx.StmtContext(ctx, stmts[i])
				}
				args = args[:0]
				for _, r := range rest[:n] {
					args = append(args, toDB(orNow(r.Time, at)), r.Agent, r.SessionID, r.Tool, r.ArgsDigest, r.Decision,
						r.Outcome, r.Detail, boolToDB(r.Untrusted), int64(r.Duration), r.Principal)
				}
				if _, err := stmt.ExecContext(ctx, args...); err != nil {
					return err
				}
				rest = rest[n:]
			}
		}
		return nil
	})
	if err != nil {
		return wrap("append audit records", err)
	}
	db.auditPending.Add(-moved)
	return nil
}

// QueryAudit implements store.AuditStore. Since is inclusive, Until
// exclusive; records with
// the same Time come most recently appended first.
func (db *DB) QueryAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	const op = "query audit log"
	if err := db.foldAudit(ctx); err != nil {
		return nil, err
	}
	w, args := auditWhere(f)
	q := "SELECT id, time, agent, session_id, tool, args_digest, decision, outcome, detail, untrusted, duration_ns, principal FROM audit" +
		w + " ORDER BY time DESC, id DESC"
	q, args = limitOffset(q, args, f.Limit, f.Offset)
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanAudit)
	return out, wrap(op, err)
}

// CountAudit implements store.AuditStore.
func (db *DB) CountAudit(ctx context.Context, f store.AuditFilter) (int, error) {
	if err := db.foldAudit(ctx); err != nil {
		return 0, err
	}
	w, args := auditWhere(f)
	var n int
	err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM audit"+w, args...).Scan(&n)
	return n, wrap("count audit records", err)
}

// auditWhere is f's WHERE clause ("" for none) and its arguments.
func auditWhere(f store.AuditFilter) (string, []any) {
	var conds []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"agent", f.Agent}, {"session_id", f.SessionID}, {"tool", f.Tool}, {"principal", f.Principal},
		{"decision", f.Decision}, {"outcome", f.Outcome},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if f.ToolMatch != "" {
		conds = append(conds, `tool LIKE ? ESCAPE '\'`)
		args = append(args, store.ToolLike(f.ToolMatch))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "time >= ?")
		args = append(args, toDB(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "time < ?")
		args = append(args, toDB(f.Until))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func scanAudit(r scanner) (store.AuditRecord, error) {
	var a store.AuditRecord
	var t, untrusted, dur int64
	if err := r.Scan(&a.ID, &t, &a.Agent, &a.SessionID, &a.Tool, &a.ArgsDigest, &a.Decision, &a.Outcome, &a.Detail, &untrusted, &dur, &a.Principal); err != nil {
		return store.AuditRecord{}, err
	}
	a.Time, a.Untrusted, a.Duration = fromDB(t), untrusted != 0, time.Duration(dur)
	return a, nil
}
