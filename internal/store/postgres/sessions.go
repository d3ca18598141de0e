package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

const sessionColumns = "id, agent, title, origin, principal, created_at, updated_at"

// messageRows is the unnest() of a batch of messages: $n roles, $n+1
// contents, $n+2 creation times, numbered from 1 by ORDINALITY. Inserting
// from arrays makes a batch one statement, however many messages it has.
const messageRows = "unnest(%s::text[], %s::json[], %s::timestamptz[]) WITH ORDINALITY AS m(role, content, created_at, ord)"

// messageArrays prepares msgs for messageRows, with zero CreatedAt set to
// t, and returns them as they will be stored, with Seqs from first on.
func messageArrays(sessionID string, first int64, msgs []store.Message, t time.Time) (roles []string, contents []json.RawMessage, times []time.Time, out []store.Message) {
	roles = make([]string, len(msgs))
	contents = make([]json.RawMessage, len(msgs))
	times = make([]time.Time, len(msgs))
	out = make([]store.Message, len(msgs))
	for i, m := range msgs {
		m.SessionID = sessionID
		m.Seq = first + int64(i)
		m.CreatedAt = stored(orNow(m.CreatedAt, t))
		roles[i], contents[i], times[i] = m.Role, jsonArg(m.Content), m.CreatedAt
		out[i] = m
	}
	return roles, contents, times, out
}

