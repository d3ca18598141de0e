// Package auditlog writes the audit log in batches, one commit for many
// tool calls.
//
// Every tool call produces one audit record. Writing each in a
// transaction of its own made each call pay a database commit (about a
// fifth of a gateway call's CPU in the last profile). A Writer queues
// records and one goroutine writes whatever has accumulated in one batch,
// so under load a commit carries many records. Nothing is dropped: when
// the bounded queue is full, callers wait; Close drains the queue; a
// reader (QueryAudit) first waits for every record queued before it, so
// the API still reads its own writes.
//
// With Options.Durable (the daemon's setting) the writer is a group
// commit: AppendAudit returns once the batch holding its record is
// committed, so a tool call's answer never leaves before its audit
// record is durable, and a kill -9 loses no record of an answered call.
// The writer does not linger then: it commits what is queued at once,
// and whatever arrives during that commit forms the next batch, so a
// batch grows with the load (one record at c=1, many at c=16) and no
// caller waits for a timer, except in one case: when other tool calls
// are under way (Ahead), the writer gives their records up to
// siblingWait to join the commit, as PostgreSQL's commit_delay does
// when commit_siblings transactions are active. Without Durable, AppendAudit returns at once
// and a kill -9 may lose the records queued and not yet committed: at
// most one batch plus the queue.
package auditlog

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// BatchAppender is implemented by stores that can write many records in
// one transaction. Stores without it get one AppendAudit per record.
type BatchAppender interface {
	AppendAuditBatch(ctx context.Context, recs []store.AuditRecord) error
}

// Options configure a Writer; the zero value means defaults.
type Options struct {
	// Queue is how many records may wait to be written (default 4096).
	Queue int
	// MaxBatch is the most records written in one batch (default 512).
	MaxBatch int
	// Linger is how long the writer waits, after the first record of a
	// batch, for more to join it (default 10ms; negative: not at all). At
	// low concurrency records arrive one at a time, and without a wait
	// each would pay a commit of its own; with it, a commit carries what
	// a few milliseconds of calls produced. A Flush (every read) ends the
	// wait at once, so reads never see it; a kill -9 may lose what
	// accumulated during it, which is part of the bound in
	// docs/reliability.md.
	Linger time.Duration
	// Durable makes AppendAudit wait until its record is committed
	// (group commit; see the package doc). Linger then applies only to
	// records nobody waits for, which there are none of.
	Durable bool
	Logger  *slog.Logger
}

// Writer is an asynchronous, batching store.AuditStore in front of st.
type Writer struct {
	st       store.AuditStore
	log      *slog.Logger
	maxBatch int
	linger   time.Duration
	durable  bool
	// commits recycles the channels durable appends wait on (one per
	// call otherwise: an allocation on every tool call). The Writer's
	// own: a channel belongs to the goroutines of the Writer that made
	// it (testing/synctest holds tests to that).
	commits sync.Pool

	// mu guards closed; senders hold it for reading while they enqueue, so
	// Close (which holds it for writing) never closes q under a sender.
	mu     sync.RWMutex
	closed bool
	q      chan item
	wake   chan struct{} // cap 1: see nudge
	done   chan struct{}

	// ahead counts the tool calls under way whose records are still to
	// come (Ahead); arrived (cap 1) tells the writer a durable record was
	// queued while it waits for them. idle counts the batches left to
	// commit without waiting (writer only; see awaitSiblings).
	ahead   atomic.Int64
	arrived chan struct{}
	idle    int
}

// item is a record to write, or (rec == nil) a flush marker whose channel
// is closed once everything queued before it is written. A record whose
// caller waits for its commit (Durable) has committed, which gets the
// batch's outcome.
type item struct {
	rec       *store.AuditRecord
	flushed   chan struct{}
	committed chan error
}

