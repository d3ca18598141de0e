package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// pgBin holds the PostgreSQL server's programs (Debian's layout).
const pgBin = "/usr/lib/postgresql/15/bin"

// pgCluster is a PostgreSQL server of the test's own, which it can stop
// and start: the shared server of the other tests must stay up.
type pgCluster struct {
	dir  string // owned by the postgres user: data/ and the log
	port int
}

// newPGCluster initialises and starts a throwaway cluster on a free
// port, as the postgres user (initdb refuses root). It skips where that
// cannot be done: no server binaries, or not root.
func newPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("AGENTD_INTEROP") == "1" {
		skip = t.Fatalf // CI must run the fault tests, never skip them
	}
	if _, err := os.Stat(filepath.Join(pgBin, "initdb")); err != nil {
		skip("no PostgreSQL server binaries: %v", err)
	}
	pgUser, err := user.Lookup("postgres")
	if err != nil || os.Geteuid() != 0 {
		skip("needs root and a postgres user to run initdb (%v)", err)
	}
	// Not under t.TempDir: its parent is private to root.
	dir, err := os.MkdirTemp("", "agentd-pg-")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(pgUser.Uid)
	gid, _ := strconv.Atoi(pgUser.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	port, _ := strconv.Atoi(addr[strings.LastIndexByte(addr, ':')+1:])
	c := &pgCluster{dir: dir, port: port}
	c.run(t, "initdb", "-D", c.data(), "-A", "trust", "-U", "postgres", "--no-sync")
	c.start(t)
	t.Cleanup(func() {
		_ = exec.Command("runuser", "-u", "postgres", "--", filepath.Join(pgBin, "pg_ctl"), "-D", c.data(), "-m", "immediate", "-w", "stop").Run()
		os.RemoveAll(dir)
	})
	return c
}

func (c *pgCluster) data() string { return filepath.Join(c.dir, "data") }

func (c *pgCluster) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(pgBin, prog)}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", prog, args, err, out)
	}
}

// start starts the server and waits until it accepts connections.
func (c *pgCluster) start(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-w", "-o",
		fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, c.dir), "start")
}

// stop stops the server as an operator's fast shutdown does: sessions
// are terminated, and new connections refused.
func (c *pgCluster) stop(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop")
}

// createDB creates a database and returns its URL.
func (c *pgCluster) createDB(t *testing.T, name string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), c.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	return c.url(name)
}

func (c *pgCluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// query returns the first column of the first row of sql on db.
func queryOne[T any](t *testing.T, dbURL, sql string, args ...any) T {
	t.Helper()
	var v T
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// serveReplica builds a replica on the database at dbURL with the
// [cluster] table given, served on loopback.
func serveReplica(t testing.TB, modelURL, dbURL, cluster string) (*Daemon, string) {
	t.Helper()
	d, base, _ := startReplica(t, modelURL, dbURL, cluster)
	return d, base
}

// startReplica is serveReplica with a way to end its Serve during the
// test: stop cancels its context, as SIGTERM does, waits for Serve to
// return and closes the daemon (at cleanup otherwise).
func startReplica(t testing.TB, modelURL, dbURL, cluster string) (d *Daemon, base string, stop func()) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(replicaConfig("127.0.0.1:0", modelURL, cluster)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TEAM_DB_URL": dbURL}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	d, err = New(t.Context(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := d.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Serve(ctx, ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("Serve: %v", err)
			}
			d.Close()
		})
	}
	t.Cleanup(stop)
	return d, "http://" + ln.Addr().String(), stop
}

