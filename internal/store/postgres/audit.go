package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

const auditColumns = "time, agent, session_id, tool, args_digest, decision, outcome, detail, untrusted, duration_ns, principal"

// AppendAudit implements store.AuditStore; a zero Time means now.
func (db *DB) AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error) {
	var id int64
	err := db.pool.QueryRow(ctx, `INSERT INTO audit (`+auditColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
		orNow(r.Time, now()), r.Agent, r.SessionID, r.Tool, r.ArgsDigest, r.Decision, r.Outcome, textArg(r.Detail),
		r.Untrusted, int64(r.Duration), r.Principal).Scan(&id)
	if err != nil {
		return 0, wrap("append audit record", err)
	}
	return id, nil
}

// AppendAuditBatch writes recs with one statement (auditlog.BatchAppender):
// the asynchronous audit writer hands over everything queued at once, and
// an INSERT from arrays stores the batch in one round trip and one commit,
// all or nothing. IDs follow the order of recs.
func (db *DB) AppendAuditBatch(ctx context.Context, recs []store.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	n := len(recs)
	var (
		times                                                     = make([]time.Time, n)
		agents, sessions, tools, digests, decisions, outcomes, pr = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		details                                                   = make([][]byte, n)
		untrusted                                                 = make([]bool, n)
		durations                                                 = make([]int64, n)
	)
	at := now()
	for i, r := range recs {
		times[i], agents[i], sessions[i], tools[i] = orNow(r.Time, at), r.Agent, r.SessionID, r.Tool
		digests[i], decisions[i], outcomes[i], details[i] = r.ArgsDigest, r.Decision, r.Outcome, textArg(r.Detail)
		untrusted[i], durations[i], pr[i] = r.Untrusted, int64(r.Duration), r.Principal
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO audit (`+auditColumns+`)
		SELECT `+auditColumns+` FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::bytea[], $9::boolean[], $10::bigint[], $11::text[]) WITH ORDINALITY AS r(`+auditColumns+`, ord)
		ORDER BY ord`,
		times, agents, sessions, tools, digests, decisions, outcomes, details, untrusted, durations, pr)
	return wrap("append audit records", err)
}

// QueryAudit implements store.AuditStore. Since is inclusive, Until
// exclusive; records with
// the same Time come most recently appended first.
func (db *DB) QueryAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	const op = "query audit log"
	var args []any
	q := "SELECT id, " + auditColumns + " FROM audit" + auditWhere(&args, f) + " ORDER BY time DESC, id DESC LIMIT " +
		param(&args, limitArg(f.Limit)) + " OFFSET " + param(&args, int64(max(f.Offset, 0)))
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanAudit)
	return out, wrap(op, err)
}

// CountAudit implements store.AuditStore.
func (db *DB) CountAudit(ctx context.Context, f store.AuditFilter) (int, error) {
	var args []any
	var n int64
	err := db.pool.QueryRow(ctx, "SELECT count(*) FROM audit"+auditWhere(&args, f), args...).Scan(&n)
	return int(n), wrap("count audit records", err)
}

// auditWhere is f's WHERE clause ("" for none); its parameters go to args.
func auditWhere(args *[]any, f store.AuditFilter) string {
	var conds []string
	for _, c := range []struct{ col, val string }{
		{"agent", f.Agent}, {"session_id", f.SessionID}, {"tool", f.Tool}, {"principal", f.Principal},
		{"decision", f.Decision}, {"outcome", f.Outcome},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = "+param(args, c.val))
		}
	}
	if f.ToolMatch != "" {
		conds = append(conds, "tool ILIKE "+param(args, store.ToolLike(f.ToolMatch))+` ESCAPE '\'`)
	}
	if !f.Since.IsZero() {
		conds = append(conds, "time >= "+param(args, f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "time < "+param(args, f.Until))
	}
	return where(conds)
}

func scanAudit(r pgx.Row) (store.AuditRecord, error) {
	var a store.AuditRecord
	var t time.Time
	var detail []byte
	var dur int64
	if err := r.Scan(&a.ID, &t, &a.Agent, &a.SessionID, &a.Tool, &a.ArgsDigest, &a.Decision, &a.Outcome, &detail, &a.Untrusted, &dur, &a.Principal); err != nil {
		return store.AuditRecord{}, err
	}
	a.Time, a.Detail, a.Duration = t.UTC(), string(detail), time.Duration(dur)
	return a, nil
}
