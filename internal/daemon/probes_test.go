package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestReadinessFollowsTheDatabase: on the PostgreSQL store, /readyz says
// ready, then not ready (503) within 5 s of its database refusing
// connections, naming what failed but no connection details, and ready
// again within 5 s of its return; /livez and /api/health answer 200
// throughout (a restart would not bring the database back).
func TestReadinessFollowsTheDatabase(t *testing.T) {
	dbURL := pgtest.Database(t, os.LookupEnv)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	admin := pgtest.Server(t, os.LookupEnv)
	_, srv := testDaemon(t, "listen = \"127.0.0.1:0\"\n\n[store]\nbackend = \"postgres\"\nurl_env = \"TEAM_DB_URL\"\n", map[string]string{"TEAM_DB_URL": dbURL})

	probe := func(path string) (int, Readiness, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r Readiness
		_ = json.Unmarshal(b, &r)
		return resp.StatusCode, r, string(b)
	}
	waitFor := func(want int, within time.Duration) Readiness {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			status, r, body := probe("/readyz")
			if status == want {
				for _, leak := range []string{u.Host, u.User.Username(), dbName} {
					if leak != "" && strings.Contains(body, leak) {
						t.Errorf("/readyz names %q: %s", leak, body)
					}
				}
				return r
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz still %d (%s) after %v, want %d", status, body, within, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if r := waitFor(http.StatusOK, 5*time.Second); r.Status != "ready" || r.Checks["store"] != "ok" {
		t.Fatalf("ready: %+v", r)
	}

	// The outage: the database takes no connections and drops the ones
	// it has, as a restarting or failed-over server does.
	exec := func(sql string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("ALTER DATABASE " + dbName + " ALLOW_CONNECTIONS false")
	exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + dbName + "' AND pid <> pg_backend_pid()")
	t.Cleanup(func() { exec("ALTER DATABASE " + dbName + " ALLOW_CONNECTIONS true") })
	start := time.Now()
	if r := waitFor(http.StatusServiceUnavailable, 5*time.Second); r.Status != "not_ready" || r.Checks["store"] != "unreachable" {
		t.Fatalf("during the outage: %+v", r)
	}
	t.Logf("not ready %v after the outage began", time.Since(start).Round(time.Millisecond))
	for _, p := range []string{"/livez", "/api/health"} {
		if status, _, body := probe(p); status != http.StatusOK {
			t.Errorf("%s during the outage: %d %s, want 200", p, status, body)
		}
	}

	exec("ALTER DATABASE " + dbName + " ALLOW_CONNECTIONS true")
	start = time.Now()
	waitFor(http.StatusOK, 5*time.Second)
	t.Logf("ready again %v after the database returned", time.Since(start).Round(time.Millisecond))
}
