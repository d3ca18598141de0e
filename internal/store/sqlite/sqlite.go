// Package sqlite is agentd's store.Store backend on a single SQLite file,
// using the pure-Go modernc.org/sqlite driver so that agentd stays one
// static binary.
//
// The database runs in WAL mode with two connection pools: one connection
// for writes and several read-only connections for reads. SQLite allows one
// writer at a time; funnelling every write through one connection queues
// writers inside the process (honouring their contexts) instead of letting
// them collide on the file lock and fail with SQLITE_BUSY, while WAL lets
// the readers proceed alongside the writer on a consistent snapshot.
// Write transactions begin IMMEDIATE so that, should another process share
// the file, a writer waits (busy_timeout) for the lock up front rather than
// failing when a read turns into a write.
//
// Measured with 8 goroutines x 200 read-then-write transactions: a shared
// 8-connection pool with deferred transactions lost about 75% of them to
// SQLITE_BUSY (busy_timeout cannot help a reader that wants to upgrade);
// with IMMEDIATE transactions none failed, but SQLite's busy handler polls
// with back-off, so waits were unfair (worst case several hundred ms); the
// single writer connection had no failures and equal or better throughput,
// since database/sql hands the connection to waiters in turn.
//
// On that connection one goroutine runs every write transaction, and
// coalesces the writes that queue up while it commits into one SQLite
// transaction, each in its own savepoint (group commit; see commit.go).
//
// The schema is created and upgraded by the numbered SQL files embedded
// from migrations/, each applied once, in order, in one transaction.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/internal/store"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

var _ store.Store = (*DB)(nil)

// defaultBusyTimeout bounds how long a statement waits for a lock held by
// another process before failing with "database is locked".
const defaultBusyTimeout = 5 * time.Second

// Options configures Open. The zero value (or nil) means defaults.
type Options struct {
	// Logger receives migration and start-up messages; nil discards them.
	Logger *slog.Logger
	// BusyTimeout is how long a statement waits for a lock another process
	// holds before failing; zero means 5s.
	BusyTimeout time.Duration
}

// DB is a store.Store on one SQLite database file. It is safe for
// concurrent use.
type DB struct {
	w     *sql.DB // exactly one connection: every write goes through it
	r     *sql.DB // query_only connections for reads
	log   *slog.Logger
	stmts statements

	writes    chan *writeReq // to the committer
	closing   chan struct{}  // closed by Close: the committer stops
	committer sync.WaitGroup // the committer goroutine

	// Checkpoints (checkpoint.go), the committer's alone: pages the
	// writer appended to the WAL since the last checkpoint, and the last
	// checkpoint failure's text, logged once while it lasts.
	walPages      int
	checkpointErr string

	// auditPending counts the audit records committed to audit_pending
	// and not yet moved into audit (auditfold.go).
	auditPending atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

// Open opens the database at path, creating it (mode 0600, and its
// directory with mode 0700) if it does not exist, and brings its schema up
// to date.
func Open(ctx context.Context, path string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = defaultBusyTimeout
	}
	abs, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	if err := prepareFile(abs, log); err != nil {
		return nil, err
	}

	// Per-connection settings, applied by the driver to every new
	// connection of a pool.
	//
	// synchronous=NORMAL: in WAL mode a commit appends the transaction to
	// the -wal file with write(2) before COMMIT returns, and only the
	// checkpoint fsyncs. Data handed to write(2) lives in the kernel's page
	// cache, which a process crash (kill -9, panic, OOM kill) does not
	// touch, so every committed transaction survives the death of agentd;
	// the crash test in this package checks exactly that. What NORMAL gives
	// up is durability against an OS crash or power loss, which may roll
	// back the last transactions committed since the previous fsync, never
	// corrupt the database. agentd's records (chat turns, task states, audit
	// lines) are not worth an fsync per message; FULL would cost one on
	// every commit.
	base := url.Values{}
	base.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	base.Add("_pragma", "foreign_keys(1)")
	base.Add("_pragma", "synchronous(NORMAL)")

	db := &DB{log: log, writes: make(chan *writeReq), closing: make(chan struct{})}
	if err := db.openPools(ctx, abs, base); err != nil {
		_ = db.Close() // the error that made Open fail says more
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	log.Debug("store opened", "path", abs)
	return db, nil
}

// openPools opens the writer, brings the schema up to date, and then opens
// the readers. On error the caller closes whatever was opened.
func (db *DB) openPools(ctx context.Context, path string, base url.Values) error {
	wq := cloneValues(base)
	wq.Set("_txlock", "immediate")
	// temp_store=MEMORY on the writer: a statement inside a larger
	// transaction (every caller's SAVEPOINT in a group commit, every row
	// of an audit batch, which touches five indexes) keeps a statement
	// journal of the pages it changes so that it can be undone alone. With
	// the default, that journal is a temporary file and each page costs a
	// write(2): 27% of the CPU of an audit batch was those writes. The
	// journal holds only the pages one statement touches, so memory is
	// cheap; the readers keep the default (their sorts may be large).
	wq.Add("_pragma", "temp_store(MEMORY)")
	// No checkpoint in a commit: the committer runs them when idle
	// (checkpoint.go).
	wq.Add("_pragma", "wal_autocheckpoint(0)")
	w, err := sql.Open("sqlite", dsn(path, wq))
	if err != nil {
		return err
	}
	db.w = w
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := db.initWriter(ctx); err != nil {
		return err
	}
	db.committer.Go(db.commitLoop)
	if err := db.migrate(ctx); err != nil {
		return err
	}
	if err := db.stmts.prepare(ctx, w); err != nil {
		return err
	}
	// Records a crash left pending join the log before anyone reads it.
	if err := db.countPending(ctx); err != nil {
		return err
	}
	if err := db.foldAudit(ctx); err != nil {
		return err
	}

	rq := cloneValues(base)
	rq.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", dsn(path, rq))
	if err != nil {
		return err
	}
	db.r = r
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(5 * time.Minute)
	if err := r.PingContext(ctx); err != nil {
		return wrap("connect reader", err)
	}
	return nil
}

// checkPath rejects names the two-pool design cannot serve and makes the
// path absolute.
func checkPath(path string) (string, error) {
	switch {
	case path == "":
		return "", errors.New("open database: empty path")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		// Each pooled connection would see its own in-memory database, and
		// URIs would bypass the permission handling below.
		return "", fmt.Errorf("open database %q: want a file path", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("open database %q: %w", path, err)
	}
	return abs, nil
}

// prepareFile creates the directory (0700) and an empty database file
// (0600) if they are missing, so that SQLite never creates them with the
// process umask: the database holds conversations and must not be readable
// by other users. SQLite gives the -wal and -shm files the main file's mode.
func prepareFile(path string, log *slog.Logger) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create database directory %s: %w", dir, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return fmt.Errorf("create database %s: %w", path, err)
		}
		return nil
	case errors.Is(err, fs.ErrExist):
		fi, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("stat database %s: %w", path, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("open database %s: not a regular file", path)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			log.Warn("database file is accessible to other users", "path", path, "mode", fi.Mode().Perm().String())
		}
		return nil
	default:
		return fmt.Errorf("create database %s: %w", path, err)
	}
}

