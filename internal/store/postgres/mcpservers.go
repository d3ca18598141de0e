package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

// PutMCPServer implements store.MCPServerStore. Replacing a registration
// keeps its CreatedAt; a zero CreatedAt means now. The replicas hear of
// it (TopicMCPServer), as of a delete.
func (db *DB) PutMCPServer(ctx context.Context, s store.MCPServer) error {
	if s.Name == "" {
		return errors.New("put mcp server: empty name")
	}
	_, err := db.execNotify(ctx, TopicMCPServer, s.Name, `INSERT INTO mcp_servers (name, config, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET config = excluded.config`,
		s.Name, jsonArg(s.Config), orNow(s.CreatedAt, now()))
	return wrap(fmt.Sprintf("put mcp server %q", s.Name), err)
}

// ListMCPServers implements store.MCPServerStore; servers come ordered by
// name.
func (db *DB) ListMCPServers(ctx context.Context) ([]store.MCPServer, error) {
	const op = "list mcp servers"
	rows, err := db.pool.Query(ctx, "SELECT name, config, created_at FROM mcp_servers ORDER BY name")
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, func(r pgx.Row) (store.MCPServer, error) {
		var s store.MCPServer
		var created time.Time
		if err := r.Scan(&s.Name, (*[]byte)(&s.Config), &created); err != nil {
			return store.MCPServer{}, err
		}
		s.CreatedAt = created.UTC()
		return s, nil
	})
	return out, wrap(op, err)
}

// DeleteMCPServer implements store.MCPServerStore.
func (db *DB) DeleteMCPServer(ctx context.Context, name string) error {
	return wrap(fmt.Sprintf("delete mcp server %q", name), notFound(db.execNotify(ctx, TopicMCPServer, name, "DELETE FROM mcp_servers WHERE name = $1", name)))
}
