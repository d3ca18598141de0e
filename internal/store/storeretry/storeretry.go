// Package storeretry carries the writes of agent runs across a store
// outage. A run that could not store a message used to end at its first
// failed write, leaving its A2A task working and its session's turn
// claimed for as long as the replica lived. Here the writes on a run's
// path wait, retrying with bounded backoff, for the database to come
// back; only after Bound does the run fail, cleanly, with
// store.ErrUnavailable.
//
// The bound is shared: a Retrier remembers since when the store has been
// failing, so every write waits until the same moment (first failure +
// Bound), and once that has passed, writes fail at their first attempt
// until one succeeds. A long outage fails each run once, not each of its
// writes after a fresh Bound.
//
// Only writes that cannot be applied twice are retried: those that were
// certainly not applied (store.SafeToRetry: no connection, or a session
// the server ended in answer to them), and those that are idempotent
// (UpdateTask without a version check). A write whose connection broke
// after it was sent fails at once: retrying an append could store a
// message twice.
//
// Only the writes of runs under way go through here (the daemon wraps
// the kernel's RunWrites and the A2A task store's updates): a request
// that would start new work during an outage is refused at once, so its
// client can go to a replica whose database answers.
package storeretry

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// DefaultBound is how long writes wait for the store when not told.
const DefaultBound = 60 * time.Second

// Retrier retries store operations across an outage of up to Bound.
type Retrier struct {
	bound time.Duration
	log   *slog.Logger
	// first and max wait between attempts; the wait doubles from first.
	first, max time.Duration

	mu   sync.Mutex
	down time.Time // when the current outage began; zero while up

	stop     chan struct{} // closed by Stop
	stopOnce sync.Once
}

// Options configure New. Zero values take the defaults.
type Options struct {
	// Bound is how long writes wait for the store; default DefaultBound,
	// negative: no retry.
	Bound time.Duration
	// FirstWait is the first pause between attempts (default 100 ms),
	// doubled up to MaxWait (default 2 s).
	FirstWait, MaxWait time.Duration
	Logger             *slog.Logger
}

// New returns a Retrier.
func New(opts Options) *Retrier {
	if opts.Bound == 0 {
		opts.Bound = DefaultBound
	}
	if opts.FirstWait <= 0 {
		opts.FirstWait = 100 * time.Millisecond
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = 2 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Retrier{bound: max(opts.Bound, 0), log: log, first: opts.FirstWait, max: opts.MaxWait, stop: make(chan struct{})}
}

// Stop ends the waits under way and makes later writes fail at their
// first refused attempt: for a daemon that is stopping, where waiting
// for the database would only hold up the shutdown (a run's last writes
// use contexts that its cancel does not end).
func (r *Retrier) Stop() { r.stopOnce.Do(func() { close(r.stop) }) }

// Bound is how long writes wait for the store.
func (r *Retrier) Bound() time.Duration { return r.bound }

// Do runs f until it succeeds, fails with something other than
// store.ErrUnavailable, or the outage has lasted Bound (then the last
// error). idempotent says f may be applied twice harmlessly: then even a
// write whose outcome is unknown is retried. ctx ending stops the waits.
func (r *Retrier) Do(ctx context.Context, op string, idempotent bool, f func(ctx context.Context) error) error {
	wait := r.first
	for attempt := 1; ; attempt++ {
		err := f(ctx)
		if err == nil {
			r.up(op, attempt)
			return nil
		}
		if !errors.Is(err, store.ErrUnavailable) || (!idempotent && !store.SafeToRetry(err)) {
			return err
		}
		left := r.left(op)
		if left <= 0 || ctx.Err() != nil || r.stopped() {
			return err
		}
		// Jitter keeps the waiting runs of a replica from hitting the
		// database in lockstep when it returns.
		d := min(wait/2+rand.N(wait/2+1), left)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-r.stop:
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, r.max)
	}
}

func (r *Retrier) stopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// left is how long writes may still wait in the current outage, which
// starts now if none was under way.
func (r *Retrier) left(op string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.down.IsZero() {
		r.down = now
		r.log.Warn("the store is unavailable; writes of runs wait for it", "op", op, "bound", r.bound)
	}
	return r.down.Add(r.bound).Sub(now)
}

// up records that the store answers again.
func (r *Retrier) up(op string, attempt int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down.IsZero() {
		return
	}
	r.log.Info("the store answers again", "op", op, "attempts", attempt, "outage", time.Since(r.down).Round(time.Millisecond))
	r.down = time.Time{}
}

// Sessions returns s whose writes retry through r. It implements
// store.SessionTaskWriter when s does.
func Sessions(s store.SessionStore, r *Retrier) store.SessionStore {
	rs := &sessions{SessionStore: s, r: r}
	if tw, ok := s.(store.SessionTaskWriter); ok {
		return &sessionsTW{sessions: rs, tw: tw}
	}
	return rs
}

type sessions struct {
	store.SessionStore
	r *Retrier
}

func (s *sessions) CreateSession(ctx context.Context, sess store.Session, msgs ...store.Message) error {
	return s.r.Do(ctx, "create session", false, func(ctx context.Context) error {
		return s.SessionStore.CreateSession(ctx, sess, msgs...)
	})
}

func (s *sessions) AppendMessages(ctx context.Context, sessionID string, msgs []store.Message) (out []store.Message, err error) {
	err = s.r.Do(ctx, "append messages", false, func(ctx context.Context) error {
		out, err = s.SessionStore.AppendMessages(ctx, sessionID, msgs)
		return err
	})
	return out, err
}

type sessionsTW struct {
	*sessions
	tw store.SessionTaskWriter
}

var _ store.SessionTaskWriter = (*sessionsTW)(nil)

func (s *sessionsTW) AppendMessagesCreateTask(ctx context.Context, sessionID string, msgs []store.Message, t store.Task) (out []store.Message, err error) {
	err = s.r.Do(ctx, "append messages and create task", false, func(ctx context.Context) error {
		out, err = s.tw.AppendMessagesCreateTask(ctx, sessionID, msgs, t)
		return err
	})
	return out, err
}

func (s *sessionsTW) CreateSessionWithTask(ctx context.Context, sess store.Session, msgs []store.Message, t store.Task) error {
	return s.r.Do(ctx, "create session with task", false, func(ctx context.Context) error {
		return s.tw.CreateSessionWithTask(ctx, sess, msgs, t)
	})
}

// Tasks returns s whose updates retry through r. CreateTask does not
// retry: a new task is new work, which a client had better take to a
// replica whose database answers than wait for this one's.
func Tasks(s store.TaskStore, r *Retrier) store.TaskStore { return &tasks{TaskStore: s, r: r} }

type tasks struct {
	store.TaskStore
	r *Retrier
}

func (s *tasks) UpdateTask(ctx context.Context, t store.Task, prevVersion int64) (v int64, err error) {
	// Without a version check the update replaces the whole task: the
	// same write twice leaves what one leaves.
	err = s.r.Do(ctx, "update task", prevVersion == 0, func(ctx context.Context) error {
		v, err = s.TaskStore.UpdateTask(ctx, t, prevVersion)
		return err
	})
	return v, err
}
