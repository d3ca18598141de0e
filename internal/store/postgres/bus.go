package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// ListenerApplicationName is the application_name of a replica's
// notification connection.
const ListenerApplicationName = "agentd-listener"

// Publish sends body on topic to every other replica: a notification on
// the installation's channel, delivered when it is sent (Publish runs no
// transaction of its own). Notifications one replica publishes one after
// another arrive in that order. A body too large for NOTIFY is stored in
// bus_payloads and the notification carries its id. Topics hold no space
// or newline; bodies are text.
func (c *Cluster) Publish(ctx context.Context, topic, body string) error {
	payload := note(topic, c.id, "-", body)
	if len(payload) > maxNotify {
		var id int64
		err := c.db.pool.QueryRow(ctx, `WITH p AS (INSERT INTO bus_payloads (payload, created_at) VALUES ($1, now()) RETURNING id)
			SELECT p.id FROM p, pg_notify($2, $3 || p.id || E'\n')`,
			body, c.db.channel, topic+" "+c.id+" ").Scan(&id)
		return wrap("notify replicas ("+topic+")", err)
	}
	_, err := c.db.pool.Exec(ctx, "SELECT pg_notify($1, $2)", c.db.channel, payload)
	return wrap("notify replicas ("+topic+")", err)
}

// Subscribe calls f with the sender and body of every notification on
// topic from another replica (or from a store written by a process that
// is no replica: sender ""). f runs on the listener's goroutine, in
// order: it must not block. The returned function unsubscribes.
func (c *Cluster) Subscribe(topic string, f func(from string, body []byte)) (cancel func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.next
	c.next++
	if c.subs[topic] == nil {
		c.subs[topic] = map[int]func(string, []byte){}
	}
	c.subs[topic][id] = f
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.subs[topic], id)
	}
}

// OnResync registers f, called (on the listener's goroutine, so it must
// not block) after the notification connection was lost and opened
// again: notifications sent meanwhile are lost, and f should re-read
// what it follows. The returned function unregisters it.
func (c *Cluster) OnResync(f func()) (cancel func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.next
	c.next++
	c.resyncs[id] = f
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.resyncs, id)
	}
}

// connectListener opens the dedicated notification connection: one
// outside the pool, since LISTEN belongs to a session and a pooled
// connection is shared.
func (c *Cluster) connectListener(ctx context.Context) (*pgx.Conn, error) {
	cfg := c.db.pool.Config().ConnConfig.Copy()
	// Named apart from the pool's, so that an operator (or a test) can
	// find it in pg_stat_activity.
	cfg.RuntimeParams["application_name"] = ListenerApplicationName
	ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{c.db.channel}.Sanitize()); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// listen delivers notifications until Close, reconnecting with backoff
// when the connection breaks and resyncing after each reconnect.
func (c *Cluster) listen(ctx context.Context, conn *pgx.Conn) {
	for {
		err := c.receive(ctx, conn)
		conn.Close(context.Background())
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("lost the connection that carries replica notifications; reconnecting", "err", err)
		delay := c.opts.Backoff
		for {
			// Full jitter: replicas that lost the server together do not
			// reconnect in step.
			wait := delay/2 + rand.N(delay/2+1)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			conn, err = c.connectListener(ctx)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			c.log.Debug("reconnecting the notification connection failed", "err", err)
			delay = min(2*delay, 5*time.Second)
		}
		c.log.Info("notification connection restored; resyncing")
		c.resync()
	}
}

// receive reads notifications from conn until it fails or Close. A quiet
// connection is pinged every 30 s: a server gone without closing the
// socket would otherwise go unnoticed, and with it every notification.
func (c *Cluster) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
			continue
		}
		c.dispatch(ctx, n.Payload)
	}
}

// dispatch hands one notification to its topic's subscribers.
func (c *Cluster) dispatch(ctx context.Context, payload string) {
	topic, from, ref, body, ok := parseNote(payload)
	if !ok || from == c.id {
		return
	}
	c.mu.Lock()
	n := len(c.subs[topic])
	c.mu.Unlock()
	if n == 0 {
		return
	}
	if ref != 0 {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := c.db.pool.QueryRow(qctx, "SELECT payload FROM bus_payloads WHERE id = $1", ref).Scan(&body)
		cancel()
		if err != nil {
			c.log.Warn("reading a large notification failed; dropped", "topic", topic, "id", strconv.FormatInt(ref, 10), "err", err)
			return
		}
	}
	c.mu.Lock()
	fs := make([]func(string, []byte), 0, len(c.subs[topic]))
	for _, f := range c.subs[topic] {
		fs = append(fs, f)
	}
	c.mu.Unlock()
	for _, f := range fs {
		f(from, []byte(body))
	}
}

// resync calls the OnResync functions.
func (c *Cluster) resync() {
	c.mu.Lock()
	fs := make([]func(), 0, len(c.resyncs))
	for _, f := range c.resyncs {
		fs = append(fs, f)
	}
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
