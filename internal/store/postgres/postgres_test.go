package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
	"github.com/agentd/agentd/internal/store/storetest"
)

// open opens the store at url; it is closed when t ends.
func open(t testing.TB, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// raw connects to url with the bare driver, for checks below the Store API.
func raw(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestContract runs the store contract on PostgreSQL: one database for the
// test, a fresh schema for every store the suite opens.
func TestContract(t *testing.T) {
	db := pgtest.Database(t, os.LookupEnv)
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := postgres.Open(t.Context(), pgtest.Schema(t, db), nil)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return st
	})
}

// TestConcurrentMigrations starts several stores on one empty schema at
// the same moment, as replicas started together do: every one must come
// up, and each migration must be applied exactly once.
func TestConcurrentMigrations(t *testing.T) {
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	const replicas = 6
	start := make(chan struct{})
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			<-start
			db, err := postgres.Open(t.Context(), url, nil)
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: Open: %v", i, err)
		}
	}
	conn := raw(t, url)
	var rows, distinct, latest int
	if err := conn.QueryRow(t.Context(), "SELECT count(*), count(DISTINCT version), max(version) FROM schema_migrations").Scan(&rows, &distinct, &latest); err != nil {
		t.Fatal(err)
	}
	if want := postgres.LatestVersion(); rows != want || distinct != want || latest != want {
		t.Errorf("schema_migrations: %d rows, %d versions, latest %d; want %d of each", rows, distinct, latest, want)
	}
}

