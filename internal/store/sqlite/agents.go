package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentd/agentd/internal/store"
)

// PutAgent implements store.AgentStore. Replacing an agent keeps its
// CreatedAt; zero timestamps mean now.
func (db *DB) PutAgent(ctx context.Context, a store.Agent) error {
	op := fmt.Sprintf("put agent %q", a.Name)
	if a.Name == "" {
		return errors.New("put agent: empty name")
	}
	t := now()
	_, err := db.exec(ctx, len(a.Manifest), `INSERT INTO agents (name, manifest, created_at, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET manifest = excluded.manifest, updated_at = excluded.updated_at`,
		a.Name, jsonToDB(a.Manifest), toDB(orNow(a.CreatedAt, t)), toDB(orNow(a.UpdatedAt, t)))
	return wrap(op, err)
}

// GetAgent implements store.AgentStore.
func (db *DB) GetAgent(ctx context.Context, name string) (store.Agent, error) {
	a, err := scanAgent(db.r.QueryRowContext(ctx, "SELECT name, manifest, created_at, updated_at FROM agents WHERE name = ?", name))
	if err != nil {
		return store.Agent{}, wrap(fmt.Sprintf("get agent %q", name), err)
	}
	return a, nil
}

// ListAgents implements store.AgentStore; agents come ordered by name.
func (db *DB) ListAgents(ctx context.Context) ([]store.Agent, error) {
	const op = "list agents"
	rows, err := db.r.QueryContext(ctx, "SELECT name, manifest, created_at, updated_at FROM agents ORDER BY name")
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanAgent)
	return out, wrap(op, err)
}

// DeleteAgent implements store.AgentStore.
func (db *DB) DeleteAgent(ctx context.Context, name string) error {
	res, err := db.exec(ctx, 0, "DELETE FROM agents WHERE name = ?", name)
	if err == nil {
		err = rowsAffected(res)
	}
	return wrap(fmt.Sprintf("delete agent %q", name), err)
}

func scanAgent(r scanner) (store.Agent, error) {
	var a store.Agent
	var created, updated int64
	if err := r.Scan(&a.Name, (*[]byte)(&a.Manifest), &created, &updated); err != nil {
		return store.Agent{}, err
	}
	a.CreatedAt, a.UpdatedAt = fromDB(created), fromDB(updated)
	return a, nil
}
