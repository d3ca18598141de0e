package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/store"
)

// Defaults of ClusterOptions.
const (
	DefaultHeartbeat = 5 * time.Second
	DefaultLease     = 15 * time.Second
)

// ClusterOptions configure Join. Zero values take the defaults.
type ClusterOptions struct {
	// Name labels the replica in logs and in the replicas table; its id
	// is Name plus a random suffix. Default the host name.
	Name string
	// Heartbeat is how often the replica records that it is alive, and
	// how often it looks for dead replicas' work; default
	// DefaultHeartbeat.
	Heartbeat time.Duration
	// Lease is how long a replica may stay silent before the others
	// presume it dead; default DefaultLease, and at least two heartbeats.
	Lease time.Duration
	// Backoff is the first wait before reconnecting the notification
	// connection, doubled up to 5 s; default 100 ms.
	Backoff time.Duration
	Logger  *slog.Logger
}

// Cluster is this process's membership in the replicas that share the
// database: agentd processes that together serve one system, any of them
// any request.
//
// Membership is a lease: the replica's row in replicas, whose
// heartbeat_at it renews every Heartbeat with the database's clock. Work
// in progress is marked with the replica's id: the tasks it creates
// (tasks.replica) and the session turns it runs (session_turns). Every
// replica, each Heartbeat, forgets the replicas silent for longer than
// Lease and fails the work marked with an id no live replica has, through
// the hooks the daemon sets (SetTaskReaper, SetTurnReaper): a replica
// killed with -9 leaves nothing "working" for more than Lease plus a
// Heartbeat or two. A replica reaps only once its own heartbeats have
// succeeded for a whole Lease, so that after the database was unreachable
// for everyone, the first replica back does not fail the work of the
// others before they had a chance to renew their leases.
//
// Replicas also talk: Publish sends a notification on the installation's
// channel (LISTEN/NOTIFY), which every other replica receives on a
// connection of its own and hands to the functions Subscribe registered.
// Notifications are not durable: one sent while a replica's connection
// was down is lost to it, so after reconnecting the replica calls the
// OnResync functions, which re-read what they follow from the tables.
type Cluster struct {
	db   *DB
	id   string
	name string
	opts ClusterOptions
	log  *slog.Logger

	mu          sync.Mutex
	subs        map[string]map[int]func(from string, body []byte)
	resyncs     map[int]func()
	next        int
	failTask    func(t store.Task, reason string) (json.RawMessage, string)
	tasksFailed func(ctx context.Context, tasks []store.Task)
	failTurn    func(ctx context.Context, sessionID, reason string) error
	// unlocks are the turns this replica ended but could not release
	// because the database was unavailable: the heartbeat releases them
	// once it answers again (see UnlockTurn).
	unlocks map[string]bool

	cancel context.CancelFunc // ends the heartbeat and the listener
	wg     sync.WaitGroup
	closed sync.Once
}

