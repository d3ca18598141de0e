package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentd/agentd/internal/store"
)

// PutMemory implements store.MemoryStore. Replacing a memory keeps its
// CreatedAt; zero timestamps mean now.
func (db *DB) PutMemory(ctx context.Context, m store.Memory) error {
	if m.Agent == "" || m.Key == "" {
		return errors.New("put memory: empty agent or key")
	}
	t := now()
	_, err := db.exec(ctx, len(m.Value), `INSERT INTO memories (agent, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		m.Agent, m.Key, m.Value, toDB(orNow(m.CreatedAt, t)), toDB(orNow(m.UpdatedAt, t)))
	return wrap(fmt.Sprintf("put memory %q of agent %q", m.Key, m.Agent), err)
}

// RecallMemory implements store.MemoryStore.
//
// Matching happens here (store.Memory.Matches) rather than in SQL: SQLite's
// LIKE and lower() fold only ASCII letters, and "case-insensitive" should
// hold for "Über" too.
// The rows stream newest first from the (agent, updated_at) index and the
// scan stops at limit, so the cost is one pass over the agent's memories at
// worst.
func (db *DB) RecallMemory(ctx context.Context, agent, query string, limit int) ([]store.Memory, error) {
	op := fmt.Sprintf("recall memory of agent %q", agent)
	q := "SELECT agent, key, value, created_at, updated_at FROM memories WHERE agent = ? ORDER BY updated_at DESC, key"
	args := []any{agent}
	if query == "" {
		q, args = limitOffset(q, args, limit, 0)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
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
	res, err := db.exec(ctx, 0, "DELETE FROM memories WHERE agent = ? AND key = ?", agent, key)
	if err == nil {
		err = rowsAffected(res)
	}
	return wrap(fmt.Sprintf("delete memory %q of agent %q", key, agent), err)
}

func scanMemory(r scanner) (store.Memory, error) {
	var m store.Memory
	var created, updated int64
	if err := r.Scan(&m.Agent, &m.Key, &m.Value, &created, &updated); err != nil {
		return store.Memory{}, err
	}
	m.CreatedAt, m.UpdatedAt = fromDB(created), fromDB(updated)
	return m, nil
}
