package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

// PutMemory implements store.MemoryStore. Replacing a memory keeps its
// CreatedAt; zero timestamps mean now.
func (db *DB) PutMemory(ctx context.Context, m store.Memory) error {
	if m.Agent == "" || m.Key == "" {
		return errors.New("put memory: empty agent or key")
	}
	t := now()
	_, err := db.pool.Exec(ctx, `INSERT INTO memories (agent, key, value, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (agent, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		m.Agent, textArg(m.Key), textArg(m.Value), orNow(m.CreatedAt, t), orNow(m.UpdatedAt, t))
	return wrap(fmt.Sprintf("put memory %q of agent %q", m.Key, m.Agent), err)
}

// RecallMemory implements store.MemoryStore.
//
// Matching happens in Go (store.Memory.Matches), as in the SQLite backend,
// so that both fold case alike; keys and values are bytea besides. Rows
// come newest first from the (agent, updated_at) index; without a query
// LIMIT bounds them in SQL, with one the whole agent's memory is read
// (pgx drains a result even when the loop stops early), which is fine for
// the few hundred facts an agent keeps.
func (db *DB) RecallMemory(ctx context.Context, agent, query string, limit int) ([]store.Memory, error) {
	op := fmt.Sprintf("recall memory of agent %q", agent)
	q := "SELECT agent, key, value, created_at, updated_at FROM memories WHERE agent = $1 ORDER BY updated_at DESC, key"
	args := []any{agent}
	if query == "" {
		q += " LIMIT $2"
		args = append(args, limitArg(limit))
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	var out []store.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, wrap(op, err)
		}
		if !m.Matches(query) {
			continue
		}
		out = append(out, m)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(op, err)
	}
	return out, nil
}

// DeleteMemory implements store.MemoryStore.
func (db *DB) DeleteMemory(ctx context.Context, agent, key string) error {
	return wrap(fmt.Sprintf("delete memory %q of agent %q", key, agent),
		notFound(db.pool.Exec(ctx, "DELETE FROM memories WHERE agent = $1 AND key = $2", agent, textArg(key))))
}

func scanMemory(r pgx.Row) (store.Memory, error) {
	var m store.Memory
	var key, value []byte
	var created, updated time.Time
	if err := r.Scan(&m.Agent, &key, &value, &created, &updated); err != nil {
		return store.Memory{}, err
	}
	m.Key, m.Value = string(key), string(value)
	m.CreatedAt, m.UpdatedAt = created.UTC(), updated.UTC()
	return m, nil
}
