package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrationFiles holds the schema history: NNNN_description.sql, numbered
// from 0001 without gaps. A released file is never edited; a change to the
// schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the first key of the advisory lock migrations hold
// ("agentd" in ASCII, to stay clear of other applications' locks); the
// second is a hash of the schema, so installations in different schemas
// of one database do not wait for each other.
const migrationLock = 0x61676e74

// migration is one numbered schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads fsys's migrations/*.sql in version order and checks
// that the versions run 1, 2, 3... without gaps or duplicates.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	ms := make([]migration, 0, len(names))
	for _, name := range names { // Glob sorts, and versions are zero-padded
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || len(num) != 4 {
			return nil, fmt.Errorf("migration %s: name is not NNNN_description.sql", base)
		}
		if want := len(ms) + 1; v != want {
			return nil, fmt.Errorf("migration %s: version %d, want %d", base, v, want)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", base, err)
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)})
	}
	return ms, nil
}

// LatestVersion is the schema version this build of agentd migrates to.
func LatestVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return 0 // a broken embed; migrate reports it
	}
	return len(ms)
}

// migrate applies the migrations the database has not seen, all in one
// transaction: a failure leaves the schema as it was. The transaction
// first takes an advisory lock, held until it ends, so that replicas
// starting at once apply each migration once: the others wait, then find
// nothing left to do. (CREATE TABLE IF NOT EXISTS alone is not safe
// against a concurrent twin; it can fail on the catalog's unique index.)
func (db *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var schema *string
		var encoding string
		if err := tx.QueryRow(ctx, "SELECT current_schema(), current_setting('server_encoding')").Scan(&schema, &encoding); err != nil {
			return fmt.Errorf("read current schema: %w", err)
		}
		if encoding != "UTF8" && encoding != "SQL_ASCII" {
			// Names and ids are text; in another encoding, characters it
			// lacks fail their writes.
			db.log.Warn("database encoding is not UTF8: names outside it will be refused", "encoding", encoding)
		}
		if schema == nil {
			return errors.New("no schema to create tables in: the search_path names no existing schema")
		}
		db.channel = channelFor(*schema)
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", migrationLock, *schema); err != nil {
			return fmt.Errorf("wait for the migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL
		)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if current > len(ms) {
			return fmt.Errorf("database schema version %d is newer than this agentd supports (%d): upgrade agentd", current, len(ms))
		}
		for _, m := range ms[current:] {
			// No arguments: the simple protocol runs the file's several
			// statements in one go.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
				m.version, m.name, now()); err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
			db.log.Info("applied database migration", "version", m.version, "name", m.name, "schema", *schema)
		}
		return nil
	})
	if err != nil {
		// Not wrap: no failure here is a caller's ErrExists or ErrNotFound,
		// and the server's message is what an operator needs.
		return fmt.Errorf("migrate schema: %w", err)
	}
	return nil
}
