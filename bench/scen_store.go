package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/sqlite"
)

// pgURLEnv is the variable the bench's PostgreSQL agentd instances read
// their database URL from ([store] url_env).
const pgURLEnv = "AGENTD_BENCH_POSTGRES_URL"

// defaultPostgres is tried when the environment names no server: the
// one scripts/postgres.sh and the tests also look for.
const defaultPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// storeOp is one store contract operation, measured on each backend.
type storeOp struct {
	name string
	// prepare runs once per backend before the measurement; run is the
	// operation (n numbers the call, for unique ids).
	prepare func(ctx context.Context, db store.Store) error
	run     func(ctx context.Context, db store.Store, n int64) error
}

// storeOps are the contract operations an agent turn and an A2A task
// make: create a session with its first message, append a message, read
// the conversation, create and update a task, read it, append an audit
// record.
func storeOps() []storeOp {
	msg := store.Message{Role: "assistant", Content: json.RawMessage(`{"text":"a typical reply of a few dozen bytes, give or take"}`)}
	const sessions = 8
	prepSessions := func(ctx context.Context, db store.Store) error {
		for i := range sessions {
			if err := db.CreateSession(ctx, store.Session{ID: fmt.Sprintf("bench-%d", i), Agent: "a"}, msg, msg); err != nil {
				return err
			}
		}
		return nil
	}
	run := func(prefix string) string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return prefix + hex.EncodeToString(b[:])
	}
	taskData := json.RawMessage(`{"id":"t","status":{"state":"TASK_STATE_WORKING"},"history":[{"role":"ROLE_USER","parts":[{"text":"hi"}]}]}`)
	prepTask := func(ctx context.Context, db store.Store) error {
		_, err := db.CreateTask(ctx, store.Task{ID: "bench-task", ContextID: "c", Agent: "a", State: "working", Data: taskData})
		return err
	}
	// Conversations that stay 20 messages long, for the read (the
	// appends lengthen the others at each backend's own pace).
	prepRead := func(ctx context.Context, db store.Store) error {
		msgs := make([]store.Message, 20)
		for i := range msgs {
			msgs[i] = msg
		}
		for i := range sessions {
			if err := db.CreateSession(ctx, store.Session{ID: fmt.Sprintf("read-%d", i), Agent: "a"}, msgs...); err != nil {
				return err
			}
		}
		return nil
	}
	prefix := run("r")
	return []storeOp{
		{"CreateSession + 1 message", nil, func(ctx context.Context, db store.Store, n int64) error {
			return db.CreateSession(ctx, store.Session{ID: fmt.Sprintf("%s-s%d", prefix, n), Agent: "a"}, msg)
		}},
		{"AppendMessages (1)", prepSessions, func(ctx context.Context, db store.Store, n int64) error {
			_, err := db.AppendMessages(ctx, fmt.Sprintf("bench-%d", n%sessions), []store.Message{msg})
			return err
		}},
		{"Messages (read a 20-message conversation)", prepRead, func(ctx context.Context, db store.Store, n int64) error {
			_, err := db.Messages(ctx, fmt.Sprintf("read-%d", n%sessions))
			return err
		}},
		{"CreateTask + UpdateTask", nil, func(ctx context.Context, db store.Store, n int64) error {
			t := store.Task{ID: fmt.Sprintf("%s-t%d", prefix, n), ContextID: "c", Agent: "a", State: "working", Data: taskData}
			v, err := db.CreateTask(ctx, t)
			if err != nil {
				return err
			}
			t.State, t.Terminal = "completed", true
			_, err = db.UpdateTask(ctx, t, v)
			return err
		}},
		{"GetTask", prepTask, func(ctx context.Context, db store.Store, n int64) error {
			_, err := db.GetTask(ctx, "bench-task")
			return err
		}},
		{"AppendAudit", nil, func(ctx context.Context, db store.Store, n int64) error {
			_, err := db.AppendAudit(ctx, store.AuditRecord{Agent: "a", SessionID: "s", Tool: "file_read", Decision: "allow", Outcome: "ok", ArgsDigest: "0123456789abcdef"})
			return err
		}},
	}
}

// Paths of scenario 6.
const (
	pathSQLite     = "SQLite"
	pathPostgres   = "PostgreSQL"
	pathSendSQLite = "A2A send, agentd on SQLite"
	pathSendPG     = "A2A send, agentd on PostgreSQL"
	pathSendPG1    = "A2A send, 1 PostgreSQL replica behind the balancer"
	pathSendPG3    = "A2A send, 3 PostgreSQL replicas behind the balancer"
)

