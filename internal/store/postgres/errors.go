package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

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
	if u := unavailable(op, err); u != nil {
		return u
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

// SQLSTATEs of a server that is going away or not there yet.
const (
	adminShutdown    = "57P01" // pg_ctl stop -m fast, or a terminated backend
	crashShutdown    = "57P02"
	cannotConnectNow = "57P03" // starting up, or in recovery
)

// unavailableError is store.ErrUnavailable for one operation. Its text is
// the operation, the sentinel's words and a reason of agentd's own: pgx's
// own text names the user, the database and host:port (ConnectError), and
// edges show errors to clients, so the cause is kept out of Error and
// Unwrap (Cause has it, for logs).
type unavailableError struct {
	op, reason string
	notApplied bool // the request was certainly not applied
	cause      error
}

func (e *unavailableError) Error() string {
	return e.op + ": " + store.ErrUnavailable.Error() + " (" + e.reason + ")"
}
func (e *unavailableError) Unwrap() error     { return store.ErrUnavailable }
func (e *unavailableError) SafeToRetry() bool { return e.notApplied }

// Cause is the driver's error, which may name connection details: for
// the operator's logs only.
func (e *unavailableError) Cause() error { return e.cause }

// unavailable returns the store.ErrUnavailable error for err when err
// means the server cannot be reached now, else nil. A context's own end
// is not an outage: the caller gave up.
func unavailable(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		var ce *pgconn.ConnectError
		if !errors.As(err, &ce) {
			return nil
		}
	}
	u := &unavailableError{op: op, cause: err}
	var ce *pgconn.ConnectError
	var pe *pgconn.PgError
	var ne net.Error
	var errno syscall.Errno
	switch {
	case errors.As(err, &ce):
		// Connecting failed: no statement was sent.
		u.notApplied, u.reason = true, "cannot connect to the database"
		if errors.As(err, &pe) && pe.Code != cannotConnectNow && pe.Code != adminShutdown && pe.Code != tooManyConnections {
			return nil // refused for a reason no retry fixes (auth, no such database)
		}
		if errors.As(err, &errno) {
			u.reason += ": " + errno.Error()
		}
	case errors.As(err, &pe):
		switch {
		case pe.Code == adminShutdown || pe.Code == crashShutdown:
			// The server ended the session: the error is the answer to
			// this statement, so the statement was not committed (a
			// commit that completes is answered before the session
			// ends). A pooled connection idle for less than a second is
			// used without a ping, so this is how the first statement
			// after a fast shutdown fails: safe to retry.
			u.notApplied, u.reason = true, "the database server is shutting down"
		case pe.Code == cannotConnectNow:
			u.notApplied, u.reason = true, "the database server is starting up"
		case len(pe.Code) == 5 && pe.Code[:2] == "08": // connection_exception
			u.reason = "the connection to the database failed"
		default:
			return nil
		}
	case pgconn.SafeToRetry(err):
		u.notApplied, u.reason = true, "the connection to the database was lost"
	case errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &ne), errors.As(err, &errno):
		u.reason = "the connection to the database was lost"
	default:
		return nil
	}
	return u
}
