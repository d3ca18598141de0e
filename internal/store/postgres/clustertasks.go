package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// TaskReplica returns the replica running task id and whether its lease
// holds; "" for a task that is terminal or unknown.
func (c *Cluster) TaskReplica(ctx context.Context, id string) (replica string, alive bool, err error) {
	err = c.db.pool.QueryRow(ctx, `SELECT t.replica, EXISTS (SELECT 1 FROM replicas r WHERE r.id = t.replica AND r.heartbeat_at >= now() - $2::interval)
		FROM tasks t WHERE t.id = $1 AND NOT t.terminal`, id, c.opts.Lease).Scan(&replica, &alive)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, wrap(fmt.Sprintf("find the replica of task %q", id), err)
	}
	return replica, alive, nil
}

// RequestCancel records that task id must stop, for the replica running
// it to find again (PendingCancels) should it miss the notification the
// caller sends, and returns what TaskReplica would.
func (c *Cluster) RequestCancel(ctx context.Context, id string) (replica string, alive bool, err error) {
	err = c.db.pool.QueryRow(ctx, `WITH u AS (
			UPDATE tasks SET cancel_requested_at = now() WHERE id = $1 AND NOT terminal RETURNING replica
		)
		SELECT u.replica, EXISTS (SELECT 1 FROM replicas r WHERE r.id = u.replica AND r.heartbeat_at >= now() - $2::interval) FROM u`,
		id, c.opts.Lease).Scan(&replica, &alive)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, wrap(fmt.Sprintf("request the cancel of task %q", id), err)
	}
	return replica, alive, nil
}

// PendingCancels lists the unfinished tasks of this replica whose cancel
// another replica requested.
func (c *Cluster) PendingCancels(ctx context.Context) ([]string, error) {
	rows, err := c.db.pool.Query(ctx, `SELECT id FROM tasks WHERE replica = $1 AND NOT terminal AND cancel_requested_at IS NOT NULL`, c.id)
	if err != nil {
		return nil, wrap("list requested cancels", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, wrap("list requested cancels", err)
}

// OnTaskEnd calls f with the id of each task another replica stores in a
// terminal state (TopicTaskEnd). f must not block.
func (c *Cluster) OnTaskEnd(f func(id string)) (cancel func()) {
	return c.Subscribe(TopicTaskEnd, func(_ string, body []byte) { f(string(body)) })
}

// OnPushConfigs calls f with the id of each task whose push configs
// another replica changed (TopicPush). f must not block.
func (c *Cluster) OnPushConfigs(f func(taskID string)) (cancel func()) {
	return c.Subscribe(TopicPush, func(_ string, body []byte) { f(string(body)) })
}