// rawDo sends a request with the API key and returns the status and the
// whole body, for checks of what clients see.
func rawDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a2aTestKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStoreOutage stops PostgreSQL for 10 s, and for 70 s, while a run
// waits on its model, and checks what the issue asks of a replica across
// it: the run ends COMPLETED when the database returns within
// [cluster] store_retry_secs, FAILED with "store unavailable" when it
// does not (a 3 s bound here); either way no session turn stays claimed,
// the next turn of the conversation works, no answer names the
// database's user, name, host or port, and /readyz follows the outage.
func TestStoreOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a PostgreSQL server of its own for ~2 minutes")
	}
	pg := newPGCluster(t)
	for i, tc := range []struct {
		name   string
		outage time.Duration
		retry  int
		want   a2a.TaskState
	}{
		{"database back within the bound: the run completes", 10 * time.Second, 60, a2a.TaskStateCompleted},
		{"database back after the bound: the run fails cleanly", 10 * time.Second, 3, a2a.TaskStateFailed},
		{"a 70 s outage within a 90 s bound: the run completes", 70 * time.Second, 90, a2a.TaskStateCompleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbURL := pg.createDB(t, fmt.Sprintf("outage%d", i))
			asked := make(chan struct{}, 1)
			release := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })
			model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
				if strings.HasPrefix(r.LastUserText(), "wait") {
					asked <- struct{}{}
					<-release
				}
				return llmtest.Reply{Text: "answer to " + r.LastUserText(), Chunks: 3}
			})
			cluster := fastCluster + fmt.Sprintf("store_retry_secs = %d\n", tc.retry)
			_, base := serveReplica(t, model.URL, dbURL, cluster)
			cl := a2aClientFor(t, base)
			ctx := t.Context()

			req := userMessage("wait for the database")
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
			res, err := cl.SendMessage(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			task := res.(*a2a.Task)
			<-asked // the run is in flight, at its model

			pg.stop(t)
			stopped := time.Now()
			notReady := waitFor(t, 10*time.Second, "/readyz fails while the database is down", func() bool {
				code, _ := rawDo(t, http.MethodGet, base+"/readyz", "")
				return code == http.StatusServiceUnavailable
			})

			// What clients see meanwhile: a stable code, no connection
			// details.
			var bodies []string
			code, body := rawDo(t, http.MethodGet, base+"/api/sessions", "")
			if code != http.StatusServiceUnavailable || !strings.Contains(body, `"store_unavailable"`) || !strings.Contains(body, "store unavailable, retry") {
				t.Errorf("GET /api/sessions during the outage: %d %s; want 503 store_unavailable", code, body)
			}
			bodies = append(bodies, body)
			_, body = rawDo(t, http.MethodPost, base+"/api/agents/alpha/messages", `{"message":"hello"}`)
			bodies = append(bodies, body)
			_, body = rawDo(t, http.MethodPost, base+"/a2a/agents/alpha", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"no-such-task"}}`)
			bodies = append(bodies, body)
			_, body = rawDo(t, http.MethodPost, base+"/a2a/agents/alpha", `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`)
			bodies = append(bodies, body)

			// The model answers now: the run's writes meet the outage.
			once.Do(func() { close(release) })
			time.Sleep(time.Until(stopped.Add(tc.outage))) // the outage's length is the scenario, not a wait for an event
			pg.start(t)
			back := time.Now()
			ready := waitFor(t, 10*time.Second, "/readyz passes once the database is back", func() bool {
				code, _ := rawDo(t, http.MethodGet, base+"/readyz", "")
				return code == http.StatusOK
			})
			t.Logf("outage %v: /readyz failed %v after the stop and passed %v after the restart", back.Sub(stopped).Round(100*time.Millisecond),
				notReady.Round(10*time.Millisecond), ready.Round(10*time.Millisecond))

			var got *a2a.Task
			waitFor(t, 20*time.Second, "the task ends", func() bool {
				got, err = cl.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
				return err == nil && got.Status.State.Terminal()
			})
			t.Logf("task ended %s %v after the database returned", got.Status.State, time.Since(back).Round(10*time.Millisecond))
			if got.Status.State != tc.want {
				t.Fatalf("task ended %s (%v), want %s", got.Status.State, got.Status.Message, tc.want)
			}
			if tc.want == a2a.TaskStateFailed {
				reason := got.Status.Message.Parts[0].Text()
				if !strings.Contains(reason, "store unavailable") {
					t.Errorf("failure reason %q does not say the store was unavailable", reason)
				}
				bodies = append(bodies, reason)
			}
			// Stored as it ended, not left working, and no turn claimed.
			waitFor(t, 10*time.Second, "the stored task is terminal and no session turn is claimed", func() bool {
				return queryOne[bool](t, dbURL, "SELECT terminal FROM tasks WHERE id = $1", string(task.ID)) &&
					queryOne[int](t, dbURL, "SELECT count(*) FROM session_turns") == 0
			})
			if st := queryOne[string](t, dbURL, "SELECT state FROM tasks WHERE id = $1", string(task.ID)); st != string(tc.want) {
				t.Errorf("stored task state %q, want %q", st, tc.want)
			}

			next := userMessage("next turn")
			next.Message.ContextID = task.ContextID
			res, err = cl.SendMessage(ctx, next)
			if err != nil {
				t.Fatal(err)
			}
			if done := res.(*a2a.Task); done.Status.State != a2a.TaskStateCompleted {
				t.Errorf("the next turn of the conversation: %s %v", done.Status.State, done.Status.Message)
			}

			for _, b := range bodies {
				t.Logf("a client saw: %.200s", strings.Join(strings.Fields(b), " "))
				for _, secret := range []string{"user=", "database=", "postgres@", fmt.Sprintf("127.0.0.1:%d", pg.port), fmt.Sprintf("%d", pg.port), fmt.Sprintf("outage%d", i)} {
					if strings.Contains(b, secret) {
						t.Errorf("a client saw %q: %s", secret, b)
					}
				}
			}
		})
	}
}