// Join makes this process a replica: it registers it, opens the
// notification connection, and starts the heartbeat and the listener;
// Close (or Leave) undoes it. The tasks created through db afterwards are
// marked as run by this replica.
func (db *DB) Join(ctx context.Context, opts ClusterOptions) (*Cluster, error) {
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	opts.Lease = max(opts.Lease, 2*opts.Heartbeat)
	if opts.Backoff <= 0 {
		opts.Backoff = 100 * time.Millisecond
	}
	if opts.Name == "" {
		opts.Name, _ = os.Hostname()
		if opts.Name == "" {
			opts.Name = "agentd"
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, fmt.Errorf("join replicas: %w", err)
	}
	id := sanitizeName(opts.Name) + "-" + hex.EncodeToString(suffix[:])
	c := &Cluster{
		db: db, id: id, name: opts.Name, opts: opts, log: log.With("replica", id),
		subs: map[string]map[int]func(string, []byte){}, resyncs: map[int]func(){}, unlocks: map[string]bool{},
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO replicas (id, name, started_at, heartbeat_at) VALUES ($1, $2, now(), now())`, id, opts.Name); err != nil {
		return nil, wrap("join replicas", err)
	}
	// Listening before serving: nothing another replica announces from
	// now on is missed.
	conn, err := c.connectListener(ctx)
	if err != nil {
		_, _ = db.pool.Exec(context.WithoutCancel(ctx), "DELETE FROM replicas WHERE id = $1", id)
		return nil, fmt.Errorf("join replicas: listen for notifications: %w", err)
	}
	db.replica.Store(&id)
	// The replica outlives the call that joins: its goroutines run under
	// a context of their own, ended by Close.
	rctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Go(func() { c.listen(rctx, conn) })
	c.wg.Go(func() { c.beat(rctx) })
	c.log.Info("joined the replicas", "name", opts.Name, "heartbeat", opts.Heartbeat, "lease", opts.Lease)
	return c, nil
}

// sanitizeName keeps a replica name usable inside an id and a
// notification header: no spaces or newlines.
func sanitizeName(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			r = '_'
		}
		out = append(out, r)
		if len(out) == 64 {
			break
		}
	}
	return string(out)
}

// ID is this replica's id: its name and a random suffix, new at each
// start.
func (c *Cluster) ID() string { return c.id }

// Lease is how long a silent replica is presumed alive.
func (c *Cluster) Lease() time.Duration { return c.opts.Lease }

// Close stops the heartbeat and the listener and removes the replica's
// row, so that the others at once fail what it leaves running (its edges
// should have stopped their runs first). Calls after the first do
// nothing.
func (c *Cluster) Close() error {
	var err error
	c.closed.Do(func() {
		c.cancel()
		c.wg.Wait()
		c.db.replica.Store(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = c.db.pool.Exec(ctx, "DELETE FROM replicas WHERE id = $1", c.id)
		err = wrap("leave replicas", err)
		c.log.Info("left the replicas")
	})
	return err
}

// stop ends the heartbeat and the listener without leaving: what a
// killed process leaves behind, for tests.
func (c *Cluster) stop() {
	c.closed.Do(func() {
		c.cancel()
		c.wg.Wait()
		c.db.replica.Store(nil)
	})
}

// SetTaskReaper sets how dead replicas' tasks are failed: fail returns a
// task's new data and state, given why it fails (it must not use the
// store: it runs inside the reaper's read-modify-write), and failed, if
// not nil, hears of the tasks once they are stored failed (to send their
// push notifications). Without a task reaper this replica leaves tasks to
// the others.
func (c *Cluster) SetTaskReaper(fail func(t store.Task, reason string) (json.RawMessage, string), failed func(ctx context.Context, tasks []store.Task)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failTask, c.tasksFailed = fail, failed
}

// SetTurnReaper sets how a dead replica's session turn is failed: fail
// records in the session that its turn was interrupted, and why. While
// it runs, this replica holds the session's turn. Without a turn reaper
// this replica leaves turns to the others.
func (c *Cluster) SetTurnReaper(fail func(ctx context.Context, sessionID, reason string) error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failTurn = fail
}

// beat renews the lease every Heartbeat and reaps once the lease has
// been held for a whole Lease.
func (c *Cluster) beat(ctx context.Context) {
	t := time.NewTicker(c.opts.Heartbeat)
	defer t.Stop()
	healthy := time.Now() // Join just wrote the first heartbeat
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.heartbeat(ctx); err != nil {
			if ctx.Err() == nil {
				c.log.Warn("heartbeat failed; the others presume this replica dead if it stays silent", "lease", c.opts.Lease, "err", err)
			}
			healthy = time.Time{}
			continue
		}
		if healthy.IsZero() {
			healthy = time.Now()
		}
		c.releaseLeftTurns(ctx)
		if time.Since(healthy) >= c.opts.Lease {
			c.reap(ctx)
		}
	}
}

// heartbeat renews the lease. A replica whose row is gone was presumed
// dead while it was alive (paused, or cut off from the database for
// longer than the lease): its tasks and turns were failed. It says so and
// registers again.
func (c *Cluster) heartbeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Heartbeat)
	defer cancel()
	tag, err := c.db.pool.Exec(ctx, "UPDATE replicas SET heartbeat_at = now() WHERE id = $1", c.id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	c.log.Error("this replica was presumed dead by the others (no heartbeat within the lease): the tasks and turns it was running were marked failed; joining again", "lease", c.opts.Lease)
	_, err = c.db.pool.Exec(ctx, `INSERT INTO replicas (id, name, started_at, heartbeat_at) VALUES ($1, $2, now(), now())
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, c.id, c.name)
	return err
}

// reap forgets the replicas whose lease expired and fails the work no
// live replica holds. Every replica reaps; the statements let two
// reapers never fail the same work twice.
func (c *Cluster) reap(ctx context.Context) {
	rows, err := c.db.pool.Query(ctx, `DELETE FROM replicas WHERE heartbeat_at < now() - $1::interval RETURNING id`, c.opts.Lease)
	if err != nil {
		c.log.Warn("looking for dead replicas failed", "err", err)
		return
	}
	dead, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		c.log.Warn("looking for dead replicas failed", "err", err)
		return
	}
	for _, id := range dead {
		c.log.Warn("replica presumed dead: no heartbeat within the lease; failing its running work", "dead_replica", id, "lease", c.opts.Lease)
	}
	c.mu.Lock()
	failTask, tasksFailed, failTurn := c.failTask, c.tasksFailed, c.failTurn
	c.mu.Unlock()
	// Turns first: a task's failure, once stored and pushed, tells its
	// client it may send the next message, which needs the session
	// recorded and released.
	if failTurn != nil {
		if err := c.reapTurns(ctx, failTurn); err != nil && ctx.Err() == nil {
			c.log.Warn("failing dead replicas' turns failed", "err", err)
		}
	}
	if failTask != nil {
		if err := c.reapTasks(ctx, failTask, tasksFailed); err != nil && ctx.Err() == nil {
			c.log.Warn("failing dead replicas' tasks failed", "err", err)
		}
	}
	// Housekeeping rides along: large notifications are read within
	// seconds, and ended sessions' ids expire.
	_, _ = c.db.pool.Exec(ctx, "DELETE FROM bus_payloads WHERE created_at < now() - interval '5 minutes'")
	_, _ = c.db.pool.Exec(ctx, "DELETE FROM mcp_session_ends WHERE expires_at < now()")
}

