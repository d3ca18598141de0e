package sqlite_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/internal/store"
)

// TestUpgradeToPushConfigs opens a database that a release without push
// configs created (schema version 1): the upgrade adds the table without
// touching the data, and pruning a task then cascades to its configs.
func TestUpgradeToPushConfigs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	v1, err := os.ReadFile(filepath.Join("migrations", "0001_init.sql"))
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	for _, q := range []string{
		string(v1),
		"CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
		"INSERT INTO schema_migrations VALUES (1, '0001_init', 0)",
		"PRAGMA user_version = 1",
		`INSERT INTO tasks VALUES ('old', 'c', 'a', 'completed', 1, 'o', '{"id":"old"}', 3, 1, 2)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("build a version 1 database: %v", err)
		}
	}
	raw.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}

	db := open(t, path)
	defer db.Close()
	tk, err := db.GetTask(ctx, "old")
	if err != nil || tk.Version != 3 || string(tk.Data) != `{"id":"old"}` {
		t.Fatalf("task from version 1 after the upgrade: %+v, %v", tk, err)
	}
	cfg := store.PushConfig{TaskID: "old", ID: "c", Config: json.RawMessage(`{"url":"https://h.example.com"}`)}
	if err := db.PutPushConfig(ctx, cfg); err != nil {
		t.Fatalf("PutPushConfig after the upgrade: %v", err)
	}
	if n, err := db.PruneTasks(ctx, 0); err != nil || n != 1 {
		t.Fatalf("PruneTasks(0) = %d, %v; want 1", n, err)
	}
	if _, err := db.GetPushConfig(ctx, "old", "c"); err == nil {
		t.Error("the pruned task's push config survived")
	}
	var version int
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw = rawDB(t, path)
	if err := raw.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version < 2 {
		t.Errorf("schema version after the upgrade = %d, want >= 2", version)
	}
}
