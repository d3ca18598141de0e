package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// TestWriteFailures drives the writer into the conditions an operator can
// meet (full disk, read-only file, a lock held by another process) and
// checks that each comes back as an error that says so, and that the store
// recovers once the condition is gone.
func TestWriteFailures(t *testing.T) {
	for _, c := range []struct {
		name string
		// induce creates the condition and returns the function that ends it.
		induce func(t *testing.T, db *DB, path string) (undo func())
		want   string
	}{
		{
			name: "DiskFull",
			induce: func(t *testing.T, db *DB, _ string) func() {
				// max_page_count cannot go below the current size: the
				// database cannot grow at all, as on a full disk.
				mustExec(t, db.w, "PRAGMA max_page_count = 1")
				return func() { mustExec(t, db.w, "PRAGMA max_page_count = 4294967294") }
			},
			want: "full",
		},
		{
			name: "ReadOnly",
			induce: func(t *testing.T, db *DB, _ string) func() {
				mustExec(t, db.w, "PRAGMA query_only = 1")
				return func() { mustExec(t, db.w, "PRAGMA query_only = 0") }
			},
			want: "readonly database",
		},
		{
			name: "LockedByAnotherProcess",
			induce: func(t *testing.T, _ *DB, path string) func() {
				other, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				other.SetMaxOpenConns(1)
				conn, err := other.Conn(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
					t.Fatal(err)
				}
				return func() {
					if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
						t.Error(err)
					}
					conn.Close()
					other.Close()
				}
			},
			want: "locked",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "agentd.db")
			db, err := Open(ctx, path, &Options{BusyTimeout: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.CreateSession(ctx, store.Session{ID: "s", Agent: "a"}); err != nil {
				t.Fatal(err)
			}
			undo := c.induce(t, db, path)
			big := json.RawMessage(`"` + strings.Repeat("x", 64<<10) + `"`)
			_, err = db.AppendMessages(ctx, "s", []store.Message{{Role: "user", Content: big}})
			if err == nil {
				undo()
				t.Fatal("AppendMessages succeeded")
			}
			t.Logf("error: %v", err)
			if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, `append messages to session "s": `) {
				t.Errorf("error %q does not say %q after what was being done", msg, c.want)
			}
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrConflict) {
				t.Errorf("error %v maps to a store sentinel", err)
			}
			// Reads still work while writes fail.
			if _, err := db.GetSession(ctx, "s"); err != nil {
				t.Errorf("GetSession while writes fail: %v", err)
			}
			undo()
			got, err := db.AppendMessages(ctx, "s", []store.Message{{Role: "user", Content: big}})
			if err != nil {
				t.Fatalf("AppendMessages after recovery: %v", err)
			}
			if got[0].Seq != 1 {
				t.Errorf("Seq after a failed append = %d, want 1 (the failed append must leave no gap)", got[0].Seq)
			}
		})
	}
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestLoadMigrations(t *testing.T) {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].version != 1 || ms[0].name != "0001_init" {
		t.Fatalf("embedded migrations = %+v", ms)
	}
	for _, c := range []struct {
		name  string
		files []string
	}{
		{"Gap", []string{"0001_a.sql", "0003_c.sql"}},
		{"Duplicate", []string{"0001_a.sql", "0001_b.sql"}},
		{"StartsAtTwo", []string{"0002_a.sql"}},
		{"BadName", []string{"1_a.sql"}},
		{"NoDescription", []string{"0001.sql"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, f := range c.files {
				fsys["migrations/"+f] = &fstest.MapFile{Data: []byte("SELECT 1;")}
			}
			if ms, err := loadMigrations(fsys); err == nil {
				t.Errorf("loadMigrations(%v) = %+v, want an error", c.files, ms)
			}
		})
	}
}

// TestConnectionSettings checks the per-connection pragmas on both pools:
// they are applied by the driver on connect, so a typo in the DSN would
// otherwise go unnoticed.
func TestConnectionSettings(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "agentd.db"), &Options{BusyTimeout: 1234 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		pool   string
		db     *sql.DB
		pragma string
		want   int
	}{
		{"writer", db.w, "synchronous", 1}, // NORMAL
		{"writer", db.w, "foreign_keys", 1},
		{"writer", db.w, "busy_timeout", 1234},
		{"writer", db.w, "query_only", 0},
		{"writer", db.w, "wal_autocheckpoint", 0}, // the checkpointer's job
		{"reader", db.r, "busy_timeout", 1234},
		{"reader", db.r, "query_only", 1},
	} {
		var got int
		if err := c.db.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatalf("%s: PRAGMA %s: %v", c.pool, c.pragma, err)
		}
		if got != c.want {
			t.Errorf("%s: %s = %d, want %d", c.pool, c.pragma, got, c.want)
		}
	}
}

// TestCheckpointer checks that the WAL is copied into the database file
// while the store is open, although the writer never checkpoints
// (wal_autocheckpoint(0)): the checkpointer does it. In WAL mode only a
// checkpoint writes to the main file, so its growth is the sign.
func TestCheckpointer(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	// Each write takes about 17 pages of the WAL.
	big := json.RawMessage(`"` + strings.Repeat("x", 64<<10) + `"`)
	const writes = checkpointPages/16 + 8
	for i := range writes {
		if err := db.CreateSession(ctx, store.Session{ID: fmt.Sprint("s", i), Agent: "a"}, store.Message{Role: "user", Content: big}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() < before+checkpointPages/2*4096 { // half of it: pages freed by the migrations are reused
		if time.Now().After(deadline) {
			t.Fatalf("database file is %d bytes, was %d before %d writes of 64 KiB: nothing checkpointed them", size(), before, writes)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWALStaysBounded keeps the committer busy with 16 writers, so that it
// is rarely idle when a checkpoint is due: the WAL must still stop
// growing near maxWALPages, because the committer checkpoints anyway and
// the writer then starts the WAL over.
func TestWALStaysBounded(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	msgs := []store.Message{{Role: "user", Content: json.RawMessage(`{"text":"hi"}`)}, {Role: "assistant", Content: json.RawMessage(`{"text":"ok"}`)}}
	const writers, writes = 16, 400 // about 20 pages each: 64,000 pages in all
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range writes {
				id := fmt.Sprintf("%02d-%033d", g, i)
				task := store.Task{ID: id, ContextID: id, Agent: "a", State: "completed", Terminal: true, Data: json.RawMessage(`{"id":"` + id + `"}`)}
				if err := db.CreateSessionWithTask(ctx, store.Session{ID: id, Agent: "a"}, msgs, task); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	// A frame is a page and a 24-byte header; one batch may go past the
	// bound before the committer checkpoints.
	if limit := int64(maxWALPages+maxBatchWrites*40) * (4096 + 24); fi.Size() > limit {
		t.Errorf("WAL is %d bytes after %d writes, want at most %d", fi.Size(), writers*writes, limit)
	}
}