// deadReason says why work of replica failed.
func (c *Cluster) deadReason(replica string) string {
	if replica == "" {
		return "the agentd process that was running it is gone"
	}
	return fmt.Sprintf("the agentd replica %s that was running it stopped (no heartbeat for %s)", replica, c.opts.Lease)
}

// reapTasks fails the non-terminal tasks whose replica is not live. A
// task that changes between the read and the write is left alone: the
// version check makes a second reaper, or a replica that was not dead
// after all, win over this one.
func (c *Cluster) reapTasks(ctx context.Context, fail func(store.Task, string) (json.RawMessage, string), failed func(context.Context, []store.Task)) error {
	rows, err := c.db.pool.Query(ctx, "SELECT "+taskColumns+`, replica FROM tasks
		WHERE NOT terminal AND replica NOT IN (SELECT id FROM replicas) ORDER BY updated_at, id LIMIT 500`)
	if err != nil {
		return err
	}
	type orphan struct {
		task    store.Task
		replica string
	}
	orphans, err := collect(rows, func(r pgx.Row) (orphan, error) {
		var o orphan
		t, err := scanTaskAnd(r, &o.replica)
		o.task = t
		return o, err
	})
	if err != nil || len(orphans) == 0 {
		return err
	}
	ids := make([]string, len(orphans))
	versions := make([]int64, len(orphans))
	datas := make([]json.RawMessage, len(orphans))
	states := make([]string, len(orphans))
	byID := map[string]store.Task{}
	for i, o := range orphans {
		data, state := fail(o.task, c.deadReason(o.replica))
		ids[i], versions[i], datas[i], states[i] = o.task.ID, o.task.Version, jsonArg(data), state
		o.task.Data, o.task.State, o.task.Terminal, o.task.Version = data, state, true, o.task.Version+1
		byID[o.task.ID] = o.task
	}
	// Each failed task is announced (TopicTaskEnd) by the statement that
	// fails it: the volatile pg_notify in the CTE runs once per row.
	rows, err = c.db.pool.Query(ctx, `WITH u AS (
			UPDATE tasks t SET data = u.data, state = u.state, terminal = true, version = t.version + 1, updated_at = now()
			FROM unnest($1::text[], $2::bigint[], $3::json[], $4::text[]) AS u(id, version, data, state)
			WHERE t.id = u.id AND t.version = u.version AND NOT t.terminal
			RETURNING t.id
		), n AS MATERIALIZED (
			SELECT u.id, pg_notify($5, $6 || u.id) FROM u
		)
		SELECT id FROM n`,
		ids, versions, datas, states, c.db.channel, note(TopicTaskEnd, c.id, "-", ""))
	if err != nil {
		return err
	}
	done, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	out := make([]store.Task, 0, len(done))
	for _, id := range done {
		out = append(out, byID[id])
	}
	if len(out) > 0 {
		c.log.Warn("marked tasks of dead replicas failed", "tasks", len(out))
		if failed != nil {
			failed(ctx, out)
		}
	}
	return nil
}

