package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

const taskColumns = "id, context_id, agent, state, terminal, owner, data, version, created_at, updated_at"

// CreateTask implements store.TaskStore; zero timestamps mean now. The
// task is marked as run by this process's replica (see Join): the replica
// that creates a task is the one running it.
func (db *DB) CreateTask(ctx context.Context, t store.Task) (int64, error) {
	if t.ID == "" {
		return 0, errors.New("create task: empty id")
	}
	ts := now()
	_, err := db.pool.Exec(ctx, `INSERT INTO tasks (`+taskColumns+`, replica) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10)`,
		t.ID, t.ContextID, t.Agent, t.State, t.Terminal, t.Owner, jsonArg(t.Data), orNow(t.CreatedAt, ts), orNow(t.UpdatedAt, ts), db.replicaID())
	if err != nil {
		return 0, wrap(fmt.Sprintf("create task %q", t.ID), err)
	}
	return 1, nil
}

// UpdateTask implements store.TaskStore. It keeps the stored CreatedAt;
// a zero UpdatedAt means now.
//
// One statement does the checked update and, should it match nothing,
// says why: the second subquery reads the version as of the statement's
// start. Concurrent updates from the same version queue on the row lock;
// the first wins, and the others, re-checking the row it left, see a
// version that moved on and fail with ErrConflict.
func (db *DB) UpdateTask(ctx context.Context, t store.Task, prevVersion int64) (int64, error) {
	op := fmt.Sprintf("update task %q", t.ID)
	var version, storedVersion *int64
	const update = `WITH u AS (
			UPDATE tasks SET context_id = $2, agent = $3, state = $4, terminal = $5, owner = $6, data = $7,
				version = version + 1, updated_at = $8
			WHERE id = $1 AND ($9::bigint = 0 OR version = $9::bigint) RETURNING version
		)
		SELECT (SELECT version FROM u), (SELECT version FROM tasks WHERE id = $1)`
	args := []any{t.ID, t.ContextID, t.Agent, t.State, t.Terminal, t.Owner, jsonArg(t.Data), orNow(t.UpdatedAt, now()), prevVersion}
	var err error
	if payload := note(TopicTaskEnd, db.replicaID(), "-", t.ID); t.Terminal && db.channel != "" && len(payload) <= maxNotify {
		// Replicas waiting for the task's end (a cancel asked through
		// them, a subscriber) hear of it at the commit. On a conflict
		// the notification is spurious, which costs them one read.
		b := &pgx.Batch{}
		b.Queue(update, args...).QueryRow(func(r pgx.Row) error { return r.Scan(&version, &storedVersion) })
		b.Queue("SELECT pg_notify($1, $2)", db.channel, payload)
		err = db.pool.SendBatch(ctx, b).Close()
	} else {
		err = db.pool.QueryRow(ctx, update, args...).Scan(&version, &storedVersion)
	}
	switch {
	case err != nil:
		return 0, wrap(op, err)
	case version != nil:
		return *version, nil
	case storedVersion == nil:
		return 0, fmt.Errorf("%s: %w", op, store.ErrNotFound)
	default:
		return 0, fmt.Errorf("%s: %w: stored version is %d, not %d", op, store.ErrConflict, *storedVersion, prevVersion)
	}
}

// GetTask implements store.TaskStore.
func (db *DB) GetTask(ctx context.Context, id string) (store.Task, error) {
	t, err := scanTask(db.pool.QueryRow(ctx, "SELECT "+taskColumns+" FROM tasks WHERE id = $1", id))
	if err != nil {
		return store.Task{}, wrap(fmt.Sprintf("get task %q", id), err)
	}
	return t, nil
}