// dsn builds the driver's data source name: a file: URI, so that any
// character in path is escaped rather than parsed as a parameter.
func dsn(path string, q url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path // Windows: file:///C:/...
	}
	return u.String()
}

// cloneValues returns a copy of v that can be changed independently.
func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// initWriter switches the database to WAL (a property of the file, so the
// writer sets it once, before any reader connects) and checks that the
// connection settings took effect.
func (db *DB) initWriter(ctx context.Context) error {
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return wrap("enable WAL journal", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("enable WAL journal: journal mode is %q (does the filesystem support shared memory?)", mode)
	}
	var fk int
	if err := db.w.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		return wrap("check foreign keys", err)
	}
	if fk != 1 {
		return errors.New("check foreign keys: foreign key enforcement is off")
	}
	return nil
}

// Ping reads from the database file through the reader pool.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return wrap("ping database", db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one))
}

// Close closes the database. Writes already handed to the committer
// finish first; later ones fail. Readers go before the writer so that the
// writer is the last connection: SQLite then checkpoints the WAL into the
// main file and removes it. Calls after the first return the first call's
// result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		close(db.closing)
		db.committer.Wait()
		if db.w != nil && db.stmts.foldAudit != nil {
			db.foldNow(1) // a stopped daemon leaves no record pending
		}
		var errs []error
		if db.r != nil {
			errs = append(errs, db.r.Close())
		}
		errs = append(errs, db.stmts.close())
		if db.w != nil {
			// Lets SQLite refresh the query planner's statistics, as it
			// recommends before closing a connection; failure is harmless.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if _, err := db.w.ExecContext(ctx, "PRAGMA optimize"); err != nil {
				db.log.Debug("pragma optimize", "err", err)
			}
			cancel()
			errs = append(errs, db.w.Close())
		}
		if err := errors.Join(errs...); err != nil {
			db.closeErr = fmt.Errorf("close database: %w", err)
		}
	})
	return db.closeErr
}

// exec runs one statement as a write transaction; bytes is as for write.
func (db *DB) exec(ctx context.Context, bytes int, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := db.write(ctx, bytes, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// read runs fn in a read transaction, so that all of fn's queries see one
// snapshot.
func (db *DB) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to undo
	return fn(tx)
}

// now is the store's clock for timestamps the caller left zero.
func now() time.Time { return time.Now().UTC() }

// orNow returns t, or the current time if t is zero.
func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t
}

