package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// loadStoreConfig loads a config with one fake-model agent and the given
// [store] table, in a fresh home, with env as the whole environment.
func loadStoreConfig(t *testing.T, modelURL, storeTable string, env map[string]string) *config.Config {
	t.Helper()
	home := t.TempDir()
	body := fmt.Sprintf(`listen = "127.0.0.1:0"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "helper"
provider = "fake"
model = "m"
tools = []

%s
`, modelURL, storeTable)
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestPostgresBackend runs a daemon on PostgreSQL: what one daemon stores
// through the API, a second daemon with another home (so no SQLite file
// could carry it) reads back, and no agentd.db is ever created.
func TestPostgresBackend(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "stored in postgres"}))
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv)}
	const table = "[store]\nbackend = \"postgres\"\nurl_env = \"TEAM_DB_URL\"\n"

	call := func(srv *httptest.Server, method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}

	first := loadStoreConfig(t, model.URL, table, env)
	d, err := New(t.Context(), first, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler())
	if code, out := call(srv, "POST", "/api/agents", `{"name":"made-at-runtime","provider":"fake","model":"m"}`); code != 201 {
		t.Fatalf("create agent: %d %v", code, out)
	}
	if code, out := call(srv, "POST", "/api/agents/helper/messages", `{"message":"remember this"}`); code != 200 {
		t.Fatalf("send message: %d %v", code, out)
	}
	srv.Close()
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	second := loadStoreConfig(t, model.URL, table, env)
	d, err = New(t.Context(), second, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv = httptest.NewServer(d.Handler())
	defer srv.Close()
	if code, out := call(srv, "GET", "/api/agents/made-at-runtime", ""); code != 200 {
		t.Errorf("the second daemon does not see the agent created through the first: %d %v", code, out)
	}
	_, out := call(srv, "GET", "/api/sessions", "")
	sessions, _ := out["sessions"].([]any)
	if len(sessions) != 1 {
		t.Fatalf("the second daemon sees %d sessions, want the first's one: %v", len(sessions), out)
	}
	id := sessions[0].(map[string]any)["id"].(string)
	_, out = call(srv, "GET", "/api/sessions/"+id, "")
	if msgs, _ := out["messages"].([]any); len(msgs) != 2 || !strings.Contains(fmt.Sprint(msgs), "stored in postgres") {
		t.Errorf("session messages = %v, want the question and the answer", out["messages"])
	}
	for _, cfg := range []*config.Config{first, second} {
		if _, err := os.Stat(cfg.StorePath()); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists (err %v): the daemon opened SQLite", cfg.StorePath(), err)
		}
	}
}

// TestPostgresStartFailsFast: a daemon whose database is unreachable,
// missing or unnamed refuses to start within seconds, saying which
// variable to fix, never showing the password.
func TestPostgresStartFailsFast(t *testing.T) {
	server := pgtest.Server(t, os.LookupEnv)
	missing, err := pgtest.WithDatabase(server, "agentd_no_such_database")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	// Accepts connections and never answers: only the timeout ends it.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	conns := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	defer func() {
		silent.Close()
		for c := range conns {
			c.Close()
		}
	}()

	const secret = "pw-LEAK-9"
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"Unset", nil, []string{"AGENTD_POSTGRES_URL is not set"}},
		{"Refused", map[string]string{"AGENTD_POSTGRES_URL": "postgres://agentd:" + secret + "@" + closed + "/agentd?sslmode=disable"},
			[]string{"$AGENTD_POSTGRES_URL", "postgres://agentd:xxxxx@" + closed, "connection refused"}},
		{"Silent", map[string]string{"AGENTD_POSTGRES_URL": "postgres://agentd:" + secret + "@" + silent.Addr().String() + "/agentd?sslmode=disable"},
			[]string{"$AGENTD_POSTGRES_URL", "no answer within"}},
		{"NoSuchDatabase", map[string]string{"AGENTD_POSTGRES_URL": strings.Replace(missing, "postgres://postgres@", "postgres://postgres:"+secret+"@", 1)},
			[]string{"$AGENTD_POSTGRES_URL", "agentd_no_such_database\" does not exist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loadStoreConfig(t, "http://127.0.0.1:1", "[store]\nbackend = \"postgres\"\n", tc.env)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			start := time.Now()
			d, err := New(ctx, cfg, Options{})
			elapsed := time.Since(start)
			if err == nil {
				d.Close()
				t.Fatal("New succeeded")
			}
			t.Logf("after %v: %v", elapsed.Round(time.Millisecond), err)
			if elapsed > 8*time.Second {
				t.Errorf("New took %v to fail, want a few seconds at most", elapsed)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error shows the password: %q", err)
			}
		})
	}
}
