package daemon

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/internal/config"
)

// testDaemon writes toml as a fresh AGENTD_HOME's config.toml, loads it
// with env as the whole environment, builds the daemon and serves its
// handler on loopback; both are closed when the test ends.
func testDaemon(t testing.TB, toml string, env map[string]string) (*Daemon, *httptest.Server) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler())
	t.Cleanup(func() {
		srv.Close()
		d.Close()
	})
	return d, srv
}
