package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/store"
)

const sessionColumns = "id, agent, title, origin, created_at, updated_at, principal"

// CreateSession implements store.SessionStore; zero timestamps mean now.
// The session and msgs are stored in one transaction, msgs as
// AppendMessages would store them.
func (db *DB) CreateSession(ctx context.Context, s store.Session, msgs ...store.Message) error {
	if s.ID == "" {
		return errors.New("create session: empty id")
	}
	t := now()
	updated := orNow(s.UpdatedAt, t)
	if len(msgs) > 0 && updated.Before(t) {
		updated = t // as AppendMessages would move it
	}
	err := db.write(ctx, payloadSize(msgs), func(ctx context.Context, tx *sql.Tx) error {
		return db.insertSession(ctx, tx, s, msgs, t, updated)
	})
	return wrap(fmt.Sprintf("create session %q", s.ID), err)
}

// insertSession is CreateSession's work in tx.
func (db *DB) insertSession(ctx context.Context, tx *sql.Tx, s store.Session, msgs []store.Message, t, updated time.Time) error {
	_, err := tx.StmtContext(ctx, db.stmts.createSession).ExecContext(ctx,
		s.ID, s.Agent, s.Title, s.Origin, toDB(orNow(s.CreatedAt, t)), toDB(updated), s.Principal, len(msgs))
	if err != nil {
		return err
	}
	_, err = db.insertMessages(ctx, tx, s.ID, 1, msgs, t)
	return err
}

// CreateSessionWithTask implements store.SessionTaskWriter: the session,
// its messages and the task are one write of the group commit.
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
	err := db.write(ctx, payloadSize(msgs)+len(task.Data), func(ctx context.Context, tx *sql.Tx) error {
		if err := db.insertSession(ctx, tx, s, msgs, t, updated); err != nil {
			return err
		}
		return db.insertTask(ctx, tx, task, t)
	})
	return wrap(op, err)
}

// GetSession implements store.SessionStore.
func (db *DB) GetSession(ctx context.Context, id string) (store.Session, error) {
	s, err := scanSession(db.r.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions WHERE id = ?", id))
	if err != nil {
		return store.Session{}, wrap(fmt.Sprintf("get session %q", id), err)
	}
	return s, nil
}

// ListSessions implements store.SessionStore. Sessions updated at the same
// instant come in ID order.
func (db *DB) ListSessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error) {
	const op = "list sessions"
	w, args := sessionWhere(f)
	q := "SELECT " + sessionColumns + " FROM sessions" + w + " ORDER BY updated_at DESC, id"
	q, args = limitOffset(q, args, f.Limit, f.Offset)
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanSession)
	return out, wrap(op, err)
}

// CountSessions implements store.SessionStore.
func (db *DB) CountSessions(ctx context.Context, f store.SessionFilter) (int, error) {
	w, args := sessionWhere(f)
	var n int
	err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM sessions"+w, args...).Scan(&n)
	return n, wrap("count sessions", err)
}

// sessionWhere is f's WHERE clause ("" for none) and its arguments.
func sessionWhere(f store.SessionFilter) (string, []any) {
	var args []any
	var conds []string
	if f.Agent != "" {
		conds = append(conds, "agent = ?")
		args = append(args, f.Agent)
	}
	if f.Principal != "" {
		conds = append(conds, "principal = ?")
		args = append(args, f.Principal)
	}
	if f.Query != "" {
		// LIKE is case-insensitive for ASCII in SQLite; the pattern's own
		// wildcards are escaped so "100%" means those four characters.
		like := "%" + likeEscaper.Replace(f.Query) + "%"
		conds = append(conds, `(id LIKE ? ESCAPE '\' OR agent LIKE ? ESCAPE '\' OR title LIKE ? ESCAPE '\'
			OR EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id AND m.content LIKE ? ESCAPE '\'))`)
		args = append(args, like, like, like, like)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// DeleteSession implements store.SessionStore.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	err := db.write(ctx, 0, func(ctx context.Context, tx *sql.Tx) error {
		// The foreign key cascades too; deleting explicitly keeps the
		// messages from outliving their session should enforcement ever be
		// off for the connection.
		if _, err := tx.ExecContext(ctx, "DELETE FROM messages WHERE session_id = ?", id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", id)
		if err != nil {
			return err
		}
		return rowsAffected(res)
	})
	return wrap(fmt.Sprintf("delete session %q", id), err)
}

