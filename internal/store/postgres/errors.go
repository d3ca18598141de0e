package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentd/agentd/internal/store"
)

// SQLSTATE codes the store translates
// (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const (
	uniqueViolation          = "23505"
	characterNotInRepertoire = "22021" // invalid UTF-8, or a NUL byte in text
	untranslatableCharacter  = "22P05"
	invalidJSONText          = "22P02" // invalid_text_representation, which json raises
	insufficientPrivilege    = "42501"
	undefinedTable           = "42P01"
	readOnlyTransaction      = "25006"
	diskFull                 = "53100"
	tooManyConnections       = "53300"
)

// wrap says what was being done when err happened and translates
// PostgreSQL's failures into the store's sentinels or into an explanation
// an operator can act on. The server's own message stays in the chain.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", op, err)
	}
	var why string
	switch pe.Code {
	case uniqueViolation:
		// Only key collisions mean "already exists"; a failed CHECK or
		// NOT NULL is a bug and keeps its own message.
		return fmt.Errorf("%s: %w", op, store.ErrExists)
	case characterNotInRepertoire, untranslatableCharacter:
		why = "a name or id holds a NUL byte or text that is not UTF-8, which PostgreSQL cannot store"
	case invalidJSONText:
		why = "a payload is not valid JSON"
	case insufficientPrivilege:
		why = "the database role lacks a privilege (it needs to own agentd's tables, or CREATE on the schema to make them)"
	case undefinedTable:
		why = "agentd's tables are missing (was the schema dropped, or does search_path differ between connections?)"
	case readOnlyTransaction:
		why = "the server is read-only (a standby? point the URL at the primary)"
	case diskFull:
		why = "the database server's disk is full"
	case tooManyConnections:
		why = "the server refuses more connections (lower pool_max_conns in the URL, or raise max_connections)"
	default:
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %s: %w", op, why, err)
}
