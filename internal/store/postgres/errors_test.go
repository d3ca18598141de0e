package postgres_test

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestUnavailableErrors checks how driver errors that mean "the database
// is not there now" are translated: store.ErrUnavailable, safe to retry
// only when nothing was sent, and a text that names no user, database,
// host or port (edges show it to clients). Errors no retry fixes (a
// database that does not exist) stay what they were.
func TestUnavailableErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close() // nothing listens there now: connection refused
	_, refused := pgconn.Connect(t.Context(), "postgres://secretuser@127.0.0.1:"+port+"/secretdb?sslmode=disable&connect_timeout=5")
	var ce *pgconn.ConnectError
	if !errors.As(refused, &ce) {
		t.Fatalf("connecting to a closed port: %v, want a ConnectError", refused)
	}
	tests := []struct {
		name        string
		err         error
		unavailable bool
		safe        bool
	}{
		{"connection refused", refused, true, true},
		{"server shutting down", &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}, true, true},
		{"server starting up", &pgconn.PgError{Severity: "FATAL", Code: "57P03", Message: "the database system is starting up"}, true, true},
		{"connection exception", &pgconn.PgError{Severity: "FATAL", Code: "08006", Message: "connection failure"}, true, false},
		{"connection lost mid-statement", fmt.Errorf("read: %w", net.ErrClosed), true, false},
		{"no rows", pgx.ErrNoRows, false, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := postgres.Wrap(`append to session "s1"`, tt.err)
			if errors.Is(got, store.ErrUnavailable) != tt.unavailable {
				t.Fatalf("wrap(%v) = %v; unavailable = %v, want %v", tt.err, got, !tt.unavailable, tt.unavailable)
			}
			if store.SafeToRetry(got) != tt.safe {
				t.Errorf("SafeToRetry(%v) = %v, want %v", got, !tt.safe, tt.safe)
			}
			if !tt.unavailable {
				return
			}
			msg := got.Error()
			for _, secret := range []string{"secretuser", "secretdb", port, "127.0.0.1", "user=", "database="} {
				if strings.Contains(msg, secret) {
					t.Errorf("%q names %q", msg, secret)
				}
			}
			if !strings.HasPrefix(msg, `append to session "s1": store unavailable, retry (`) {
				t.Errorf("message %q does not say what failed and that it is transient", msg)
			}
		})
	}

	// A server that answers but refuses for a reason no retry fixes.
	u, err := url.Parse(pgtest.Server(t, os.LookupEnv))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_database_here"
	_, noDB := pgconn.Connect(t.Context(), u.String())
	if noDB == nil {
		t.Fatal("connected to a database that does not exist")
	}
	if got := postgres.Wrap("open", noDB); errors.Is(got, store.ErrUnavailable) {
		t.Errorf("a missing database is %v, want an error no retry is promised to fix", got)
	}
}
