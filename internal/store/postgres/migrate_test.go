package postgres_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestUpgradeDropsTaskIndexes opens a schema that an agentd of schema
// version 2 created and filled, and checks that migration 0003 leaves its
// tasks intact and served: the two dropped indexes are gone, and the
// queries they served still answer right.
func TestUpgradeDropsTaskIndexes(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	old := raw(t, url)
	released(t, old, "0001_init", "0002_replicas")
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
	for _, r := range []struct {
		id, owner string
		terminal  bool
		updated   time.Time
	}{{"t1", "", true, at(1)}, {"t2", "o1", true, at(2)}, {"t3", "o1", false, at(3)}, {"t4", "", true, at(4)}} {
		if _, err := old.Exec(ctx, `INSERT INTO tasks (id, context_id, agent, state, terminal, owner, data, version, created_at, updated_at)
			VALUES ($1, 'c', 'a', 'working', $2, $3, '{}', 1, $4, $4)`, r.id, r.terminal, r.owner, r.updated); err != nil {
			t.Fatal(err)
		}
	}

	db := open(t, url)
	indexes, _ := indexDefs(t, old, "tasks")
	if want := []string{"tasks_by_agent", "tasks_by_context", "tasks_by_updated", "tasks_pkey", "tasks_running"}; !slices.Equal(indexes, want) {
		t.Errorf("task indexes after the upgrade = %v, want %v", indexes, want)
	}

	ids := func(f store.TaskFilter) []string {
		ts, _, err := db.ListTasks(ctx, f)
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
	n, err := db.FailRunningTasks(ctx, func(store.Task) (json.RawMessage, string) { return json.RawMessage(`{}`), "failed" })
	if err != nil || n != 1 {
		t.Fatalf("FailRunningTasks = %d, %v; want 1 (t3)", n, err)
	}
	if n, err := db.PruneTasks(ctx, 2); err != nil || n != 2 {
		t.Fatalf("PruneTasks(2) = %d, %v; want 2 (t1 and t2, the oldest terminal)", n, err)
	}
	if got, want := ids(store.TaskFilter{}), []string{"t3", "t4"}; !slices.Equal(got, want) {
		t.Errorf("tasks after pruning = %v, want %v", got, want)
	}
}

// indexDefs lists the indexes of tables in the current schema, by name,
// with their definitions.
func indexDefs(t *testing.T, conn *pgx.Conn, tables ...string) (names, defs []string) {
	t.Helper()
	rows, err := conn.Query(t.Context(), "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ANY($1) ORDER BY indexname", tables)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			t.Fatal(err)
		}
		names, defs = append(names, name), append(defs, def)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names, defs
}

// released writes into old what migrate wrote for the migrations names
// (versions 1 to len(names)), from the released files.
func released(t *testing.T, old *pgx.Conn, names ...string) {
	t.Helper()
	ctx := t.Context()
	if _, err := old.Exec(ctx, `CREATE TABLE schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL
	)`); err != nil {
		t.Fatal(err)
	}
	for v, name := range names {
		b, err := os.ReadFile(filepath.Join("migrations", name+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.Exec(ctx, string(b)); err != nil {
			t.Fatalf("apply %s: %v", name, err)
		}
		if _, err := old.Exec(ctx, "INSERT INTO schema_migrations VALUES ($1, $2, now())", v+1, name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUpgradeAuditIndexesAscending opens a schema of version 3 holding
// audit records, and checks that migration 0004 rebuilds the five audit
// indexes ascending, keeping the records and the order and filters the
// indexes serve.
func TestUpgradeAuditIndexesAscending(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	old := raw(t, url)
	released(t, old, "0001_init", "0002_replicas", "0003_task_indexes")
	for i, agent := range []string{"a", "b", "a"} {
		if _, err := old.Exec(ctx, `INSERT INTO audit (time, agent, session_id, tool, args_digest, decision, outcome, detail, untrusted, duration_ns, principal)
			VALUES ($1, $2, 's', 't', 'd', 'allow', 'ok', '', false, 1, 'p')`, time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), agent); err != nil {
			t.Fatal(err)
		}
	}

	db := open(t, url)
	names, defs := indexDefs(t, old, "audit")
	for i, def := range defs {
		if strings.Contains(def, "DESC") {
			t.Errorf("index %s after the upgrade is %q: still descending", names[i], def)
		}
	}
	if want := []string{"audit_by_agent", "audit_by_principal", "audit_by_session", "audit_by_time", "audit_by_tool", "audit_pkey"}; !slices.Equal(names, want) {
		t.Errorf("audit indexes after the upgrade = %v, want %v", names, want)
	}
	ids := func(f store.AuditFilter) []int64 {
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
	if got, want := ids(store.AuditFilter{}), []int64{3, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("audit ids, newest first, after the upgrade = %v, want %v", got, want)
	}
	if got, want := ids(store.AuditFilter{Agent: "a"}), []int64{3, 1}; !slices.Equal(got, want) {
		t.Errorf("audit ids of agent a after the upgrade = %v, want %v", got, want)
	}
}

// TestUpgradeTimeIndexes opens a schema of version 4 holding sessions and
// tasks, and checks that migration 0005 rebuilds their indexes with the
// time ascending and the order the queries ask for (updated_at DESC, id)
// kept, ties included.
func TestUpgradeTimeIndexes(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	old := raw(t, url)
	released(t, old, "0001_init", "0002_replicas", "0003_task_indexes", "0004_audit_indexes")
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
	for _, r := range []struct {
		id      string
		updated time.Time
	}{{"s1", at(1)}, {"s3", at(2)}, {"s2", at(2)}, {"s0", at(3)}} {
		if _, err := old.Exec(ctx, `INSERT INTO sessions (id, agent, title, origin, principal, created_at, updated_at) VALUES ($1, 'a', '', 'api', 'p', $2, $2)`, r.id, r.updated); err != nil {
			t.Fatal(err)
		}
		if _, err := old.Exec(ctx, `INSERT INTO tasks (id, context_id, agent, state, terminal, owner, data, version, created_at, updated_at)
			VALUES ($1, 'c', 'a', 'completed', true, '', '{}', 1, $2, $2)`, "t"+r.id, r.updated); err != nil {
			t.Fatal(err)
		}
	}

	db := open(t, url)
	names, defs := indexDefs(t, old, "sessions", "tasks", "memories")
	for i, def := range defs {
		if strings.Contains(def, "updated_at DESC") {
			t.Errorf("index %s after the upgrade is %q: time still descending", names[i], def)
		}
	}
	if want := []string{"memories_by_updated", "memories_pkey", "sessions_by_agent", "sessions_by_principal", "sessions_by_updated", "sessions_pkey",
		"tasks_by_agent", "tasks_by_context", "tasks_by_updated", "tasks_pkey", "tasks_running"}; !slices.Equal(names, want) {
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
