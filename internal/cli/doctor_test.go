package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestDoctorPostgres: with [store] backend = "postgres", doctor reports
// the variable, the connection and the schema version, changes nothing,
// and fails when the database cannot be used.
func TestDoctorPostgres(t *testing.T) {
	db := pgtest.Database(t, os.LookupEnv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	file := filepath.Join(home, "config.toml")
	body := fmt.Sprintf("listen = %q\n\n[store]\nbackend = \"postgres\"\nurl_env = \"DOCTOR_DB_URL\"\n", freeAddr(t))
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	doctor := func(t *testing.T) (int, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"--config", file, "doctor"}, strings.NewReader(""), &out, &errb)
		return code, out.String() + errb.String()
	}
	storeLine := func(out string) string {
		for line := range strings.SplitSeq(out, "\n") {
			if strings.Contains(line, "] store") {
				return line
			}
		}
		return ""
	}
	latest := postgres.LatestVersion()

	t.Run("Fresh", func(t *testing.T) {
		t.Setenv("DOCTOR_DB_URL", db)
		code, out := doctor(t)
		line := storeLine(out)
		if code != 0 || !strings.HasPrefix(line, "[ok  ]") || !strings.Contains(line, fmt.Sprintf("no tables yet (agentd start creates schema version %d)", latest)) {
			t.Fatalf("exit %d, store line %q\n%s", code, line, out)
		}
		// Doctor changed nothing: still no tables.
		st, err := postgres.Check(t.Context(), db, 0)
		if err != nil || st.Version != 0 {
			t.Errorf("after doctor: %+v, %v; want schema version 0", st, err)
		}
	})
	t.Run("Migrated", func(t *testing.T) {
		t.Setenv("DOCTOR_DB_URL", db)
		st, err := postgres.Open(t.Context(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		code, out := doctor(t)
		if line := storeLine(out); code != 0 || !strings.Contains(line, fmt.Sprintf("schema version %d (current)", latest)) {
			t.Fatalf("exit %d, store line %q", code, line)
		}
	})
	t.Run("Unset", func(t *testing.T) {
		code, out := doctor(t)
		if line := storeLine(out); code == 0 || !strings.HasPrefix(line, "[FAIL]") || !strings.Contains(line, "DOCTOR_DB_URL is not set") {
			t.Fatalf("exit %d, store line %q", code, line)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		t.Setenv("DOCTOR_DB_URL", "postgres://agentd:pw-LEAK@"+closed+"/agentd?sslmode=disable")
		code, out := doctor(t)
		line := storeLine(out)
		if code == 0 || !strings.HasPrefix(line, "[FAIL]") || !strings.Contains(line, "$DOCTOR_DB_URL") || !strings.Contains(line, "connection refused") {
			t.Fatalf("exit %d, store line %q", code, line)
		}
		if strings.Contains(out, "pw-LEAK") {
			t.Errorf("doctor shows the password: %q", out)
		}
	})
}