// AppendMessages implements store.SessionStore. The caller's SessionID and
// Seq are ignored; a zero CreatedAt means now. UpdatedAt moves to now
// unless it is already later.
func (db *DB) AppendMessages(ctx context.Context, sessionID string, msgs []store.Message) ([]store.Message, error) {
	op := fmt.Sprintf("append messages to session %q", sessionID)
	if len(msgs) == 0 {
		var one int
		if err := db.r.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", sessionID).Scan(&one); err != nil {
			return nil, wrap(op, err)
		}
		return []store.Message{}, nil
	}
	t := now()
	var out []store.Message
	err := db.write(ctx, payloadSize(msgs), func(ctx context.Context, tx *sql.Tx) error {
		// Reserving the Seqs and checking that the session exists is one
		// statement; the transaction makes the reservation and the inserts
		// one unit, so Seqs stay gapless.
		var last int64
		err := tx.StmtContext(ctx, db.stmts.reserveSeqs).QueryRowContext(ctx, len(msgs), toDB(t), sessionID).Scan(&last)
		if err != nil {
			return err
		}
		out, err = db.insertMessages(ctx, tx, sessionID, last-int64(len(msgs))+1, msgs, t)
		return err
	})
	if err != nil {
		return nil, wrap(op, err)
	}
	return out, nil
}

// AppendMessagesCreateTask implements store.SessionTaskWriter: the
// append and the task's insert are one write of the group commit.
func (db *DB) AppendMessagesCreateTask(ctx context.Context, sessionID string, msgs []store.Message, task store.Task) ([]store.Message, error) {
	op := fmt.Sprintf("append messages to session %q and create task %q", sessionID, task.ID)
	if task.ID == "" {
		return nil, fmt.Errorf("%s: empty task id", op)
	}
	t := now()
	var out []store.Message
	err := db.write(ctx, payloadSize(msgs)+len(task.Data), func(ctx context.Context, tx *sql.Tx) error {
		var last int64
		if err := tx.StmtContext(ctx, db.stmts.reserveSeqs).QueryRowContext(ctx, len(msgs), toDB(t), sessionID).Scan(&last); err != nil {
			return err
		}
		var err error
		if out, err = db.insertMessages(ctx, tx, sessionID, last-int64(len(msgs))+1, msgs, t); err != nil {
			return err
		}
		return db.insertTask(ctx, tx, task, t)
	})
	if err != nil {
		return nil, wrap(op, err)
	}
	if out == nil {
		out = []store.Message{}
	}
	return out, nil
}

// insertMessages inserts msgs into session sessionID with Seqs from first
// on, whose reservation is the caller's business, and returns them as
// stored. A zero CreatedAt means t.
func (db *DB) insertMessages(ctx context.Context, tx *sql.Tx, sessionID string, first int64, msgs []store.Message, t time.Time) ([]store.Message, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]store.Message, len(msgs))
	stmt := tx.StmtContext(ctx, db.stmts.insertMessage)
	for i, m := range msgs {
		m.SessionID = sessionID
		m.Seq = first + int64(i)
		m.CreatedAt = fromDB(toDB(orNow(m.CreatedAt, t)))
		if _, err := stmt.ExecContext(ctx, m.SessionID, m.Seq, m.Role, jsonToDB(m.Content), toDB(m.CreatedAt)); err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// payloadSize estimates the bytes msgs will take in the database, to
// bound group-commit batches.
func payloadSize(msgs []store.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
	}
	return n
}

// Messages implements store.SessionStore.
func (db *DB) Messages(ctx context.Context, sessionID string) ([]store.Message, error) {
	var out []store.Message
	err := db.read(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", sessionID).Scan(&one); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, "SELECT session_id, seq, role, content, created_at FROM messages WHERE session_id = ? ORDER BY seq", sessionID)
		if err != nil {
			return err
		}
		out, err = collect(rows, scanMessage)
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("read messages of session %q", sessionID), err)
	}
	return out, nil
}

func scanSession(r scanner) (store.Session, error) {
	var s store.Session
	var created, updated int64
	if err := r.Scan(&s.ID, &s.Agent, &s.Title, &s.Origin, &created, &updated, &s.Principal); err != nil {
		return store.Session{}, err
	}
	s.CreatedAt, s.UpdatedAt = fromDB(created), fromDB(updated)
	return s, nil
}

func scanMessage(r scanner) (store.Message, error) {
	var m store.Message
	var created int64
	if err := r.Scan(&m.SessionID, &m.Seq, &m.Role, (*[]byte)(&m.Content), &created); err != nil {
		return store.Message{}, err
	}
	m.CreatedAt = fromDB(created)
	return m, nil
}