// defaultLinger is Options.Linger's default. A SQLite commit costs about
// as much as 20 audit inserts, nearly all of it the WAL writes of the
// pages it touched (the table's, one per index, the AUTOINCREMENT
// counter's), about 0.35 ms of CPU on the bench machine
// (BenchmarkAuditBatch: batch=1 against batch=64). With 2ms, a gateway
// at c=1 (1,400 calls/s) committed every 3 records; with 10ms, every 14,
// which saves it about a fifth of its CPU per call. A kill -9 may lose at
// most 10ms more of records (TestCrashKill9Audit measures the loss).
const defaultLinger = 10 * time.Millisecond

// ErrClosed is returned by Flush after Close.
var ErrClosed = errors.New("audit log closed")

// New starts a Writer over st. Close it to drain and stop its goroutine.
func New(st store.AuditStore, opts *Options) *Writer {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Queue <= 0 {
		o.Queue = 4096
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 512
	}
	if o.Linger == 0 {
		o.Linger = defaultLinger
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Writer{st: st, log: o.Logger, maxBatch: o.MaxBatch, linger: o.Linger, durable: o.Durable, q: make(chan item, o.Queue), wake: make(chan struct{}, 1), done: make(chan struct{}), arrived: make(chan struct{}, 1)}
	go w.run()
	return w
}

// AppendAudit queues r; the id is 0 because it is assigned when the
// batch is written. Durable, it returns once r's batch is committed, with
// the batch's error; otherwise at once. When the queue is full it waits
// for room (ctx is not consulted: an audit record is never given up).
// After Close it writes r synchronously.
func (w *Writer) AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error) {
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return w.st.AppendAudit(context.WithoutCancel(ctx), r)
	}
	if w.durable {
		ch, _ := w.commits.Get().(chan error)
		if ch == nil {
			ch = make(chan error, 1)
		}
		w.q <- item{rec: &r, committed: ch}
		w.mu.RUnlock()
		select {
		case w.arrived <- struct{}{}:
		default:
		}
		err := <-ch
		w.commits.Put(ch)
		return 0, err
	}
	w.q <- item{rec: &r}
	full := len(w.q) >= w.fullAt()
	w.mu.RUnlock()
	if full {
		w.nudge()
	}
	return 0, nil
}

// Ahead is told +1 when a tool call starts whose record will be appended
// and -1 just before it is (tool.RunnerOptions.AuditAhead). A durable
// commit lets the records of calls under way join it (awaitSiblings).
func (w *Writer) Ahead(delta int) { w.ahead.Add(int64(delta)) }

// Sibling waits: how long a durable commit waits for the records of
// calls under way, and how many batches skip the wait after one that
// waited in vain (the calls under way were slow ones: a long tool
// call must not slow every short one beside it).
//
// At c=16 through the gateway a commit (seven WAL pages: the table's,
// one per index, the AUTOINCREMENT counter's) carried 1.1 records on
// average without the wait, a third of agentd's CPU; the wait is about
// one call's worth of the pipeline, so a batch takes what the other
// calls finish meanwhile. At c=1 no call is under way beside the one
// waiting, and nothing waits.
const (
	siblingWait = 500 * time.Microsecond
	siblingSkip = 16
)

// Flush waits until every record queued before the call is written.
func (w *Writer) Flush(ctx context.Context) error {
	ch := make(chan struct{})
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return nil // Close drained the queue
	}
	select {
	case w.q <- item{flushed: ch}:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	w.nudge()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// QueryAudit reads the log after the records queued before it are written.
func (w *Writer) QueryAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	if err := w.Flush(ctx); err != nil {
		return nil, err
	}
	return w.st.QueryAudit(ctx, f)
}

// CountAudit counts the log after the records queued before it are
// written, as QueryAudit reads it.
func (w *Writer) CountAudit(ctx context.Context, f store.AuditFilter) (int, error) {
	if err := w.Flush(ctx); err != nil {
		return 0, err
	}
	return w.st.CountAudit(ctx, f)
}

