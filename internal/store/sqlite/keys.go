package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentd/agentd/internal/store"
)

const keyColumns = "id, principal, label, hash, created_at, created_by, revoked_at, revoked_by"

// CreateAPIKey implements store.KeyStore; a zero CreatedAt means now.
func (db *DB) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	if k.ID == "" || k.Principal == "" {
		return errors.New("create api key: empty id or principal")
	}
	_, err := db.exec(ctx, len(k.Label), `INSERT INTO api_keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, 0, '')`,
		k.ID, k.Principal, k.Label, k.Hash[:], toDB(orNow(k.CreatedAt, now())), k.CreatedBy)
	return wrap(fmt.Sprintf("create api key %q", k.ID), err)
}

// LiveAPIKey implements store.KeyStore.
func (db *DB) LiveAPIKey(ctx context.Context, hash [32]byte) (store.APIKey, error) {
	k, err := scanKey(db.r.QueryRowContext(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE hash = ? AND revoked_at = 0", hash[:]))
	return k, wrap("look up api key", err)
}

// GetAPIKey implements store.KeyStore.
func (db *DB) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	k, err := scanKey(db.r.QueryRowContext(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE id = ?", id))
	return k, wrap(fmt.Sprintf("get api key %q", id), err)
}

// ListAPIKeys implements store.KeyStore.
func (db *DB) ListAPIKeys(ctx context.Context, principal string) ([]store.APIKey, error) {
	const op = "list api keys"
	q, args := "SELECT "+keyColumns+" FROM api_keys", []any{}
	if principal != "" {
		q += " WHERE principal = ?"
		args = append(args, principal)
	}
	rows, err := db.r.QueryContext(ctx, q+" ORDER BY created_at DESC, id", args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	out, err := collect(rows, scanKey)
	return out, wrap(op, err)
}

// RevokeAPIKey implements store.KeyStore.
func (db *DB) RevokeAPIKey(ctx context.Context, id, by string, at time.Time) (store.APIKey, error) {
	var k store.APIKey
	at = orNow(at, now())
	err := db.write(ctx, 0, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE api_keys SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at = 0", toDB(at), by, id)
		if err != nil {
			return err
		}
		if err := rowsAffected(res); err != nil {
			return err
		}
		k, err = scanKey(tx.QueryRowContext(ctx, "SELECT "+keyColumns+" FROM api_keys WHERE id = ?", id))
		return err
	})
	return k, wrap(fmt.Sprintf("revoke api key %q", id), err)
}

func scanKey(r scanner) (store.APIKey, error) {
	var k store.APIKey
	var hash []byte
	var created, revoked int64
	if err := r.Scan(&k.ID, &k.Principal, &k.Label, &hash, &created, &k.CreatedBy, &revoked, &k.RevokedBy); err != nil {
		return store.APIKey{}, err
	}
	copy(k.Hash[:], hash)
	k.CreatedAt = fromDB(created)
	if revoked != 0 {
		k.RevokedAt = fromDB(revoked)
	}
	return k, nil
}
