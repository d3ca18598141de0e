package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentd/agentd/internal/store"
)

// PutMCPServer implements store.MCPServerStore. Replacing a registration
// keeps its CreatedAt; a zero CreatedAt means now.
func (db *DB) PutMCPServer(ctx context.Context, s store.MCPServer) error {
	if s.Name == "" {
		return errors.New("put mcp server: empty name")
	}
	_, err := db.exec(ctx, len(s.Config), `INSERT INTO mcp_servers (name, config, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET config = excluded.config`,
		s.Name, jsonToDB(s.Config), toDB(orNow(s.CreatedAt, now())))
	return wrap(fmt.Sprintf("put mcp server %q", s.Name), err)
}

// ListMCPServers implements store.MCPServerStore; servers come ordered by
// name.
func (db *DB) ListMCPServers(ctx context.Context) ([]store.MCPServer, error) {
	const op = "list mcp servers"
	rows, err := db.r.QueryContext(ctx, "SELECT name, config, created_at FROM mcp_servers ORDER BY name")
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, func(r scanner) (store.MCPServer, error) {
		var s store.MCPServer
		var created int64
		if err := r.Scan(&s.Name, (*[]byte)(&s.Config), &created); err != nil {
			return store.MCPServer{}, err
		}
		s.CreatedAt = fromDB(created)
		return s, nil
	})
	return out, wrap(op, err)
}

// DeleteMCPServer implements store.MCPServerStore.
func (db *DB) DeleteMCPServer(ctx context.Context, name string) error {
	res, err := db.exec(ctx, 0, "DELETE FROM mcp_servers WHERE name = ?", name)
	if err == nil {
		err = rowsAffected(res)
	}
	return wrap(fmt.Sprintf("delete mcp server %q", name), err)
}
