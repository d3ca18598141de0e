package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/store"
)

const taskColumns = "id, context_id, agent, state, terminal, owner, data, version, created_at, updated_at"

// CreateTask implements store.TaskStore; zero timestamps mean now.
func (db *DB) CreateTask(ctx context.Context, t store.Task) (int64, error) {
	if t.ID == "" {
		return 0, errors.New("create task: empty id")
	}
	ts := now()
	err := db.write(ctx, len(t.Data), func(ctx context.Context, tx *sql.Tx) error {
		return db.insertTask(ctx, tx, t, ts)
	})
	if err != nil {
		return 0, wrap(fmt.Sprintf("create task %q", t.ID), err)
	}
	return 1, nil
}

// insertTask is CreateTask's work in tx; zero timestamps mean ts.
func (db *DB) insertTask(ctx context.Context, tx *sql.Tx, t store.Task, ts time.Time) error {
	_, err := tx.StmtContext(ctx, db.stmts.createTask).ExecContext(ctx,
		t.ID, t.ContextID, t.Agent, t.State, boolToDB(t.Terminal), t.Owner, jsonToDB(t.Data),
		toDB(orNow(t.CreatedAt, ts)), toDB(orNow(t.UpdatedAt, ts)))
	return err
}

// UpdateTask implements store.TaskStore. It keeps the stored CreatedAt;
// a zero UpdatedAt means now.
func (db *DB) UpdateTask(ctx context.Context, t store.Task, prevVersion int64) (int64, error) {
	var version int64
	updated := toDB(orNow(t.UpdatedAt, now()))
	err := db.write(ctx, len(t.Data), func(ctx context.Context, tx *sql.Tx) error {
		err := tx.StmtContext(ctx, db.stmts.updateTask).QueryRowContext(ctx,
			t.ContextID, t.Agent, t.State, boolToDB(t.Terminal), t.Owner, jsonToDB(t.Data), updated,
			t.ID, prevVersion, prevVersion).Scan(&version)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		// Nothing matched: absent, or changed since prevVersion.
		var stored int64
		if err := tx.QueryRowContext(ctx, "SELECT version FROM tasks WHERE id = ?", t.ID).Scan(&stored); err != nil {
			return err
		}
		return fmt.Errorf("%w: stored version is %d, not %d", store.ErrConflict, stored, prevVersion)
	})
	if err != nil {
		return 0, wrap(fmt.Sprintf("update task %q", t.ID), err)
	}
	return version, nil
}

// GetTask implements store.TaskStore.
func (db *DB) GetTask(ctx context.Context, id string) (store.Task, error) {
	t, err := scanTask(db.r.QueryRowContext(ctx, "SELECT "+taskColumns+" FROM tasks WHERE id = ?", id))
	if err != nil {
		return store.Task{}, wrap(fmt.Sprintf("get task %q", id), err)
	}
	return t, nil
}

// ListTasks implements store.TaskStore. Tasks updated at the same instant
// come in ID order.
func (db *DB) ListTasks(ctx context.Context, f store.TaskFilter) ([]store.Task, int, error) {
	var conds []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"context_id", f.ContextID}, {"agent", f.Agent}, {"state", f.State}, {"owner", f.Owner},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if !f.UpdatedAfter.IsZero() {
		conds = append(conds, "updated_at > ?")
		args = append(args, toDB(f.UpdatedAfter))
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	var tasks []store.Task
	var total int
	err := db.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM tasks"+where, args...).Scan(&total); err != nil {
			return err
		}
		q, qargs := limitOffset("SELECT "+taskColumns+" FROM tasks"+where+" ORDER BY updated_at DESC, id", args, f.Limit, f.Offset)
		rows, err := tx.QueryContext(ctx, q, qargs...)
		if err != nil {
			return err
		}
		tasks, err = collect(rows, scanTask)
		return err
	})
	if err != nil {
		return nil, 0, wrap("list tasks", err)
	}
	return tasks, total, nil
}

// PruneTasks implements store.TaskStore. Terminal tasks go oldest
// UpdatedAt first (ties by ID). Their push configs go with them, in the
// same transaction, by the tasks_delete_push_configs trigger (migration
// 0002); the count is of tasks only, as SQLite's does not include rows a
// trigger deletes.
func (db *DB) PruneTasks(ctx context.Context, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("prune tasks: negative keep %d", keep)
	}
	var deleted int64
	err := db.write(ctx, 0, func(ctx context.Context, tx *sql.Tx) error {
		var total int
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM tasks").Scan(&total); err != nil {
			return err
		}
		if total <= keep {
			return nil
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE id IN (
			SELECT id FROM tasks WHERE terminal = 1 ORDER BY updated_at, id LIMIT ?)`, total-keep)
		if err != nil {
			return err
		}
		deleted, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, wrap(fmt.Sprintf("prune tasks to %d", keep), err)
	}
	return int(deleted), nil
}

// FailRunningTasks implements store.TaskStore. update runs outside any
// transaction, so it may use the store. A task that changes between the
// read and the write is left alone: something alive is working on it.
func (db *DB) FailRunningTasks(ctx context.Context, update func(store.Task) (data json.RawMessage, state string)) (int, error) {
	const op = "fail running tasks"
	rows, err := db.r.QueryContext(ctx, "SELECT "+taskColumns+" FROM tasks WHERE terminal = 0 ORDER BY updated_at, id")
	if err != nil {
		return 0, wrap(op, err)
	}
	running, err := collect(rows, scanTask)
	if err != nil {
		return 0, wrap(op, err)
	}
	type change struct {
		id      string
		version int64
		data    json.RawMessage
		state   string
	}
	changes := make([]change, len(running))
	for i, t := range running {
		data, state := update(t)
		changes[i] = change{t.ID, t.Version, data, state}
	}
	var n int64
	size := 0
	for _, c := range changes {
		size += len(c.data)
	}
	err = db.write(ctx, size, func(ctx context.Context, tx *sql.Tx) error {
		ts := toDB(now())
		for _, c := range changes {
			res, err := tx.ExecContext(ctx, `UPDATE tasks SET data = ?, state = ?, terminal = 1, version = version + 1, updated_at = ?
				WHERE id = ? AND version = ? AND terminal = 0`, jsonToDB(c.data), c.state, ts, c.id, c.version)
			if err != nil {
				return fmt.Errorf("task %q: %w", c.id, err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += k
		}
		return nil
	})
	if err != nil {
		return 0, wrap(op, err)
	}
	return int(n), nil
}

func scanTask(r scanner) (store.Task, error) {
	var t store.Task
	var terminal, created, updated int64
	if err := r.Scan(&t.ID, &t.ContextID, &t.Agent, &t.State, &terminal, &t.Owner, (*[]byte)(&t.Data), &t.Version, &created, &updated); err != nil {
		return store.Task{}, err
	}
	t.Terminal = terminal != 0
	t.CreatedAt, t.UpdatedAt = fromDB(created), fromDB(updated)
	return t, nil
}