func runStore(ctx context.Context, e *Env, res *Scenario) error {
	admin, err := e.Postgres(ctx)
	if err != nil {
		return err
	}
	spec := e.secondarySpec
	rounds := e.secondaryRounds()

	// Contract operations, in process, on a fresh SQLite file and a fresh
	// PostgreSQL database.
	sq, err := sqlite.Open(ctx, filepath.Join(e.Tmp, "store-bench.db"), nil)
	if err != nil {
		return fmt.Errorf("open sqlite: %w", err)
	}
	defer sq.Close()
	pgURL, dropDB, err := throwawayDB(ctx, admin)
	if err != nil {
		return err
	}
	defer dropDB()
	pg, err := postgres.Open(ctx, pgURL, nil)
	if err != nil {
		return fmt.Errorf("open postgres: %w", err)
	}
	defer pg.Close()
	backends := []struct {
		name string
		db   store.Store
	}{{pathSQLite, sq}, {pathPostgres, pg}}
	concs := a2aConcurrency(e.Settings.Concurrency)
	for _, op := range storeOps() {
		// One call counter per backend and operation, across its cells:
		// the ids it numbers must not repeat.
		var counters [2]atomic.Int64
		for _, b := range backends {
			if op.prepare != nil {
				if err := op.prepare(ctx, b.db); err != nil {
					res.naRow(b.name+" "+op.name, err)
				}
			}
		}
		for _, conc := range concs {
			var cells []*Cell
			fns := map[*Cell]func(context.Context) error{}
			for i, b := range backends {
				c := &Cell{Path: b.name + " " + op.name, Concurrency: conc}
				n := &counters[i]
				db, run := b.db, op.run
				fns[c] = func(ctx context.Context) error { return run(ctx, db, n.Add(1)) }
				cells = append(cells, c)
			}
			Interleave(ctx, rounds, cells, func(ctx context.Context, c *Cell) Stats { return Load(ctx, spec(conc), fns[c]) })
			for _, c := range cells {
				res.Rows = append(res.Rows, cellRow(c))
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	e.logf("  store operations measured; starting agentd on each backend")

	// A2A sends: agentd on SQLite, on PostgreSQL, and 1 and 3 PostgreSQL
	// replicas behind a round-robin balancer without stickiness.
	llm, err := e.FakeLLM(ctx)
	if err != nil {
		return err
	}
	type target struct {
		name string
		url  string
	}
	var targets []target
	if a, err := e.StartAgentd(ctx, "store-sqlite", AgentdConfig{LLM: llm}); err != nil {
		res.naRow(pathSendSQLite, err)
	} else {
		defer a.Stop()
		targets = append(targets, target{pathSendSQLite, a.URL})
	}
	startPG := func(name string, n int) ([]string, func(), error) {
		u, drop, err := throwawayDB(ctx, admin)
		if err != nil {
			return nil, nil, err
		}
		var stops []func()
		stop := func() {
			for i := len(stops) - 1; i >= 0; i-- {
				stops[i]()
			}
			drop()
		}
		var urls []string
		for i := range n {
			a, err := e.StartAgentd(ctx, fmt.Sprintf("%s-%d", name, i), AgentdConfig{LLM: llm, PostgresURL: u})
			if err != nil {
				stop()
				return nil, nil, err
			}
			stops = append(stops, func() { _ = a.Stop() })
			urls = append(urls, a.URL)
		}
		return urls, stop, nil
	}
	if urls, stop, err := startPG("store-pg", 1); err != nil {
		res.naRow(pathSendPG, err)
		res.naRow(pathSendPG1, err)
	} else {
		defer stop()
		targets = append(targets, target{pathSendPG, urls[0]})
		if lb, err := startBalancer(urls...); err != nil {
			res.naRow(pathSendPG1, err)
		} else {
			defer lb.Close()
			targets = append(targets, target{pathSendPG1, lb.URL})
		}
	}
	if urls, stop, err := startPG("store-pg3", 3); err != nil {
		res.naRow(pathSendPG3, err)
	} else {
		defer stop()
		if lb, err := startBalancer(urls...); err != nil {
			res.naRow(pathSendPG3, err)
		} else {
			defer lb.Close()
			targets = append(targets, target{pathSendPG3, lb.URL})
		}
	}
	var live []target
	sends := map[string]func(context.Context) error{}
	for _, t := range targets {
		c, err := e.A2AClient(ctx, t.url+"/a2a/agents/"+agentInstant)
		if err != nil {
			res.naRow(t.name, err)
			continue
		}
		defer c.Destroy()
		send := a2aSend(c)
		if err := send(ctx); err != nil {
			res.naRow(t.name, fmt.Errorf("first send failed: %w", err))
			continue
		}
		sends[t.name] = send
		live = append(live, t)
	}
	for _, conc := range concs {
		var cells []*Cell
		for _, t := range live {
			cells = append(cells, &Cell{Path: t.name, Concurrency: conc})
		}
		e.logf("  A2A send at concurrency %d: %d paths", conc, len(cells))
		Interleave(ctx, rounds, cells, func(ctx context.Context, c *Cell) Stats { return Load(ctx, spec(conc), sends[c.Path]) })
		for _, c := range cells {
			res.Rows = append(res.Rows, cellRow(c))
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	storeNotes(res, concs)
	return nil
}

// storeNotes states the ratios: there are no targets for scale-out in
// the issue, only the duty to report them honestly.
func storeNotes(res *Scenario, concs []int) {
	var parts []string
	for _, op := range storeOps() {
		for _, conc := range concs {
			p, okP := res.row(pathPostgres+" "+op.name, conc)
			s, okS := res.row(pathSQLite+" "+op.name, conc)
			if okP && okS && s.Rate > 0 {
				parts = append(parts, fmt.Sprintf("%s %.2f× at c=%d", op.name, p.Rate/s.Rate, conc))
			}
		}
	}
	if len(parts) > 0 {
		res.Notes = append(res.Notes, "PostgreSQL's operations/s over SQLite's: "+strings.Join(parts, ", ")+
			". Both at their defaults: SQLite in WAL mode with synchronous=NORMAL (a commit is not fsynced until the checkpoint), "+
			"PostgreSQL with synchronous_commit=on (every commit waits for its WAL flush), on the same disk.")
	}
	ratio := func(num, den string) string {
		var out []string
		for _, conc := range concs {
			n, okN := res.row(num, conc)
			d, okD := res.row(den, conc)
			if okN && okD && d.Rate > 0 {
				var rounds []string
				for i := range min(len(n.RoundRates), len(d.RoundRates)) {
					if d.RoundRates[i] > 0 {
						rounds = append(rounds, fmt.Sprintf("%.2f", n.RoundRates[i]/d.RoundRates[i]))
					}
				}
				s := fmt.Sprintf("%.2f× at c=%d", n.Rate/d.Rate, conc)
				if len(rounds) > 1 {
					s += " (rounds " + strings.Join(rounds, ", ") + ")"
				}
				out = append(out, s)
			}
		}
		return strings.Join(out, ", ")
	}
	if s := ratio(pathSendPG, pathSendSQLite); s != "" {
		res.Notes = append(res.Notes, "A2A sends to agentd on PostgreSQL over agentd on SQLite: "+s+".")
	}
	if s := ratio(pathSendPG3, pathSendPG1); s != "" {
		res.Notes = append(res.Notes, "3 replicas over 1, both behind the same in-bench round-robin balancer: "+s+
			". On this machine the replicas, PostgreSQL, the fake model, the balancer and the load generator share the same cores, "+
			"so more replicas add coordination (heartbeats, notifications, one more process scheduling) without adding CPU: "+
			"this shows what scale-out costs per request, not what it gains on more machines.")
	}
}

// Postgres returns the URL of a server the bench may create databases
// on: AGENTD_TEST_POSTGRES_URL (what scripts/postgres.sh prints) or the
// default loopback server.
func (e *Env) Postgres(ctx context.Context) (string, error) {
	u := e.PostgresServer
	if u == "" {
		u = defaultPostgres
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, u)
	if err != nil {
		return "", notAvailable("no PostgreSQL at %s (%v): run `eval \"$(./scripts/postgres.sh)\"` or set AGENTD_TEST_POSTGRES_URL", postgres.Redact(u), err)
	}
	_ = conn.Close(ctx)
	return u, nil
}

// throwawayDB creates a database agentd_bench_<random> on the server
// admin and returns its URL and a function dropping it.
func throwawayDB(ctx context.Context, admin string) (string, func(), error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "agentd_bench_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return u.String(), drop, nil
}

// balancer is a round-robin reverse proxy without stickiness, as a load
// balancer in front of replicas (internal/daemon's TestReplicaSuite
// uses the same shape): each request goes to the next backend, whatever
// session or task it belongs to.
type balancer struct {
	URL  string
	srv  *http.Server
	done chan struct{} // closed when Serve has returned
}

func startBalancer(backends ...string) (*balancer, error) {
	var targets []*url.URL
	for _, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			return nil, err
		}
		targets = append(targets, u)
	}
	var next atomic.Uint64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(targets[(next.Add(1)-1)%uint64(len(targets))])
			pr.Out.Host = pr.In.Host
		},
		Transport:     tr,
		FlushInterval: -1, // streams pass through as they come
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lb := &balancer{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(lb.done)
		_ = lb.srv.Serve(ln)
	}()
	return lb, nil
}

// Close stops the balancer and waits for its server to return.
func (b *balancer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if b.srv.Shutdown(ctx) != nil {
		_ = b.srv.Close()
	}
	<-b.done
}