// CreateSession implements store.SessionStore; zero timestamps mean now.
// The session and msgs are stored by one statement, msgs as
// AppendMessages would store them.
func (db *DB) CreateSession(ctx context.Context, s store.Session, msgs ...store.Message) error {
	if s.ID == "" {
		return errors.New("create session: empty id")
	}
	op := fmt.Sprintf("create session %q", s.ID)
	t := now()
	updated := orNow(s.UpdatedAt, t)
	if len(msgs) > 0 && updated.Before(t) {
		updated = t // as AppendMessages would move it
	}
	args := []any{s.ID, s.Agent, textArg(s.Title), s.Origin, s.Principal, orNow(s.CreatedAt, t), updated, int64(len(msgs))}
	insert := `INSERT INTO sessions (` + sessionColumns + `, last_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	if len(msgs) == 0 {
		_, err := db.pool.Exec(ctx, insert, args...)
		return wrap(op, err)
	}
	// One statement: the messages' foreign key is checked at its end,
	// when the session row exists; a taken ID fails the whole of it.
	roles, contents, times, _ := messageArrays(s.ID, 1, msgs, t)
	_, err := db.pool.Exec(ctx, `WITH s AS (`+insert+` RETURNING id)
		INSERT INTO messages (session_id, seq, role, content, created_at)
		SELECT s.id, m.ord, m.role, m.content, m.created_at FROM s, `+fmt.Sprintf(messageRows, "$9", "$10", "$11"),
		append(args, roles, contents, times)...)
	return wrap(op, err)
}

// GetSession implements store.SessionStore.
func (db *DB) GetSession(ctx context.Context, id string) (store.Session, error) {
	s, err := scanSession(db.pool.QueryRow(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE id = $1", id))
	if err != nil {
		return store.Session{}, wrap(fmt.Sprintf("get session %q", id), err)
	}
	return s, nil
}

// ListSessions implements store.SessionStore. Sessions updated at the same
// instant come in ID order.
func (db *DB) ListSessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error) {
	const op = "list sessions"
	var args []any
	q := "SELECT " + sessionColumns + " FROM sessions" + sessionWhere(&args, f) + " ORDER BY updated_at DESC, id"
	q += " LIMIT " + param(&args, limitArg(f.Limit)) + " OFFSET " + param(&args, int64(max(f.Offset, 0)))
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanSession)
	return out, wrap(op, err)
}

// CountSessions implements store.SessionStore.
func (db *DB) CountSessions(ctx context.Context, f store.SessionFilter) (int, error) {
	var args []any
	var n int64
	err := db.pool.QueryRow(ctx, "SELECT count(*) FROM sessions"+sessionWhere(&args, f), args...).Scan(&n)
	return int(n), wrap("count sessions", err)
}

// sessionWhere is f's WHERE clause ("" for none); its parameters go to args.
func sessionWhere(args *[]any, f store.SessionFilter) string {
	var conds []string
	if f.Agent != "" {
		conds = append(conds, "agent = "+param(args, f.Agent))
	}
	if f.Principal != "" {
		conds = append(conds, "principal = "+param(args, f.Principal))
	}
	if f.Query != "" {
		// ILIKE, as SQLite's LIKE, ignores ASCII case; the query's own
		// wildcards are escaped so "100%" means those four characters.
		// Titles are bytea (they may hold invalid UTF-8): they are
		// matched in their escape encoding, and so is the query.
		text := param(args, "%"+likeEscaper.Replace(f.Query)+"%")
		title := param(args, "%"+likeEscaper.Replace(byteaEscape(f.Query))+"%")
		conds = append(conds, "(id ILIKE "+text+" OR agent ILIKE "+text+" OR encode(title, 'escape') ILIKE "+title+
			" OR EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id AND m.content::text ILIKE "+text+"))")
	}
	return where(conds)
}

// DeleteSession implements store.SessionStore. The session's messages go
// with it (ON DELETE CASCADE), in the same statement.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	return wrap(fmt.Sprintf("delete session %q", id), notFound(db.pool.Exec(ctx, "DELETE FROM sessions WHERE id = $1", id)))
}

// AppendMessages implements store.SessionStore. The caller's SessionID and
// Seq are ignored; a zero CreatedAt means now. UpdatedAt moves to now
// unless it is already later.
func (db *DB) AppendMessages(ctx context.Context, sessionID string, msgs []store.Message) ([]store.Message, error) {
	op := fmt.Sprintf("append messages to session %q", sessionID)
	if len(msgs) == 0 {
		var one int
		if err := db.pool.QueryRow(ctx, "SELECT 1 FROM sessions WHERE id = $1", sessionID).Scan(&one); err != nil {
			return nil, wrap(op, err)
		}
		return []store.Message{}, nil
	}
	t := now()
	n := int64(len(msgs))
	roles, contents, times, out := messageArrays(sessionID, 0, msgs, t)
	// One statement reserves the Seqs (the UPDATE locks the session's row
	// until it commits, so concurrent appends queue there, in any process)
	// and inserts the messages; no row back means no such session.
	var last int64
	err := db.pool.QueryRow(ctx, `WITH s AS (
			UPDATE sessions SET last_seq = last_seq + $2, updated_at = GREATEST(updated_at, $3)
			WHERE id = $1 RETURNING last_seq
		), ins AS (
			INSERT INTO messages (session_id, seq, role, content, created_at)
			SELECT $1, s.last_seq - $2 + m.ord, m.role, m.content, m.created_at FROM s, `+fmt.Sprintf(messageRows, "$4", "$5", "$6")+`
		)
		SELECT last_seq FROM s`,
		sessionID, n, t, roles, contents, times).Scan(&last)
	if err != nil {
		return nil, wrap(op, err)
	}
	for i := range out {
		out[i].Seq = last - n + 1 + int64(i)
	}
	return out, nil
}

// CreateSessionWithTask implements store.SessionTaskWriter in one
// statement: CreateSession's, with the task's insert, which depends on
// the session's (a taken ID of either fails the whole of it).
func (db *DB) CreateSessionWithTask(ctx context.Context, s store.Session, msgs []store.Message, task store.Task) error {
	op := fmt.Sprintf("create session %q with task %q", s.ID, task.ID)
	if s.ID == "" || task.ID == "" {
		return fmt.Errorf("%s: empty id", op)
	}
	t := now()
	updated := orNow(s.UpdatedAt, t)
	if len(msgs) > 0 && updated.Before(t) {
		updated = t
	}
	roles, contents, times, _ := messageArrays(s.ID, 1, msgs, t)
	_, err := db.pool.Exec(ctx, `WITH s AS (
			INSERT INTO sessions (`+sessionColumns+`, last_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id
		), ins AS (
			INSERT INTO messages (session_id, seq, role, content, created_at)
			SELECT s.id, m.ord, m.role, m.content, m.created_at FROM s, `+fmt.Sprintf(messageRows, "$9", "$10", "$11")+`
		)
		INSERT INTO tasks (`+taskColumns+`, replica)
		SELECT $12, $13, $14, $15, $16, $17, $18, 1, $19, $20, $21 FROM s`,
		s.ID, s.Agent, textArg(s.Title), s.Origin, s.Principal, orNow(s.CreatedAt, t), updated, int64(len(msgs)),
		roles, contents, times,
		task.ID, task.ContextID, task.Agent, task.State, task.Terminal, task.Owner, jsonArg(task.Data),
		orNow(task.CreatedAt, t), orNow(task.UpdatedAt, t), db.replicaID())
	return wrap(op, err)
}

// AppendMessagesCreateTask implements store.SessionTaskWriter in one
// statement, so one round trip: AppendMessages' reservation and insert,
// and the task's insert, which depends on the session's row (no session,
// no task). A taken task ID fails the whole statement.
func (db *DB) AppendMessagesCreateTask(ctx context.Context, sessionID string, msgs []store.Message, task store.Task) ([]store.Message, error) {
	op := fmt.Sprintf("append messages to session %q and create task %q", sessionID, task.ID)
	if task.ID == "" {
		return nil, fmt.Errorf("%s: empty task id", op)
	}
	t := now()
	n := int64(len(msgs))
	roles, contents, times, out := messageArrays(sessionID, 0, msgs, t)
	var last int64
	err := db.pool.QueryRow(ctx, `WITH s AS (
			UPDATE sessions SET last_seq = last_seq + $2, updated_at = GREATEST(updated_at, $3)
			WHERE id = $1 RETURNING last_seq
		), ins AS (
			INSERT INTO messages (session_id, seq, role, content, created_at)
			SELECT $1, s.last_seq - $2 + m.ord, m.role, m.content, m.created_at FROM s, `+fmt.Sprintf(messageRows, "$4", "$5", "$6")+`
		), tk AS (
			INSERT INTO tasks (`+taskColumns+`, replica)
			SELECT $7, $8, $9, $10, $11, $12, $13, 1, $14, $15, $16 FROM s
		)
		SELECT last_seq FROM s`,
		sessionID, n, t, roles, contents, times,
		task.ID, task.ContextID, task.Agent, task.State, task.Terminal, task.Owner, jsonArg(task.Data),
		orNow(task.CreatedAt, t), orNow(task.UpdatedAt, t), db.replicaID()).Scan(&last)
	if err != nil {
		return nil, wrap(op, err)
	}
	for i := range out {
		out[i].Seq = last - n + 1 + int64(i)
	}
	return out, nil
}

// Messages implements store.SessionStore.
func (db *DB) Messages(ctx context.Context, sessionID string) ([]store.Message, error) {
	op := fmt.Sprintf("read messages of session %q", sessionID)
	rows, err := db.pool.Query(ctx, "SELECT session_id, seq, role, content, created_at FROM messages WHERE session_id = $1 ORDER BY seq", sessionID)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanMessage)
	if err != nil {
		return nil, wrap(op, err)
	}
	if len(out) == 0 {
		// No messages: an empty session, or none at all.
		var one int
		if err := db.pool.QueryRow(ctx, "SELECT 1 FROM sessions WHERE id = $1", sessionID).Scan(&one); err != nil {
			return nil, wrap(op, err)
		}
	}
	return out, nil
}

func scanSession(r pgx.Row) (store.Session, error) {
	var s store.Session
	var title []byte
	var created, updated time.Time
	if err := r.Scan(&s.ID, &s.Agent, &title, &s.Origin, &s.Principal, &created, &updated); err != nil {
		return store.Session{}, err
	}
	s.Title = string(title)
	s.CreatedAt, s.UpdatedAt = created.UTC(), updated.UTC()
	return s, nil
}

func scanMessage(r pgx.Row) (store.Message, error) {
	var m store.Message
	var created time.Time
	if err := r.Scan(&m.SessionID, &m.Seq, &m.Role, (*[]byte)(&m.Content), &created); err != nil {
		return store.Message{}, err
	}
	m.CreatedAt = created.UTC()
	return m, nil
}

// likeEscaper escapes LIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// byteaEscape is s as encode(bytea, 'escape') writes its bytes: a
// backslash doubled, zero and non-ASCII bytes as \ooo.
func byteaEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == 0 || c >= 0x80:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
