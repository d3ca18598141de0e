// Package postgres is agentd's store.Store backend on PostgreSQL, for
// deployments that outgrow one SQLite file: several agentd processes can
// share one database. It uses github.com/jackc/pgx/v5 and its connection
// pool.
//
// Where the SQLite backend funnels writes through one connection and
// group-commits them, this backend needs no committer: PostgreSQL runs
// transactions from many connections at once and already shares one WAL
// flush among the commits that arrive together. What pays here is round
// trips, so every operation is one statement where it can be: a session's
// first turn inserts the session and its messages in one statement; an
// append reserves Seqs and inserts the messages in one; AppendAuditBatch
// writes a whole batch of audit records in one INSERT from arrays. Rows
// locked by those statements (a session's last_seq, a task's version)
// order concurrent writers, in this process or another.
//
// The schema is created and upgraded by the numbered SQL files embedded
// from migrations/, each applied once, in order, in one transaction that
// first takes an advisory lock, so that replicas starting together apply
// them once. It lives in the connection's current schema (the first of
// its search_path), so one database can hold several installations.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentd/agentd/internal/store"
)

var _ store.Store = (*DB)(nil)

// DefaultConnectTimeout bounds connecting to the server at Open, so that
// a daemon pointed at an unreachable or wrong database fails at start
// instead of hanging.
const DefaultConnectTimeout = 5 * time.Second

// Options configures Open. The zero value (or nil) means defaults.
type Options struct {
	// Logger receives migration and start-up messages; nil discards them.
	Logger *slog.Logger
	// ConnectTimeout bounds each connection attempt and the first
	// connection at Open; zero means DefaultConnectTimeout, or the URL's
	// connect_timeout if it has one.
	ConnectTimeout time.Duration
}

// DB is a store.Store on a PostgreSQL database. It is safe for concurrent
// use.
type DB struct {
	pool *pgxpool.Pool
	log  *slog.Logger
	// channel is the NOTIFY channel of this installation (see
	// channelFor), set by migrate.
	channel string
	// replica is the id of the replica this process joined as (Join),
	// "" before: the tasks it creates carry it.
	replica atomic.Pointer[string]

	closeOnce sync.Once
}

// Open connects to the database at connURL (a postgres:// URL or a
// keyword/value string, as libpq takes them; pool settings such as
// pool_max_conns may be added to it), checks it is reachable, and brings
// its schema up to date. Errors never contain the URL's password.
func Open(ctx context.Context, connURL string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	target := Redact(connURL)
	cfg, err := poolConfig(connURL, opts.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", target, err)
	}
	db := &DB{pool: pool, log: log}
	if err := db.ping(ctx, cfg.ConnConfig.ConnectTimeout); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", target, err)
	}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: %w", target, err)
	}
	log.Debug("store opened", "database", target)
	return db, nil
}

// poolConfig parses connURL and fills in agentd's defaults.
func poolConfig(connURL string, timeout time.Duration) (*pgxpool.Config, error) {
	if strings.TrimSpace(connURL) == "" {
		return nil, errors.New("connect to postgres: empty connection URL")
	}
	cfg, err := pgxpool.ParseConfig(connURL)
	if err != nil {
		// pgx's message names the URL with its password masked; it says
		// what is wrong with it, which Redact cannot.
		return nil, fmt.Errorf("invalid PostgreSQL connection URL: %w", err)
	}
	cc := cfg.ConnConfig
	switch {
	case timeout > 0:
		cc.ConnectTimeout = timeout
	case cc.ConnectTimeout == 0:
		cc.ConnectTimeout = DefaultConnectTimeout
	}
	if _, ok := cc.RuntimeParams["application_name"]; !ok {
		cc.RuntimeParams["application_name"] = "agentd" // visible in pg_stat_activity
	}
	return cfg, nil
}

// ping makes the pool's first connection within timeout: pgxpool connects
// lazily, and the first query would otherwise find out that the server is
// unreachable.
func (db *DB) ping(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.pool.Ping(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("no answer within %v: %w", timeout, err)
		}
		return err
	}
	return nil
}

// Close closes every connection of the pool; it waits for connections in
// use to be released. Calls after the first do nothing.
func (db *DB) Close() error {
	db.closeOnce.Do(db.pool.Close)
	return nil
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return wrap("ping database", db.pool.Ping(ctx))
}

// Redact returns connURL fit for logs and errors: the password, wherever
// the URL or keyword/value string carries it, becomes "xxxxx". It does not
// rely on the URL being well formed: a password with an unescaped '/' or
// '@' is still masked whole.
func Redact(connURL string) string {
	scheme, rest, isURL := strings.Cut(connURL, "://")
	if !isURL || (scheme != "postgres" && scheme != "postgresql") {
		return kvPassword.ReplaceAllString(connURL, "${1}=xxxxx")
	}
	// Everything up to the last '@' is userinfo, whatever it contains.
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		if user, _, hasPassword := strings.Cut(rest[:i], ":"); hasPassword {
			rest = user + ":xxxxx" + rest[i:]
		}
	}
	base, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return scheme + "://" + rest
	}
	params := strings.Split(query, "&")
	for i, kv := range params {
		k, _, _ := strings.Cut(kv, "=")
		if dk, err := url.QueryUnescape(k); err != nil || strings.Contains(strings.ToLower(dk), "password") {
			params[i] = k + "=xxxxx"
		}
	}
	return scheme + "://" + base + "?" + strings.Join(params, "&")
}

// kvPassword matches a password in a keyword/value string, quoted or not.
var kvPassword = regexp.MustCompile(`(\w*password)\s*=\s*(?:'(?:[^'\\]|\\.)*'?|\S*)`)

// now is the store's clock for timestamps the caller left zero.
func now() time.Time { return time.Now().UTC() }

// orNow returns t, or now if t is zero.
func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t
}

// stored is t as the database keeps it: microseconds, UTC.
func stored(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// jsonArg passes a JSON payload: NULL if absent. An empty payload is
// absent too, as the SQLite backend returns it: json refuses "".
func jsonArg(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// textArg passes free text as bytea (see migrations/0001_init.sql). Never
// nil: nil would be NULL.
func textArg(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

// notFound turns "no row matched" into store.ErrNotFound.
func notFound(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// collect scans every row with scan and closes rows.
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (T, error)) ([]T, error) {
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

// limitArg is a filter's Limit as a LIMIT parameter: NULL (no limit) for
// zero or less.
func limitArg(limit int) any {
	if limit <= 0 {
		return nil
	}
	return int64(limit)
}

// where joins conditions into a WHERE clause ("" for none).
func where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// param appends v to args and returns its placeholder.
func param(args *[]any, v any) string {
	*args = append(*args, v)
	return fmt.Sprintf("$%d", len(*args))
}
