package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

const agentColumns = "name, manifest, created_at, updated_at"

// PutAgent implements store.AgentStore. Replacing an agent keeps its
// CreatedAt; zero timestamps mean now. The replicas hear of it
// (TopicAgent), as of a delete.
func (db *DB) PutAgent(ctx context.Context, a store.Agent) error {
	if a.Name == "" {
		return errors.New("put agent: empty name")
	}
	t := now()
	_, err := db.execNotify(ctx, TopicAgent, a.Name, `INSERT INTO agents (`+agentColumns+`) VALUES ($1, $2, $3, $4)
		ON CONFLICT (name) DO UPDATE SET manifest = excluded.manifest, updated_at = excluded.updated_at`,
		a.Name, jsonArg(a.Manifest), orNow(a.CreatedAt, t), orNow(a.UpdatedAt, t))
	return wrap(fmt.Sprintf("put agent %q", a.Name), err)
}

// GetAgent implements store.AgentStore.
func (db *DB) GetAgent(ctx context.Context, name string) (store.Agent, error) {
	a, err := scanAgent(db.pool.QueryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE name = $1", name))
	if err != nil {
		return store.Agent{}, wrap(fmt.Sprintf("get agent %q", name), err)
	}
	return a, nil
}

// ListAgents implements store.AgentStore; agents come ordered by name.
func (db *DB) ListAgents(ctx context.Context) ([]store.Agent, error) {
	const op = "list agents"
	rows, err := db.pool.Query(ctx, "SELECT "+agentColumns+" FROM agents ORDER BY name")
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanAgent)
	return out, wrap(op, err)
}

// DeleteAgent implements store.AgentStore.
func (db *DB) DeleteAgent(ctx context.Context, name string) error {
	return wrap(fmt.Sprintf("delete agent %q", name), notFound(db.execNotify(ctx, TopicAgent, name, "DELETE FROM agents WHERE name = $1", name)))
}

func scanAgent(r pgx.Row) (store.Agent, error) {
	var a store.Agent
	var created, updated time.Time
	if err := r.Scan(&a.Name, (*[]byte)(&a.Manifest), &created, &updated); err != nil {
		return store.Agent{}, err
	}
	a.CreatedAt, a.UpdatedAt = created.UTC(), updated.UTC()
	return a, nil
}