// TestReopen checks that data survives a reopen and that migrations are
// not applied twice.
func TestReopen(t *testing.T) {
	ctx := t.Context()
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	db := open(t, url)
	if err := db.CreateSession(ctx, store.Session{ID: "s", Agent: "a"}, store.Message{Role: "user", Content: json.RawMessage(`"hi"`)}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	conn := raw(t, url)
	applied := func() (n int, last time.Time) {
		if err := conn.QueryRow(ctx, "SELECT count(*), max(applied_at) FROM schema_migrations").Scan(&n, &last); err != nil {
			t.Fatal(err)
		}
		return n, last
	}
	n1, at1 := applied()
	db = open(t, url)
	msgs, err := db.Messages(ctx, "s")
	if err != nil || len(msgs) != 1 || string(msgs[0].Content) != `"hi"` {
		t.Errorf("after reopen: Messages = %+v, %v", msgs, err)
	}
	if n, at := applied(); n != n1 || !at.Equal(at1) {
		t.Errorf("schema_migrations went from %d rows (last %v) to %d (%v): migrations re-applied", n1, at1, n, at)
	}
}

func TestOpenNewerSchema(t *testing.T) {
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	open(t, url).Close()
	if _, err := raw(t, url).Exec(t.Context(), "INSERT INTO schema_migrations VALUES (9999, '9999_future', now())"); err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(t.Context(), url, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open of a database from a newer agentd succeeded")
	}
	if !strings.Contains(err.Error(), "newer than this agentd supports") {
		t.Errorf("error %q does not say the schema is newer", err)
	}
}

// TestOpenFailsFast checks that a wrong or unreachable database fails
// Open within the connect timeout, with an error that says why and never
// holds the password.
func TestOpenFailsFast(t *testing.T) {
	server := pgtest.Server(t, os.LookupEnv)
	const secret = "s3cr3t-pa55"
	withPassword := func(u string) string {
		return strings.Replace(u, "postgres://postgres@", "postgres://postgres:"+secret+"@", 1)
	}
	// A port nothing listens on: refused at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().String()
	ln.Close()
	// A port that accepts and then says nothing: only the timeout ends it.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	missingDB, err := pgtest.WithDatabase(server, "agentd_no_such_database")
	if err != nil {
		t.Fatal(err)
	}

	const timeout = 1500 * time.Millisecond
	for _, c := range []struct {
		name, url string
		want      string
	}{
		{"Refused", "postgres://postgres:" + secret + "@" + closedPort + "/agentd?sslmode=disable", "connect"},
		{"Silent", "postgres://postgres:" + secret + "@" + silent.Addr().String() + "/agentd?sslmode=disable", "no answer within"},
		{"NoSuchDatabase", withPassword(missingDB), "does not exist"},
		{"PasswordInQuery", "postgres://postgres@" + closedPort + "/agentd?sslmode=disable&password=" + secret, "connect"},
		{"KeywordValue", "host=127.0.0.1 port=" + strings.Split(closedPort, ":")[1] + " user=postgres password=" + secret + " sslmode=disable", "connect"},
		{"BadPort", "postgres://postgres:" + secret + "@127.0.0.1:99999x/agentd", "invalid PostgreSQL connection URL"},
		{"SlashInPassword", "postgres://postgres:" + secret + "/x@127.0.0.1:1/agentd", "invalid PostgreSQL connection URL"},
		{"Empty", "", "empty connection URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			db, err := postgres.Open(t.Context(), c.url, &postgres.Options{ConnectTimeout: timeout})
			elapsed := time.Since(start)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			t.Logf("error after %v: %v", elapsed.Round(time.Millisecond), err)
			if elapsed > timeout+2*time.Second {
				t.Errorf("Open took %v, want at most about %v", elapsed, timeout)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error reveals the password: %q", err)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u:pw@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgresql://u@h/db", "postgresql://u@h/db"},
		{"postgres://u:p/w@rd@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u@h/db?password=pw&sslpassword=x&sslmode=require", "postgres://u@h/db?password=xxxxx&sslpassword=xxxxx&sslmode=require"},
		{"postgres://u@h/db?pass%77ord=pw", "postgres://u@h/db?pass%77ord=xxxxx"},
		{"host=h user=u password=pw dbname=d", "host=h user=u password=xxxxx dbname=d"},
		{"host=h password = 'p w\\'x' dbname=d", "host=h password=xxxxx dbname=d"},
	} {
		if got := postgres.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAuditBatch checks that a batch is stored whole, in order, or not at
// all, and that a value PostgreSQL cannot store is explained.
func TestAuditBatch(t *testing.T) {
	ctx := t.Context()
	db := open(t, pgtest.Schema(t, pgtest.Database(t, os.LookupEnv)))
	var recs []store.AuditRecord
	for i := range 600 {
		recs = append(recs, store.AuditRecord{Tool: "t", Detail: fmt.Sprint(i), Duration: time.Duration(i)})
	}
	if err := db.AppendAuditBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	got, err := db.QueryAudit(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("stored %d records, want %d", len(got), len(recs))
	}
	// Equal Times (now): newest first means last appended first.
	for i, r := range got {
		if want := fmt.Sprint(len(recs) - 1 - i); r.Detail != want {
			t.Fatalf("record %d has Detail %q, want %q: batch order lost", i, r.Detail, want)
		}
		if i > 0 && r.ID >= got[i-1].ID {
			t.Fatalf("IDs not increasing with append order: %d after %d", r.ID, got[i-1].ID)
		}
	}

	bad := []store.AuditRecord{{Tool: "ok"}, {Tool: "t", Agent: "nul\x00agent"}}
	err = db.AppendAuditBatch(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "NUL byte") {
		t.Fatalf("batch with a NUL in an agent name: got %v, want an error explaining the NUL", err)
	}
	if got, err := db.QueryAudit(ctx, store.AuditFilter{Tool: "ok"}); err != nil || len(got) != 0 {
		t.Errorf("a failed batch stored %d records (%v), want none", len(got), err)
	}
}

func TestCheck(t *testing.T) {
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	st, err := postgres.Check(t.Context(), url, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 0 || st.Latest != postgres.LatestVersion() || st.Latest < 1 || st.Server == "" || !strings.HasPrefix(st.Schema, "s_") {
		t.Errorf("Check of an empty schema = %+v", st)
	}
	open(t, url).Close()
	st, err = postgres.Check(t.Context(), url, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != st.Latest {
		t.Errorf("Check after Open: version %d, want %d", st.Version, st.Latest)
	}
	var tables int
	if err := raw(t, url).QueryRow(t.Context(), "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", st.Schema).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables < 9 {
		t.Errorf("schema %s has %d tables, want agentd's 9", st.Schema, tables)
	}
}

// TestCanceledQueryLeavesPoolUsable cancels statements in flight and
// checks that the pool still serves the next caller.
func TestCanceledQueryLeavesPoolUsable(t *testing.T) {
	db := open(t, pgtest.Schema(t, pgtest.Database(t, os.LookupEnv)))
	if err := db.CreateSession(t.Context(), store.Session{ID: "s", Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		_, err := db.AppendMessages(ctx, "s", []store.Message{{Role: "user", Content: json.RawMessage(`1`)}})
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("AppendMessages with a short deadline: %v", err)
		}
	}
	msgs, err := db.Messages(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("Seqs have a gap after canceled appends: message %d has Seq %d", i, m.Seq)
		}
	}
}
