package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

const keyColumns = "id, principal, label, hash, created_at, created_by, revoked_at, revoked_by"

// CreateAPIKey implements store.KeyStore; a zero CreatedAt means now.
func (db *DB) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	if k.ID == "" || k.Principal == "" {
		return errors.New("create api key: empty id or principal")
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO api_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, NULL, '')`,
		k.ID, k.Principal, k.Label, k.Hash[:], orNow(k.CreatedAt, now()), k.CreatedBy)
	return wrap(fmt.Sprintf("create api key %q", k.ID), err)
}

// LiveAPIKey implements store.KeyStore.
func (db *DB) LiveAPIKey(ctx context.Context, hash [32]byte) (store.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE hash = $1 AND revoked_at IS NULL", hash[:]))
	return k, wrap("look up api key", err)
}

// GetAPIKey implements store.KeyStore.
func (db *DB) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE id = $1", id))
	return k, wrap(fmt.Sprintf("get api key %q", id), err)
}

// ListAPIKeys implements store.KeyStore.
func (db *DB) ListAPIKeys(ctx context.Context, principal string) ([]store.APIKey, error) {
	const op = "list api keys"
	var args []any
	q := "SELECT " + keyColumns + " FROM api_keys"
	if principal != "" {
		q += " WHERE principal = " + param(&args, principal)
	}
	rows, err := db.pool.Query(ctx, q+" ORDER BY created_at DESC, id", args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanKey)
	return out, wrap(op, err)
}

// RevokeAPIKey implements store.KeyStore: one statement, so two replicas
// revoking the same key at once see one succeed and the other ErrNotFound.
func (db *DB) RevokeAPIKey(ctx context.Context, id, by string, at time.Time) (store.APIKey, error) {
	k, err := scanKey(db.pool.QueryRow(ctx, "UPDATE api_keys SET revoked_at = $1, revoked_by = $2 WHERE id = $3 AND revoked_at IS NULL RETURNING "+keyColumns,
		orNow(at, now()), by, id))
	return k, wrap(fmt.Sprintf("revoke api key %q", id), err)
}

func scanKey(r pgx.Row) (store.APIKey, error) {
	var k store.APIKey
	var hash []byte
	var created time.Time
	var revoked *time.Time
	if err := r.Scan(&k.ID, &k.Principal, &k.Label, &hash, &created, &k.CreatedBy, &revoked, &k.RevokedBy); err != nil {
		return store.APIKey{}, err
	}
	copy(k.Hash[:], hash)
	k.CreatedAt = created.UTC()
	if revoked != nil {
		k.RevokedAt = revoked.UTC()
	}
	return k, nil
}
