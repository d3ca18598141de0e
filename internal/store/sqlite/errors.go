package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentd/agentd/internal/store"

	sqlitedrv "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// wrap says what was being done when err happened and translates SQLite's
// failures into the store's sentinels or into an explanation an operator
// can act on. The driver's own message stays in the chain for details.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	var se *sqlitedrv.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("%s: %w", op, err)
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		// Only key collisions mean "already exists"; a failed CHECK or
		// NOT NULL is a bug and keeps its own message.
		return fmt.Errorf("%s: %w", op, store.ErrExists)
	}
	// SQLite's own messages ("database or disk is full", "file is not a
	// database", "disk I/O error") are clear; these two need the cause.
	var why string
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		why = "another process holds the database lock (busy timeout expired)"
	case sqlite3.SQLITE_READONLY:
		why = "database cannot be written (check the permissions of the file and its directory)"
	default:
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %s: %w", op, why, err)
}
