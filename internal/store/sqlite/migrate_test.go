package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/store"
)

// TestUpgradeDropsTaskIndexes opens a database that an agentd of schema
// version 3 created and filled, and checks that migration 0004 leaves its
// tasks intact and served: the two dropped indexes are gone, the partial
// index of running tasks exists, and the queries the dropped indexes
// served still answer right.
func TestUpgradeDropsTaskIndexes(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	old := rawDB(t, path)
	released(t, old, "0001_init", "0002_push_configs", "0003_principals")
	for _, r := range []struct {
		id, owner string
		terminal  int
		updated   int64
	}{{"t1", "", 1, 1}, {"t2", "o1", 1, 2}, {"t3", "o1", 0, 3}, {"t4", "", 1, 4}} {
		if _, err := old.ExecContext(ctx, `INSERT INTO tasks (id, context_id, agent, state, terminal, owner, data, version, created_at, updated_at)
			VALUES (?, 'c', 'a', 'working', ?, ?, '{}', 1, ?, ?)`, r.id, r.terminal, r.owner, r.updated, r.updated); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := open(t, path)
	defer db.Close()
	indexes, _ := indexDefs(t, path, "tasks")
	if want := []string{"tasks_by_agent", "tasks_by_context", "tasks_by_updated", "tasks_running"}; !slices.Equal(indexes, want) {
		t.Errorf("task indexes after the upgrade = %v, want %v", indexes, want)
	}
	checkTaskQueries(t, db)
}

// checkTaskQueries runs, on the tasks t1-t4 of TestUpgradeDropsTaskIndexes,
// the queries the dropped indexes served.
func checkTaskQueries(t *testing.T, st store.TaskStore) {
	t.Helper()
	ctx := t.Context()
	ids := func(f store.TaskFilter) []string {
		ts, _, err := st.ListTasks(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range ts {
			out = append(out, x.ID)
		}
		return out
	}
	if got, want := ids(store.TaskFilter{Owner: "o1"}), []string{"t3", "t2"}; !slices.Equal(got, want) {
		t.Errorf("tasks of owner o1 = %v, want %v", got, want)
	}
	n, err := st.FailRunningTasks(ctx, func(store.Task) (json.RawMessage, string) { return json.RawMessage(`{}`), "failed" })
	if err != nil || n != 1 {
		t.Fatalf("FailRunningTasks = %d, %v; want 1 (t3)", n, err)
	}
	if n, err := st.PruneTasks(ctx, 2); err != nil || n != 2 {
		t.Fatalf("PruneTasks(2) = %d, %v; want 2 (t1 and t2, the oldest terminal)", n, err)
	}
	if got, want := ids(store.TaskFilter{}), []string{"t3", "t4"}; !slices.Equal(got, want) {
		t.Errorf("tasks after pruning = %v, want %v", got, want)
	}
}

// released writes into old what migrate wrote for the migrations names
// (versions 1 to len(names)), from the released files.
func released(t *testing.T, old *sql.DB, names ...string) {
	t.Helper()
	ctx := t.Context()
	execRaw(t, old, `CREATE TABLE schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`)
	for v, name := range names {
		b, err := os.ReadFile(filepath.Join("migrations", name+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		execRaw(t, old, string(b))
		if _, err := old.ExecContext(ctx, "INSERT INTO schema_migrations VALUES (?, ?, 0)", v+1, name); err != nil {
			t.Fatal(err)
		}
	}
	execRaw(t, old, fmt.Sprintf("PRAGMA user_version = %d", len(names)))
}

// TestUpgradeAuditIndexesAscending opens a database of schema version 4
// holding audit records, and checks that migration 0005 rebuilds the
// five audit indexes ascending, keeping the records and the order and
// filters the indexes serve.
func TestUpgradeAuditIndexesAscending(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	old := rawDB(t, path)
	released(t, old, "0001_init", "0002_push_configs", "0003_principals", "0004_task_indexes")
	for i, agent := range []string{"a", "b", "a"} {
		if _, err := old.ExecContext(ctx, `INSERT INTO audit (time, agent, session_id, tool, args_digest, decision, outcome, detail, untrusted, duration_ns, principal)
			VALUES (?, ?, 's', 't', 'd', 'allow', 'ok', '', 0, 1, 'p')`, int64(i+1)*1000, agent); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := open(t, path)
	defer db.Close()
	names, defs := indexDefs(t, path, "audit")
	for i, def := range defs {
		if strings.Contains(strings.ToUpper(def), "DESC") {
			t.Errorf("index %s after the upgrade is %q: still descending", names[i], def)
		}
	}
	if want := []string{"audit_by_agent", "audit_by_principal", "audit_by_session", "audit_by_time", "audit_by_tool"}; !slices.Equal(names, want) {
		t.Errorf("audit indexes after the upgrade = %v, want %v", names, want)
	}
	times := func(f store.AuditFilter) []int64 {
		recs, err := db.QueryAudit(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return out
	}
	if got, want := times(store.AuditFilter{}), []int64{3, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("audit ids, newest first, after the upgrade = %v, want %v", got, want)
	}
	if got, want := times(store.AuditFilter{Agent: "a"}), []int64{3, 1}; !slices.Equal(got, want) {
		t.Errorf("audit ids of agent a after the upgrade = %v, want %v", got, want)
	}
}

// TestUpgradeTimeIndexes opens a database of schema version 5 holding
// sessions and tasks, and checks that migration 0006 rebuilds their
// indexes with the time ascending and the order the queries ask for
// (updated_at DESC, id) kept, ties included.
func TestUpgradeTimeIndexes(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	old := rawDB(t, path)
	released(t, old, "0001_init", "0002_push_configs", "0003_principals", "0004_task_indexes", "0005_audit_indexes")
	for _, r := range []struct {
		id      string
		updated int64
	}{{"s1", 1}, {"s3", 2}, {"s2", 2}, {"s0", 3}} {
		execRaw(t, old, fmt.Sprintf(`INSERT INTO sessions (id, agent, title, origin, created_at, updated_at, principal) VALUES ('%s', 'a', '', 'api', 0, %d, 'p')`, r.id, r.updated))
		execRaw(t, old, fmt.Sprintf(`INSERT INTO tasks (id, context_id, agent, state, terminal, owner, data, version, created_at, updated_at)
			VALUES ('t%s', 'c', 'a', 'completed', 1, '', '{}', 1, 0, %d)`, r.id, r.updated))
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := open(t, path)
	defer db.Close()
	names, defs := indexDefs(t, path, "sessions", "tasks", "memories")
	for i, def := range defs {
		if strings.Contains(def, "updated_at DESC") {
			t.Errorf("index %s after the upgrade is %q: time still descending", names[i], def)
		}
	}
	if want := []string{"memories_by_updated", "sessions_by_agent", "sessions_by_principal", "sessions_by_updated", "tasks_by_agent", "tasks_by_context", "tasks_by_updated", "tasks_running"}; !slices.Equal(names, want) {
		t.Errorf("indexes after the upgrade = %v, want %v", names, want)
	}
	want := []string{"s0", "s2", "s3", "s1"} // newest first; a tie by id
	for _, f := range []store.SessionFilter{{}, {Agent: "a"}, {Principal: "p"}} {
		ss, err := db.ListSessions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range ss {
			got = append(got, s.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("sessions %+v after the upgrade = %v, want %v", f, got, want)
		}
	}
	for _, f := range []store.TaskFilter{{}, {ContextID: "c"}, {Agent: "a"}} {
		ts, _, err := db.ListTasks(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range ts {
			got = append(got, strings.TrimPrefix(x.ID, "t"))
		}
		if !slices.Equal(got, want) {
			t.Errorf("tasks %+v after the upgrade = %v, want %v", f, got, want)
		}
	}
}

// indexDefs lists the indexes of tables that the schema declares (not
// those of primary keys and UNIQUE), by name, with their SQL.
func indexDefs(t *testing.T, path string, tables ...string) (names, defs []string) {
	t.Helper()
	rows, err := rawDB(t, path).QueryContext(t.Context(), "SELECT name, sql, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, def, table string
		if err := rows.Scan(&name, &def, &table); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(tables, table) {
			names, defs = append(names, name), append(defs, def)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names, defs
}

func execRaw(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
