package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// SessionKey returns the key that seals MCP session ids when the
// operator configures none: 32 random bytes made by the first replica
// that asks and kept in cluster_keys, so that every replica reads the
// same. Whoever can read that table can forge session ids (but not
// credentials: a session is still bound to the principal that opened
// it); configure [cluster] session_key_env to keep the key out of the
// database.
func (c *Cluster) SessionKey(ctx context.Context) ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	var stored []byte
	var err error
	// A replica inserting at the same moment commits after this
	// statement's snapshot: its key is then read by a second statement.
	for range 2 {
		err = c.db.pool.QueryRow(ctx, `WITH i AS (
				INSERT INTO cluster_keys (id, key, created_at) VALUES (1, $1, now()) ON CONFLICT (id) DO NOTHING RETURNING key
			)
			SELECT key FROM i UNION ALL SELECT key FROM cluster_keys WHERE id = 1 LIMIT 1`, key).Scan(&stored)
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return nil, wrap("read the MCP session key", err)
	}
	return stored, nil
}

// EndSession records that the MCP session of idHash ended, until expires.
func (c *Cluster) EndSession(ctx context.Context, idHash []byte, expires time.Time) error {
	_, err := c.db.pool.Exec(ctx, `INSERT INTO mcp_session_ends (id_hash, expires_at) VALUES ($1, $2)
		ON CONFLICT (id_hash) DO NOTHING`, idHash, expires)
	return wrap("record the end of an MCP session", err)
}

// SessionEnded reports whether the MCP session of idHash was ended.
func (c *Cluster) SessionEnded(ctx context.Context, idHash []byte) (bool, error) {
	var one int
	err := c.db.pool.QueryRow(ctx, "SELECT 1 FROM mcp_session_ends WHERE id_hash = $1", idHash).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, wrap("look up the end of an MCP session", err)
	}
	return true, nil
}
