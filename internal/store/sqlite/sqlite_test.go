package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/store/storetest"
)

// open opens a database in a fresh directory; the caller closes it.
func open(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return db
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, filepath.Join(t.TempDir(), "agentd.db"))
	})
}

// rawDB opens path with the bare driver, for checks below the Store API.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "agentd")
	path := filepath.Join(dir, "agentd.db")
	db := open(t, path)
	defer db.Close()
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{
		{filepath.Dir(dir), 0o700},
		{dir, 0o700},
		{path, 0o600},
		{path + "-wal", 0o600},
		{path + "-shm", 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatalf("stat %s: %v", c.path, err)
		}
		if got := fi.Mode().Perm(); got != c.mode {
			t.Errorf("%s mode = %v, want %v", c.path, got, c.mode)
		}
	}
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, path := range []string{"", ":memory:", "file:x.db?mode=memory"} {
		t.Run(path, func(t *testing.T) {
			db, err := sqlite.Open(t.Context(), path, nil)
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q) succeeded", path)
			}
		})
	}
	t.Run("NotADatabase", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "junk.db")
		if err := os.WriteFile(path, []byte("this is not an SQLite database, just some text long enough to fill a header...."), 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := sqlite.Open(t.Context(), path, nil)
		if err == nil {
			db.Close()
			t.Fatal("Open of a text file succeeded")
		}
		t.Logf("error: %v", err)
	})
}

func TestJournalAndIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentd.db")
	db := open(t, path)
	defer db.Close()
	raw := rawDB(t, path)
	var mode string
	if err := raw.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var version int
	if err := raw.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < 1 {
		t.Errorf("user_version = %d, want >= 1", version)
	}
	// The store's queries, each with the index that should serve both its
	// filter and its order. PruneTasks' (terminal = 1 ORDER BY updated_at,
	// id) has none since migration 0004: it may scan and sort the tasks
	// table, which the A2A task store bounds, a few times per thousand
	// tasks in the background, so that no task insert pays for an index
	// of every task by terminal.
	for _, c := range []struct{ query, index string }{
		{"SELECT * FROM sessions ORDER BY updated_at DESC, id", "sessions_by_updated"},
		{"SELECT * FROM sessions WHERE agent = 'a' ORDER BY updated_at DESC, id", "sessions_by_agent"},
		{"SELECT * FROM sessions WHERE principal = 'p' ORDER BY updated_at DESC, id", "sessions_by_principal"},
		{"SELECT * FROM messages WHERE session_id = 's' ORDER BY seq", "sqlite_autoindex_messages_1"},
		{"SELECT * FROM tasks ORDER BY updated_at DESC, id", "tasks_by_updated"},
		{"SELECT * FROM tasks WHERE context_id = 'c' ORDER BY updated_at DESC, id", "tasks_by_context"},
		{"SELECT * FROM tasks WHERE agent = 'a' ORDER BY updated_at DESC, id", "tasks_by_agent"},
		{"SELECT * FROM tasks WHERE terminal = 0 ORDER BY updated_at, id", "tasks_running"},
		{"SELECT * FROM memories WHERE agent = 'a' ORDER BY updated_at DESC, key", "memories_by_updated"},
		{"SELECT * FROM audit ORDER BY time DESC, id DESC", "audit_by_time"},
		{"SELECT * FROM audit WHERE time >= 5 ORDER BY time DESC, id DESC", "audit_by_time"},
		{"SELECT * FROM audit WHERE agent = 'a' ORDER BY time DESC, id DESC", "audit_by_agent"},
		{"SELECT * FROM audit WHERE session_id = 's' ORDER BY time DESC, id DESC", "audit_by_session"},
		{"SELECT * FROM audit WHERE tool = 't' ORDER BY time DESC, id DESC", "audit_by_tool"},
		{"SELECT * FROM audit WHERE principal = 'p' ORDER BY time DESC, id DESC", "audit_by_principal"},
		{"SELECT * FROM push_configs WHERE task_id = 't' ORDER BY created_at, seq", "push_configs_by_task"},
		{"SELECT * FROM push_configs ORDER BY created_at, seq", "push_configs_by_created"},
		{"SELECT * FROM push_configs WHERE task_id = 't' AND id = 'c'", "sqlite_autoindex_push_configs_1"},
	} {
		rows, err := raw.Query("EXPLAIN QUERY PLAN " + c.query)
		if err != nil {
			t.Fatalf("explain %s: %v", c.query, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, "INDEX "+c.index+" ") && !strings.HasSuffix(p, "INDEX "+c.index) || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("query %q: plan %q, want index %s for both filter and order", c.query, p, c.index)
		}
	}
}

func TestReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	db := open(t, path)
	if err := db.CreateSession(ctx, store.Session{ID: "s", Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendMessages(ctx, "s", []store.Message{{Role: "user", Content: json.RawMessage(`"hi"`)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTask(ctx, store.Task{ID: "t", State: "working"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	migrations := func() (n int, applied int64) {
		raw := rawDB(t, path)
		defer raw.Close()
		if err := raw.QueryRow("SELECT COUNT(*), MAX(applied_at) FROM schema_migrations").Scan(&n, &applied); err != nil {
			t.Fatalf("read schema_migrations: %v", err)
		}
		return n, applied
	}
	n1, at1 := migrations()
	if n1 < 1 {
		t.Fatalf("schema_migrations has %d rows after the first open", n1)
	}

	for i := range 2 {
		db = open(t, path)
		msgs, err := db.Messages(ctx, "s")
		if err != nil || len(msgs) != i+1 || msgs[0].Seq != 1 || string(msgs[0].Content) != `"hi"` {
			t.Errorf("reopen %d: Messages = %+v, %v; want %d messages, the first \"hi\"", i, msgs, err, i+1)
		}
		more, err := db.AppendMessages(ctx, "s", []store.Message{{Role: "user", Content: json.RawMessage(`"again"`)}})
		if err != nil || more[0].Seq != int64(i+2) {
			t.Errorf("reopen %d: AppendMessages = %+v, %v; want Seq %d", i, more, err, i+2)
		}
		if tk, err := db.GetTask(ctx, "t"); err != nil || tk.State != "working" {
			t.Errorf("reopen %d: GetTask = %+v, %v", i, tk, err)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if n, at := migrations(); n != n1 || at != at1 {
			t.Errorf("reopen %d: schema_migrations went from %d rows (last applied %d) to %d (%d): migrations re-applied", i, n1, at1, n, at)
		}
	}
}

func TestOpenNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentd.db")
	open(t, path).Close()
	raw := rawDB(t, path)
	if _, err := raw.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future', 0)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err := sqlite.Open(t.Context(), path, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open of a database from a newer agentd succeeded")
	}
	t.Logf("error: %v", err)
}

// TestConcurrentWriters checks that writers queue inside the process rather
// than failing with SQLITE_BUSY, while readers keep reading.
func TestConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	db := open(t, filepath.Join(t.TempDir(), "agentd.db"))
	defer db.Close()
	const writers, appends = 8, 200
	for w := range writers {
		if err := db.CreateSession(ctx, store.Session{ID: fmt.Sprint("s", w%2), Agent: "a"}); err != nil && w < 2 {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*appends+writers)
	for w := range writers {
		wg.Go(func() {
			sid := fmt.Sprint("s", w%2)
			for i := range appends {
				if _, err := db.AppendMessages(ctx, sid, []store.Message{{Role: "user", Content: json.RawMessage(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))}}); err != nil {
					errs <- fmt.Errorf("writer %d append %d: %w", w, i, err)
				}
				if i%50 == 0 {
					if _, err := db.AppendAudit(ctx, store.AuditRecord{Tool: "t", Agent: sid}); err != nil {
						errs <- fmt.Errorf("writer %d audit %d: %w", w, i, err)
					}
				}
			}
		})
		// A reader per writer, to make sure reads do not block or fail
		// while writes are queued.
		wg.Go(func() {
			for range 5 {
				if _, err := db.Messages(ctx, fmt.Sprint("s", w%2)); err != nil {
					errs <- fmt.Errorf("reader %d: %w", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for s := range 2 {
		msgs, err := db.Messages(ctx, fmt.Sprint("s", s))
		if err != nil {
			t.Fatal(err)
		}
		if want := writers / 2 * appends; len(msgs) != want {
			t.Errorf("session s%d has %d messages, want %d", s, len(msgs), want)
		}
		for i, m := range msgs {
			if m.Seq != int64(i+1) {
				t.Fatalf("session s%d: message %d has Seq %d", s, i, m.Seq)
			}
		}
	}
}

func BenchmarkAppendMessages(b *testing.B) {
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			db := open(b, filepath.Join(b.TempDir(), "agentd.db"))
			defer db.Close()
			ctx := b.Context()
			if err := db.CreateSession(ctx, store.Session{ID: "s", Agent: "a"}); err != nil {
				b.Fatal(err)
			}
			msgs := make([]store.Message, batch)
			for i := range msgs {
				msgs[i] = store.Message{Role: "assistant", Content: json.RawMessage(`{"text":"a typical reply of a few dozen bytes, give or take"}`)}
			}
			for b.Loop() {
				if _, err := db.AppendMessages(ctx, "s", msgs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
	// 16 writers per GOMAXPROCS over 8 sessions: the write load of an edge
	// serving many clients at once.
	b.Run("parallel", func(b *testing.B) {
		db := open(b, filepath.Join(b.TempDir(), "agentd.db"))
		defer db.Close()
		ctx := b.Context()
		const sessions = 8
		for i := range sessions {
			if err := db.CreateSession(ctx, store.Session{ID: fmt.Sprint(i), Agent: "a"}); err != nil {
				b.Fatal(err)
			}
		}
		var mu sync.Mutex
		next := 0
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			mu.Lock()
			sid := fmt.Sprint(next % sessions)
			next++
			mu.Unlock()
			msgs := []store.Message{{Role: "user", Content: json.RawMessage(`{"text":"hello"}`)}}
			for pb.Next() {
				if _, err := db.AppendMessages(context.Background(), sid, msgs); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
}

// BenchmarkAuditBatch is the audit writer's batch (auditlog hands over
// whatever queued): the per-record cost of AppendAuditBatch at the sizes
// the gateway produces at c=1 (a few records) and under load.
func BenchmarkAuditBatch(b *testing.B) {
	rec := store.AuditRecord{Agent: "mcp:gateway", SessionID: "0123456789abcdef", Tool: "mcp_up_echo",
		ArgsDigest: strings.Repeat("ab", 32), Decision: "allow", Outcome: "ok", Principal: "p"}
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			db := open(b, filepath.Join(b.TempDir(), "agentd.db"))
			defer db.Close()
			recs := make([]store.AuditRecord, n)
			for i := range recs {
				recs[i] = rec
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := db.AppendAuditBatch(b.Context(), recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}

// BenchmarkCreateSessionWithTask is the write of a blocking A2A send that
// finishes at once: a new session, the user's input and the model's
// reply, and the finished task, in one group-commit write. Task rows are
// about the size a2aedge stores for a short answer. The tasks table grows
// as it does under the bench (a2aedge prunes it near 1,000 rows; this
// does not).
func BenchmarkCreateSessionWithTask(b *testing.B) {
	data := json.RawMessage(`{"id":"` + strings.Repeat("t", 36) + `","contextId":"` + strings.Repeat("c", 36) +
		`","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"ok"}]},"timestamp":"2026-11-26T01:00:00Z"},` +
		`"artifacts":[{"artifactId":"a","name":"response","parts":[{"text":"ok"}]}],"history":[{"messageId":"u","role":"ROLE_USER","parts":[{"text":"hi"}]}]}`)
	msgs := []store.Message{
		{Role: "user", Content: json.RawMessage(`{"role":"user","parts":[{"text":"hi"}]}`)},
		{Role: "assistant", Content: json.RawMessage(`{"role":"assistant","parts":[{"text":"ok"}]}`)},
	}
	// A client that sends one request at a time leaves the store idle
	// between its writes (the rest of the request: HTTP, the model call):
	// think is that pause, and write-µs the time of the write alone.
	b.Run("c=1,think=1ms", func(b *testing.B) {
		db := open(b, filepath.Join(b.TempDir(), "agentd.db"))
		defer db.Close()
		var spent time.Duration
		n := 0
		for b.Loop() {
			n++
			id := fmt.Sprintf("%036d", n)
			t0 := time.Now()
			err := db.CreateSessionWithTask(context.Background(), store.Session{ID: id, Agent: "instant", Origin: "a2a"}, msgs,
				store.Task{ID: id, ContextID: id, Agent: "instant", State: "TASK_STATE_COMPLETED", Terminal: true, Data: data})
			spent += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		b.ReportMetric(float64(spent.Microseconds())/float64(n), "write-µs/op")
	})
	for _, par := range []int{1, 16} {
		b.Run(fmt.Sprint("c=", par), func(b *testing.B) {
			db := open(b, filepath.Join(b.TempDir(), "agentd.db"))
			defer db.Close()
			var n atomic.Int64
			write := func() error {
				id := fmt.Sprintf("%036d", n.Add(1))
				return db.CreateSessionWithTask(context.Background(), store.Session{ID: id, Agent: "instant", Origin: "a2a"}, msgs,
					store.Task{ID: id, ContextID: id, Agent: "instant", State: "TASK_STATE_COMPLETED", Terminal: true, Data: data})
			}
			b.ReportAllocs()
			if par == 1 {
				for b.Loop() {
					if err := write(); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			// RunParallel runs parallelism × GOMAXPROCS goroutines.
			b.SetParallelism(max(1, par/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := write(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
