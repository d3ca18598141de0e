package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// migrationFiles holds the schema history: NNNN_description.sql, numbered
// from 0001 without gaps. A released file is never edited; a change to the
// schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

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

// migrate applies the migrations the database has not seen, all in one
// transaction: a failure leaves the schema as it was, and a second agentd
// opening the same file waits for the first instead of racing it.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	err = db.write(ctx, 0, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER NOT NULL PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at INTEGER NOT NULL
		) STRICT`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if current > len(ms) {
			return fmt.Errorf("database schema version %d is newer than this agentd supports (%d): upgrade agentd", current, len(ms))
		}
		for _, m := range ms[current:] {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.version, m.name, toDB(now())); err != nil {
				return fmt.Errorf("record migration %s: %w", m.name, err)
			}
			db.log.Info("applied database migration", "version", m.version, "name", m.name)
		}
		// user_version mirrors the table for tools that only look at the
		// file header (the sqlite3 shell's .dbinfo). PRAGMA takes no
		// parameters; the value is an int.
		if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(len(ms))); err != nil {
			return fmt.Errorf("set user_version: %w", err)
		}
		return nil
	})
	if err != nil {
		return wrap("migrate schema", err)
	}
	return nil
}