// Close writes what is queued and stops the writer. Later appends are
// written synchronously.
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.q)
	}
	w.mu.Unlock()
	w.nudge()
	<-w.done
	return nil
}

func (w *Writer) run() {
	defer close(w.done)
	batch := make([]item, 0, w.maxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for first := range w.q {
		batch = w.gather(append(batch[:0], first), timer)
		w.write(batch)
	}
}

// gather waits out the linger time after batch's first item, then adds
// to batch what is queued. The writer sleeps through the linger: records
// queued meanwhile do not wake it (at low concurrency each wake-up cost
// more CPU than the record's insert). It is woken early by a nudge: a
// flush marker was queued (a reader is waiting), the queue holds a full
// batch, or the queue was closed (Close is waiting; range in run then
// ends the loop once the queue is empty). A nudge left over from an
// earlier batch only ends one wait early.
func (w *Writer) gather(batch []item, timer *time.Timer) []item {
	if batch[0].rec != nil && batch[0].committed == nil && w.linger >= 0 && len(w.q) < w.fullAt()-1 {
		timer.Reset(w.linger)
		select {
		case <-timer.C:
		case <-w.wake:
			timer.Stop()
		}
	}
	if batch[0].committed != nil {
		w.awaitSiblings(timer)
	}
	for len(batch) < w.maxBatch {
		select {
		case it, ok := <-w.q:
			if !ok {
				return batch
			}
			batch = append(batch, it)
		default:
			return batch
		}
	}
	return batch
}

// awaitSiblings waits, for at most siblingWait, while tool calls are
// under way whose records could join the batch (see Ahead). A record
// arriving does not end the wait while more are still to come; a flush,
// a full queue or Close do. The first record's caller is waiting, so a
// wait in which no record arrived makes the next siblingSkip batches
// commit at once.
func (w *Writer) awaitSiblings(timer *time.Timer) {
	if w.idle > 0 {
		w.idle--
		return
	}
	if w.ahead.Load() <= 0 || len(w.q) >= w.fullAt()-1 {
		return
	}
	select { // an arrival signalled before this batch began is stale
	case <-w.arrived:
	default:
	}
	timer.Reset(siblingWait)
	defer timer.Stop()
	joined := false
	for w.ahead.Load() > 0 {
		select {
		case <-w.arrived:
			joined = true
			if len(w.q) >= w.fullAt()-1 {
				return
			}
		case <-timer.C:
			if !joined && len(w.q) == 0 {
				w.idle = siblingSkip
			}
			return
		case <-w.wake:
			return
		}
	}
}

// fullAt is how many queued records end the linger: a full batch, or a
// full queue when the queue is smaller than a batch (otherwise callers
// waiting for room would wait out the linger, the queue never holding a
// full batch).
func (w *Writer) fullAt() int { return min(w.maxBatch, cap(w.q)) }

// nudge ends the writer's linger (see gather).
func (w *Writer) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// write stores the records of batch, then releases its flush markers.
func (w *Writer) write(batch []item) {
	recs := make([]store.AuditRecord, 0, len(batch))
	for _, it := range batch {
		if it.rec != nil {
			recs = append(recs, *it.rec)
		}
	}
	if len(recs) > 0 {
		// Records outlive the calls that produced them: no caller's ctx.
		ctx := context.Background()
		var err error
		if b, ok := w.st.(BatchAppender); ok {
			err = b.AppendAuditBatch(ctx, recs)
		} else {
			for _, r := range recs {
				if _, e := w.st.AppendAudit(ctx, r); e != nil {
					err = errors.Join(err, e)
				}
			}
		}
		if err != nil {
			w.log.Error("audit write failed", "records", len(recs), "err", err)
		}
		for _, it := range batch {
			if it.committed != nil {
				it.committed <- err
			}
		}
	}
	for _, it := range batch {
		if it.flushed != nil {
			close(it.flushed)
		}
	}
}
