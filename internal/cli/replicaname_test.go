package cli

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestStartListenNamesTheReplica: `agentd start --listen ADDR` on
// PostgreSQL names the replica after ADDR's port, not the config file's
// listen (three replicas on one host were all named host:4200), and
// /api/health shows it.
func TestStartListenNamesTheReplica(t *testing.T) {
	dbURL := pgtest.Database(t, os.LookupEnv)
	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	t.Setenv("TEAM_DB_URL", dbURL)
	cfgPath := filepath.Join(home, "config.toml")
	if err := os.WriteFile(cfgPath, []byte("listen = \"127.0.0.1:4200\"\n[store]\nbackend = \"postgres\"\nurl_env = \"TEAM_DB_URL\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var out, errb strings.Builder
	go func() {
		done <- Main(ctx, []string{"start", "--config", cfgPath, "--listen", addr}, strings.NewReader(""), &out, &errb)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the daemon did not stop")
		}
	}()

	var health struct {
		Replica string `json:"replica"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/api/health")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&health)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case code := <-done:
			t.Fatalf("start exited %d: %s", code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no health answer on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	host, _ := os.Hostname()
	if want := host + ":" + port + "-"; !strings.HasPrefix(health.Replica, want) {
		t.Errorf("replica %q, want a name starting %q (the --listen port)", health.Replica, want)
	}
}
