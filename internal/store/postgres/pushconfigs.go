package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

const pushConfigColumns = "task_id, id, config, created_at"

// PutPushConfig implements store.PushConfigStore; a zero CreatedAt means
// now. Replacing a config keeps its CreatedAt and its seq, hence its place
// in lists. The replicas hear of it (TopicPush), as of deletes: each keeps
// the configs of the tasks it runs in memory.
func (db *DB) PutPushConfig(ctx context.Context, c store.PushConfig) error {
	if c.TaskID == "" || c.ID == "" {
		return errors.New("put push config: empty task id or config id")
	}
	_, err := db.execNotify(ctx, TopicPush, c.TaskID, `INSERT INTO push_configs (`+pushConfigColumns+`) VALUES ($1, $2, $3, $4)
		ON CONFLICT (task_id, id) DO UPDATE SET config = excluded.config`,
		c.TaskID, c.ID, jsonArg(c.Config), orNow(c.CreatedAt, now()))
	// The ids are the client's and may be long or odd; %q keeps the
	// message on one line. The config itself never goes into an error.
	return wrap(fmt.Sprintf("put push config %q of task %q", c.ID, c.TaskID), err)
}

// GetPushConfig implements store.PushConfigStore.
func (db *DB) GetPushConfig(ctx context.Context, taskID, id string) (store.PushConfig, error) {
	c, err := scanPushConfig(db.pool.QueryRow(ctx,
		"SELECT "+pushConfigColumns+" FROM push_configs WHERE task_id = $1 AND id = $2", taskID, id))
	if err != nil {
		return store.PushConfig{}, wrap(fmt.Sprintf("get push config %q of task %q", id, taskID), err)
	}
	return c, nil
}

// ListPushConfigs implements store.PushConfigStore.
func (db *DB) ListPushConfigs(ctx context.Context, taskID string) ([]store.PushConfig, error) {
	op := fmt.Sprintf("list push configs of task %q", taskID)
	rows, err := db.pool.Query(ctx,
		"SELECT "+pushConfigColumns+" FROM push_configs WHERE task_id = $1 ORDER BY created_at, seq", taskID)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanPushConfig)
	return out, wrap(op, err)
}

// AllPushConfigs implements store.PushConfigStore.
func (db *DB) AllPushConfigs(ctx context.Context) ([]store.PushConfig, error) {
	const op = "list push configs"
	rows, err := db.pool.Query(ctx, "SELECT "+pushConfigColumns+" FROM push_configs ORDER BY created_at, seq")
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanPushConfig)
	return out, wrap(op, err)
}

// DeletePushConfig implements store.PushConfigStore.
func (db *DB) DeletePushConfig(ctx context.Context, taskID, id string) error {
	return wrap(fmt.Sprintf("delete push config %q of task %q", id, taskID),
		notFound(db.execNotify(ctx, TopicPush, taskID, "DELETE FROM push_configs WHERE task_id = $1 AND id = $2", taskID, id)))
}

// DeletePushConfigs implements store.PushConfigStore.
func (db *DB) DeletePushConfigs(ctx context.Context, taskID string) (int, error) {
	tag, err := db.execNotify(ctx, TopicPush, taskID, "DELETE FROM push_configs WHERE task_id = $1", taskID)
	if err != nil {
		return 0, wrap(fmt.Sprintf("delete push configs of task %q", taskID), err)
	}
	return int(tag.RowsAffected()), nil
}

func scanPushConfig(r pgx.Row) (store.PushConfig, error) {
	var c store.PushConfig
	var created time.Time
	if err := r.Scan(&c.TaskID, &c.ID, (*[]byte)(&c.Config), &created); err != nil {
		return store.PushConfig{}, err
	}
	c.CreatedAt = created.UTC()
	return c, nil
}
