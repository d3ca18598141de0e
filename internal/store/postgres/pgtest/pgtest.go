// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// database per test, created on the server the environment names and
// dropped when the test ends, so that tests and concurrent `go test` runs
// never see each other's rows.
//
// The server is AGENTD_TEST_POSTGRES_URL (scripts/postgres.sh provisions
// one for `make test` and prints it); without it, a server on
// 127.0.0.1:5432 that accepts user postgres without a password, if one
// answers. Otherwise tests skip, except in CI (CI or AGENTD_INTEROP=1
// set), where a missing server fails them: CI must not pass by skipping.
//
// Tests pass their environment in (os.LookupEnv), so that this package,
// like everything outside internal/config, reads none itself.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// URLEnv names the variable holding the test server's URL, of a database
// the tests may connect to as a role that may create databases.
const URLEnv = "AGENTD_TEST_POSTGRES_URL"

// DefaultURL is tried when URLEnv is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// LookupEnv is os.LookupEnv's signature.
type LookupEnv func(string) (string, bool)

// Server returns the URL of the test server, skipping t (failing it in
// CI) when there is none.
func Server(t testing.TB, env LookupEnv) string {
	t.Helper()
	u, err := server(t.Context(), env)
	if err != nil {
		if inCI(env) {
			t.Fatalf("PostgreSQL for tests: %v (CI or AGENTD_INTEROP=1 is set, so this fails rather than skips; run scripts/postgres.sh or set %s)", err, URLEnv)
		}
		t.Skipf("PostgreSQL for tests: %v (set %s, or run scripts/postgres.sh)", err, URLEnv)
	}
	return u
}

// inCI reports whether a missing server must fail tests.
func inCI(env LookupEnv) bool {
	ci, _ := env("CI")
	interop, _ := env("AGENTD_INTEROP")
	return (ci != "" && ci != "0" && ci != "false") || interop == "1"
}

// reachable caches the default server's probe for the whole test binary.
var reachable struct {
	once sync.Once
	err  error
}

func server(ctx context.Context, env LookupEnv) (string, error) {
	if u, ok := env(URLEnv); ok && u != "" {
		return u, nil
	}
	reachable.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, DefaultURL)
		if err != nil {
			reachable.err = fmt.Errorf("%s is unset and no server answers at %s: %w", URLEnv, DefaultURL, err)
			return
		}
		reachable.err = conn.Close(ctx)
	})
	return DefaultURL, reachable.err
}

// Database creates a database named agentd_test_<random> on the test
// server and returns its URL; it is dropped, with any connection left to
// it, when t ends.
func Database(t testing.TB, env LookupEnv) string {
	t.Helper()
	admin := Server(t, env)
	name := "agentd_test_" + random(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		// FORCE: a test that failed half way may have left a pool open.
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u, err := WithDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	return fast(u)
}

// Schema creates a schema named s_<random> in the database at dbURL and
// returns a URL whose connections use it (search_path): a fresh, empty
// store within one database, much cheaper than a database of its own.
// It goes when the database is dropped.
func Schema(t testing.TB, dbURL string) string {
	t.Helper()
	name := "s_" + random(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create test schema: %v", err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("test database URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// fast makes a test database's connections commit without waiting for
// the WAL flush: tests need no durability, and a flush per commit made
// the contract suite several times slower. Semantics are unchanged.
func fast(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return dbURL
	}
	q := u.Query()
	if !q.Has("synchronous_commit") {
		q.Set("synchronous_commit", "off")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// WithDatabase returns serverURL with its database replaced by name.
func WithDatabase(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("%s must be a postgres:// URL", URLEnv)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// random returns 12 lower-case hex digits: a name part that is a valid
// SQL identifier without quoting.
func random(t testing.TB) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(hex.EncodeToString(b[:]))
}