// ListTasks implements store.TaskStore. Tasks updated at the same instant
// come in ID order.
//
// The page and the total come from one statement (a window count, taken
// before LIMIT and OFFSET), hence from one snapshot. Only a page that
// comes back empty after an offset needs a second query for the total.
func (db *DB) ListTasks(ctx context.Context, f store.TaskFilter) ([]store.Task, int, error) {
	const op = "list tasks"
	var conds []string
	var args []any
	for _, c := range []struct{ col, val string }{
		{"context_id", f.ContextID}, {"agent", f.Agent}, {"state", f.State}, {"owner", f.Owner},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = "+param(&args, c.val))
		}
	}
	if !f.UpdatedAfter.IsZero() {
		conds = append(conds, "updated_at > "+param(&args, f.UpdatedAfter))
	}
	filterArgs := len(args)
	q := "SELECT " + taskColumns + ", count(*) OVER () FROM tasks" + where(conds) + " ORDER BY updated_at DESC, id" +
		" LIMIT " + param(&args, limitArg(f.Limit)) + " OFFSET " + param(&args, int64(max(f.Offset, 0)))
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, 0, wrap(op, err)
	}
	var total int64
	tasks, err := collect(rows, func(r pgx.Row) (store.Task, error) {
		return scanTaskAnd(r, &total)
	})
	if err != nil {
		return nil, 0, wrap(op, err)
	}
	if len(tasks) == 0 && f.Offset > 0 {
		if err := db.pool.QueryRow(ctx, "SELECT count(*) FROM tasks"+where(conds), args[:filterArgs]...).Scan(&total); err != nil {
			return nil, 0, wrap(op, err)
		}
	}
	return tasks, int(total), nil
}

// PruneTasks implements store.TaskStore. Terminal tasks go oldest
// UpdatedAt first (ties by ID), and their push configs with them, in one
// statement; the count is of tasks only. Run by two processes at once,
// both statements pick the same oldest tasks from their snapshots, so
// together they never delete more than one would.
func (db *DB) PruneTasks(ctx context.Context, keep int) (int, error) {
	if keep < 0 {
		return 0, fmt.Errorf("prune tasks: negative keep %d", keep)
	}
	var deleted int64
	err := db.pool.QueryRow(ctx, `WITH d AS (
			DELETE FROM tasks WHERE id IN (
				SELECT id FROM tasks WHERE terminal ORDER BY updated_at, id
				LIMIT GREATEST((SELECT count(*) FROM tasks) - $1, 0))
			RETURNING id
		), p AS (
			DELETE FROM push_configs WHERE task_id IN (SELECT id FROM d)
		)
		SELECT count(*) FROM d`, int64(keep)).Scan(&deleted)
	if err != nil {
		return 0, wrap(fmt.Sprintf("prune tasks to %d", keep), err)
	}
	return int(deleted), nil
}

// FailRunningTasks implements store.TaskStore. update runs outside any
// transaction, so it may use the store. A task that changes between the
// read and the write is left alone: something alive is working on it.
// The writes are one UPDATE from arrays.
func (db *DB) FailRunningTasks(ctx context.Context, update func(store.Task) (data json.RawMessage, state string)) (int, error) {
	const op = "fail running tasks"
	rows, err := db.pool.Query(ctx, "SELECT "+taskColumns+" FROM tasks WHERE NOT terminal ORDER BY updated_at, id")
	if err != nil {
		return 0, wrap(op, err)
	}
	running, err := collect(rows, scanTask)
	if err != nil {
		return 0, wrap(op, err)
	}
	if len(running) == 0 {
		return 0, nil
	}
	ids := make([]string, len(running))
	versions := make([]int64, len(running))
	datas := make([]json.RawMessage, len(running))
	states := make([]string, len(running))
	for i, t := range running {
		data, state := update(t)
		ids[i], versions[i], datas[i], states[i] = t.ID, t.Version, jsonArg(data), state
	}
	tag, err := db.pool.Exec(ctx, `UPDATE tasks t SET data = u.data, state = u.state, terminal = true,
			version = t.version + 1, updated_at = $5
		FROM unnest($1::text[], $2::bigint[], $3::json[], $4::text[]) AS u(id, version, data, state)
		WHERE t.id = u.id AND t.version = u.version AND NOT t.terminal`,
		ids, versions, datas, states, now())
	if err != nil {
		return 0, wrap(op, err)
	}
	return int(tag.RowsAffected()), nil
}

func scanTask(r pgx.Row) (store.Task, error) { return scanTaskAnd(r) }

// scanTaskAnd scans a task and then the row's extra columns into more.
func scanTaskAnd(r pgx.Row, more ...any) (store.Task, error) {
	var t store.Task
	var created, updated time.Time
	dest := append([]any{&t.ID, &t.ContextID, &t.Agent, &t.State, &t.Terminal, &t.Owner, (*[]byte)(&t.Data), &t.Version, &created, &updated}, more...)
	if err := r.Scan(dest...); err != nil {
		return store.Task{}, err
	}
	t.CreatedAt, t.UpdatedAt = created.UTC(), updated.UTC()
	return t, nil
}