// toDB encodes a time as microseconds since the Unix epoch.
func toDB(t time.Time) int64 { return t.UnixMicro() }

// fromDB decodes a time stored by toDB.
func fromDB(us int64) time.Time { return time.UnixMicro(us).UTC() }

// jsonToDB stores a JSON payload as TEXT (NULL if absent): the tables are
// STRICT, and a []byte would be bound as a BLOB.
func jsonToDB(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// boolToDB stores a bool as 0 or 1.
func boolToDB(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// rowsAffected turns "no row matched" into store.ErrNotFound.
func rowsAffected(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// scanner is what *sql.Row and *sql.Rows have in common.
type scanner interface {
	Scan(dest ...any) error
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		x, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// limitOffset appends LIMIT and OFFSET clauses for a filter's Limit (0 = no
// limit) and Offset.
func limitOffset(q string, args []any, limit, offset int) (string, []any) {
	if limit <= 0 && offset <= 0 {
		return q, args
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit; OFFSET needs a LIMIT clause
	}
	return q + " LIMIT ? OFFSET ?", append(args, limit, max(offset, 0))
}

// statements are the hot path's writes, prepared once on the writer: with
// a single connection, preparing on every call would be pure parsing
// overhead (SQLite spends more time there than executing these).
type statements struct {
	createSession *sql.Stmt
	reserveSeqs   *sql.Stmt
	insertMessage *sql.Stmt
	createTask    *sql.Stmt
	updateTask    *sql.Stmt
	insertAudit   *sql.Stmt
	// insertAudits[i] inserts auditChunks[i] records in one statement,
	// without RETURNING (a batch's IDs are not reported).
	insertAudits [len(auditChunks)]*sql.Stmt
	// insertAuditsDirect is insertAudits into audit itself, for batches
	// too large to gain from audit_pending (auditfold.go).
	insertAuditsDirect [len(auditChunks)]*sql.Stmt
	// foldAudit and clearPending move audit_pending into audit
	// (auditfold.go).
	foldAudit    *sql.Stmt
	clearPending *sql.Stmt
}

// auditChunks are the row counts of the multi-row audit inserts, largest
// first: a batch is written as whole chunks, greedily. One statement per
// chunk instead of per record pays the statement's fixed costs (the
// database/sql round trip, the VM start, the statement journal of a
// statement inside a transaction) once per chunk.
var auditChunks = [...]int{64, 16, 4, 1}

const auditColumns = "time, agent, session_id, tool, args_digest, decision, outcome, detail, untrusted, duration_ns, principal"

// insertAuditsSQL is the INSERT of n audit rows into table (audit_pending
// or audit: auditfold.go).
func insertAuditsSQL(table string, n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + auditColumns + ") VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?,?,?)")
	}
	return b.String()
}

// statementSQL is one of the statements and its SQL.
type statementSQL struct {
	stmt **sql.Stmt
	sql  string
}

// all lists the statements with their SQL.
func (s *statements) all() []statementSQL {
	all := []statementSQL{
		{&s.createSession, "INSERT INTO sessions (" + sessionColumns + ", last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"},
		{&s.reserveSeqs, `UPDATE sessions SET last_seq = last_seq + ?, updated_at = MAX(updated_at, ?)
			WHERE id = ? RETURNING last_seq`},
		{&s.insertMessage, "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)"},
		{&s.createTask, "INSERT INTO tasks (" + taskColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)"},
		{&s.updateTask, `UPDATE tasks SET context_id = ?, agent = ?, state = ?, terminal = ?, owner = ?, data = ?,
				version = version + 1, updated_at = ?
			WHERE id = ? AND (? = 0 OR version = ?) RETURNING version`},
		{&s.insertAudit, `INSERT INTO audit
			(time, agent, session_id, tool, args_digest, decision, outcome, detail, untrusted, duration_ns, principal)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`},
	}
	for i, n := range auditChunks {
		all = append(all, statementSQL{&s.insertAudits[i], insertAuditsSQL("audit_pending", n)},
			statementSQL{&s.insertAuditsDirect[i], insertAuditsSQL("audit", n)})
	}
	all = append(all, statementSQL{&s.foldAudit, auditFoldInsertSQL}, statementSQL{&s.clearPending, auditFoldDeleteSQL})
	return all
}

// prepare prepares every statement on w.
func (s *statements) prepare(ctx context.Context, w *sql.DB) error {
	for _, p := range s.all() {
		st, err := w.PrepareContext(ctx, p.sql)
		if err != nil {
			return wrap("prepare statements", err)
		}
		*p.stmt = st
	}
	return nil
}

// close releases the prepared statements.
func (s *statements) close() error {
	var errs []error
	for _, p := range s.all() {
		if *p.stmt != nil {
			errs = append(errs, (*p.stmt).Close())
		}
	}
	return errors.Join(errs...)
}