// reapTurns fails the session turns whose replica is not live: this
// replica takes each turn over (so no new turn starts meanwhile), has the
// session record the interruption, and releases it.
func (c *Cluster) reapTurns(ctx context.Context, fail func(context.Context, string, string) error) error {
	rows, err := c.db.pool.Query(ctx, `WITH dead AS (
			SELECT session_id, replica FROM session_turns
			WHERE replica NOT IN (SELECT id FROM replicas) LIMIT 500 FOR UPDATE SKIP LOCKED
		)
		UPDATE session_turns t SET replica = $1, started_at = now() FROM dead
		WHERE t.session_id = dead.session_id RETURNING t.session_id, dead.replica`, c.id)
	if err != nil {
		return err
	}
	type turn struct{ session, replica string }
	turns, err := collect(rows, func(r pgx.Row) (turn, error) {
		var t turn
		err := r.Scan(&t.session, &t.replica)
		return t, err
	})
	if err != nil {
		return err
	}
	for _, t := range turns {
		if err := fail(ctx, t.session, c.deadReason(t.replica)); err != nil {
			c.log.Warn("recording an interrupted turn failed", "session", t.session, "err", err)
		}
		if err := c.UnlockTurn(context.WithoutCancel(ctx), t.session); err != nil {
			c.log.Warn("releasing an interrupted turn failed", "session", t.session, "err", err)
		}
	}
	if len(turns) > 0 {
		c.log.Warn("marked session turns of dead replicas failed", "sessions", len(turns))
	}
	return nil
}

// TryLockTurn claims session id for one turn across replicas; false if a
// turn of it runs anywhere (here, or on another replica: until that one
// ends it, or dies and is reaped). A claim this replica could not
// release (UnlockTurn during an outage) is taken over rather than
// refused: its turn has ended, and the new turn may have it.
func (c *Cluster) TryLockTurn(ctx context.Context, sessionID string) (bool, error) {
	c.mu.Lock()
	left := c.unlocks[sessionID]
	delete(c.unlocks, sessionID)
	c.mu.Unlock()
	q := `INSERT INTO session_turns (session_id, replica, started_at) VALUES ($1, $2, now()) ON CONFLICT (session_id) DO NOTHING`
	if left {
		q = `INSERT INTO session_turns (session_id, replica, started_at) VALUES ($1, $2, now())
			ON CONFLICT (session_id) DO UPDATE SET started_at = now() WHERE session_turns.replica = EXCLUDED.replica`
	}
	tag, err := c.db.pool.Exec(ctx, q, sessionID, c.id)
	if err != nil {
		if left {
			c.mu.Lock()
			c.unlocks[sessionID] = true // still to release
			c.mu.Unlock()
		}
		return false, wrap(fmt.Sprintf("claim session %q", sessionID), err)
	}
	return tag.RowsAffected() == 1, nil
}

// UnlockTurn releases this replica's claim on session id. When the
// database is unavailable the release is kept, and made by the heartbeat
// as soon as the database answers again: the turn has ended, and a claim
// left behind would refuse every later turn of the session ("busy") for
// as long as this replica lives. So it returns nil then too.
func (c *Cluster) UnlockTurn(ctx context.Context, sessionID string) error {
	err := c.unlock(ctx, sessionID)
	if errors.Is(err, store.ErrUnavailable) {
		c.mu.Lock()
		c.unlocks[sessionID] = true
		c.mu.Unlock()
		c.log.Warn("could not release a session's turn: the database is unavailable; released once it answers", "session", sessionID)
		return nil
	}
	return err
}

func (c *Cluster) unlock(ctx context.Context, sessionID string) error {
	_, err := c.db.pool.Exec(ctx, "DELETE FROM session_turns WHERE session_id = $1 AND replica = $2", sessionID, c.id)
	return wrap(fmt.Sprintf("release session %q", sessionID), err)
}

// releaseLeftTurns makes the releases UnlockTurn could not. Each is made
// under mu, so that a new turn of the same session (TryLockTurn, which
// forgets the pending release first) never has its claim deleted.
func (c *Cluster) releaseLeftTurns(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.unlocks {
		if err := c.unlock(ctx, id); err != nil {
			c.log.Warn("releasing a session's turn failed; trying again at the next heartbeat", "session", id, "err", err)
			return
		}
		delete(c.unlocks, id)
		c.log.Info("released a session's turn left claimed by the database outage", "session", id)
	}
}

// Replica is one live replica as the replicas table lists it.
type Replica struct {
	ID, Name               string
	StartedAt, HeartbeatAt time.Time
}

// Replicas lists the replicas whose lease holds, oldest first.
func (c *Cluster) Replicas(ctx context.Context) ([]Replica, error) {
	rows, err := c.db.pool.Query(ctx, `SELECT id, name, started_at, heartbeat_at FROM replicas
		WHERE heartbeat_at >= now() - $1::interval ORDER BY started_at, id`, c.opts.Lease)
	if err != nil {
		return nil, wrap("list replicas", err)
	}
	out, err := collect(rows, func(r pgx.Row) (Replica, error) {
		var x Replica
		err := r.Scan(&x.ID, &x.Name, &x.StartedAt, &x.HeartbeatAt)
		return x, err
	})
	return out, wrap("list replicas", err)
}
