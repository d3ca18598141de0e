package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/principal"
)

// The change stream: GET /api/events is one server-sent event stream per
// dashboard tab telling it what changed (a run started or ended, an
// approval is waiting or was decided, an MCP server changed state, an
// audit record was written, an A2A task changed state, agents or tools
// changed), so that the page asks for data only when there is news
// instead of polling every route every few seconds.
//
// An event is a notice, not the data: it names the topic and what
// changed, and the page reads the route it already reads (which checks
// the principal's rights as always). A principal hears only of what it
// may see (Change.Owner), so a notice leaks nothing the routes would not
// show.
//
// Bounded: each subscriber has at most ChangesOptions.Buffer notices
// waiting (repeats of one notice are merged); one that falls further
// behind is dropped (its stream ends) rather than buffered without limit,
// and its browser reconnects with Last-Event-ID, getting what it missed
// from a short history, or "reset" (read everything again) when that is
// gone. Nothing here starts a goroutine: a stream is served on its
// request's own goroutine, which ends with the request or with Close.

// Topics of the change stream.
const (
	TopicRuns      = "runs"      // a run started or ended (id: run id; what: started, ended, failed)
	TopicApprovals = "approvals" // an approval request is waiting or left the queue (id: its id)
	TopicMCP       = "mcp"       // an upstream MCP server changed (id: its name; what: its state, or removed)
	TopicTools     = "tools"     // the tool set changed
	TopicAgents    = "agents"    // an agent was created, updated or deleted
	TopicAudit     = "audit"     // audit records were written (id: the tool; what: the outcome)
	TopicA2A       = "a2a"       // an A2A task was created or changed state (id: task id; what: state)
	TopicHealth    = "health"    // the daemon is stopping (what: stopping)
)

// AllTopics are the change stream's topics, in the order the document
// lists them.
var AllTopics = []string{TopicRuns, TopicApprovals, TopicMCP, TopicTools, TopicAgents, TopicAudit, TopicA2A, TopicHealth}

// Change is one notice of the change stream.
type Change struct {
	Topic string `json:"topic"`
	// What happened, in a word of the topic's (see the Topic constants).
	What string `json:"what,omitempty"`
	// ID names what changed: a run, an approval, a server, a task.
	ID string `json:"id,omitempty"`
	// Owner is the principal the change belongs to: only it and admins
	// hear of it. "" is a change everyone may hear of (a server's state).
	Owner string `json:"-"`
	seq   uint64
}

// key is what makes two notices repeats of each other.
func (c Change) key() string { return c.Topic + "\x00" + c.What + "\x00" + c.ID }

// ChangesOptions configure a Changes; zero values take the defaults.
type ChangesOptions struct {
	// Buffer is how many notices may wait for one subscriber (default
	// 128); one more drops the subscriber.
	Buffer int
	// History is how many notices are kept for reconnecting subscribers
	// (Last-Event-ID); default 512.
	History int
	// MaxSubscribers bounds the open streams (default 256); more are
	// refused with 503.
	MaxSubscribers int
	// Heartbeat is how often an idle stream carries a comment, so that
	// proxies keep it open and a dead client is noticed (default 25 s).
	Heartbeat time.Duration
	// WriteTimeout bounds one write to a client: a client that does not
	// read is dropped after it (default 10 s).
	WriteTimeout time.Duration
	Logger       *slog.Logger
}

// Changes is the change stream's hub. Publish never blocks; it is safe
// for concurrent use.
type Changes struct {
	opts ChangesOptions
	log  *slog.Logger
	// instance prefixes event ids: a Last-Event-ID of another process
	// (the daemon restarted) is recognised as such.
	instance string

	mu      sync.Mutex
	seq     uint64
	history []Change // the last opts.History notices (up to twice that), oldest first
	subs    map[*subscriber]struct{}
	closed  bool
	done    chan struct{} // closed by Close
}

// subscriber is one open stream.
type subscriber struct {
	who    *principal.Principal
	topics map[string]bool
	// pending are the notices not yet written, at most Buffer; guarded
	// by Changes.mu.
	pending []Change
	wake    chan struct{} // cap 1: pending is not empty
	dropped chan struct{} // closed when the hub gave up on it
	gone    bool
}

var (
	errChangesClosed  = errors.New("the daemon is stopping")
	errTooManyStreams = errors.New("too many change streams open")
)

// NewChanges returns an empty hub.
func NewChanges(opts ChangesOptions) *Changes {
	if opts.Buffer <= 0 {
		opts.Buffer = 128
	}
	if opts.History <= 0 {
		opts.History = 512
	}
	if opts.MaxSubscribers <= 0 {
		opts.MaxSubscribers = 256
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 25 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Changes{opts: opts, log: log, instance: hex.EncodeToString(b[:]), subs: map[*subscriber]struct{}{}, done: make(chan struct{})}
}

// Publish tells every subscriber that may see c. It never blocks: a
// subscriber with Buffer notices waiting is dropped.
func (c *Changes) Publish(ch Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.publishLocked(ch)
}

func (c *Changes) publishLocked(ch Change) {
	c.seq++
	ch.seq = c.seq
	c.history = append(c.history, ch)
	if len(c.history) >= 2*c.opts.History {
		// Trimmed in halves, not by one on every notice: a busy gateway
		// publishes an audit notice per tool call. The history holds
		// History notices or more.
		c.history = append(c.history[:0], c.history[len(c.history)-c.opts.History:]...)
	}
	for s := range c.subs {
		if !s.wants(ch) {
			continue
		}
		if !s.add(ch, c.opts.Buffer) {
			c.dropLocked(s)
			c.log.Info("change stream dropped: its client is not reading", "principal", s.who.Name, "waiting", len(s.pending))
		}
	}
}

// wants reports whether s subscribed to ch's topic and may see it. The
// daemon stopping is told to every stream, whatever its topics.
func (s *subscriber) wants(ch Change) bool {
	return (s.topics[ch.Topic] || ch.Topic == TopicHealth) && (ch.Owner == "" || s.who.MaySee(ch.Owner))
}

// add queues ch, merging it with a waiting repeat; false when s already
// has max notices waiting.
func (s *subscriber) add(ch Change, max int) bool {
	k := ch.key()
	if i := slices.IndexFunc(s.pending, func(p Change) bool { return p.key() == k }); i >= 0 {
		// The repeat moves to the end with the newer sequence number, so
		// the ids a client sees still rise.
		s.pending = slices.Delete(s.pending, i, i+1)
	} else if len(s.pending) >= max {
		return false
	}
	s.pending = append(s.pending, ch)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

func (c *Changes) dropLocked(s *subscriber) {
	if s.gone {
		return
	}
	s.gone = true
	delete(c.subs, s)
	close(s.dropped)
}

// Subscribers is the number of open streams.
func (c *Changes) Subscribers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs)
}

// Close ends every stream, after telling them the daemon is stopping,
// and refuses new ones. It is idempotent.
func (c *Changes) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.publishLocked(Change{Topic: TopicHealth, What: "stopping"})
	c.closed = true
	close(c.done)
}

// subscribe opens a stream for who on topics. lastID is the client's
// Last-Event-ID: the notices after it are queued at once when the history
// still holds them; reset is true when it does not (or lastID is of
// another process), and the client must read everything again.
func (c *Changes) subscribe(who *principal.Principal, topics []string, lastID string) (s *subscriber, reset bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, false, errChangesClosed
	}
	if len(c.subs) >= c.opts.MaxSubscribers {
		return nil, false, errTooManyStreams
	}
	s = &subscriber{who: who, topics: map[string]bool{}, wake: make(chan struct{}, 1), dropped: make(chan struct{})}
	for _, t := range topics {
		s.topics[t] = true
	}
	if lastID != "" {
		reset = true
		inst, n, ok := strings.Cut(lastID, "-")
		seq, perr := strconv.ParseUint(n, 10, 64)
		// The history holds every notice after seq when its oldest is at
		// most seq+1 (or nothing happened since).
		if ok && perr == nil && inst == c.instance && seq <= c.seq &&
			(seq == c.seq || len(c.history) > 0 && c.history[0].seq <= seq+1) {
			reset = false
			for _, ch := range c.history {
				if ch.seq > seq && s.wants(ch) && !s.add(ch, c.opts.Buffer) {
					reset = true // more missed than a stream may owe: start over
					s.pending = nil
					break
				}
			}
		}
	}
	c.subs[s] = struct{}{}
	return s, reset, nil
}

func (c *Changes) unsubscribe(s *subscriber) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.gone {
		s.gone = true
		delete(c.subs, s)
	}
}

// take returns s's waiting notices and the current event id.
func (c *Changes) take(s *subscriber) ([]Change, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out, c.idOf(c.seq)
}

func (c *Changes) idOf(seq uint64) string { return c.instance + "-" + strconv.FormatUint(seq, 10) }

// parseTopics reads the topics parameter: a comma-separated list of
// AllTopics; empty means all.
func parseTopics(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return AllTopics, nil
	}
	var out []string
	for t := range strings.SplitSeq(v, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(AllTopics, t) {
			return nil, &Error{Status: http.StatusBadRequest, Code: "invalid", Field: "topics",
				Message: fmt.Sprintf("topics: unknown topic %q (want a comma-separated list of %s)", t, strings.Join(AllTopics, ", "))}
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Hello is the data of the first event of every stream: the daemon's
// health, so the page needs no request for it, and the topics heard.
type Hello struct {
	Health
	Topics []string `json:"topics"`
	// Reset is true when the client's Last-Event-ID could not be
	// resumed: it missed notices and must read everything again.
	Reset bool `json:"reset"`
}

// events serves GET /api/events.
func (a *API) events(w http.ResponseWriter, r *http.Request) error {
	c := a.opts.Changes
	if c == nil {
		return errorf(http.StatusServiceUnavailable, "unavailable", "the change stream is not enabled")
	}
	topics, err := parseTopics(r.URL.Query().Get("topics"))
	if err != nil {
		return err
	}
	lastID := r.Header.Get("Last-Event-ID")
	if lastID == "" {
		// EventSource cannot set headers on its first request; a page
		// that reloads passes the id it had here.
		lastID = r.URL.Query().Get("last_event_id")
	}
	s, reset, err := c.subscribe(who(r), topics, lastID)
	switch {
	case errors.Is(err, errChangesClosed):
		return errorf(http.StatusServiceUnavailable, "shutting_down", "the daemon is stopping")
	case errors.Is(err, errTooManyStreams):
		return errorf(http.StatusServiceUnavailable, "unavailable", "too many change streams are open (%d): close a dashboard tab", c.opts.MaxSubscribers)
	case err != nil:
		return err
	}
	defer c.unsubscribe(s)

	rc := http.NewResponseController(w)
	// Each write gets its own deadline (the server's WriteTimeout would
	// end the stream after minutes; none would let a client that stopped
	// reading hold this goroutine forever).
	write := func(f func() error) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(c.opts.WriteTimeout))
		if f() != nil {
			return false
		}
		return rc.Flush() == nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	pending, id := c.take(s)
	hello := Hello{Health: a.healthNow(), Topics: topics, Reset: reset}
	if !write(func() error {
		// retry: how long the browser waits before reconnecting.
		return writeEvent(w, "hello", id, hello, "retry: 2000\n")
	}) {
		return nil
	}
	heartbeat := time.NewTicker(c.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		for _, ch := range pending {
			if !write(func() error { return writeEvent(w, "change", c.idOf(ch.seq), ch, "") }) {
				return nil
			}
		}
		pending = nil
		select {
		case <-r.Context().Done():
			return nil
		case <-s.dropped:
			return nil
		case <-c.done:
			// The stopping notice was queued before done closed.
			pending, _ = c.take(s)
			for _, ch := range pending {
				if !write(func() error { return writeEvent(w, "change", c.idOf(ch.seq), ch, "") }) {
					break
				}
			}
			return nil
		case <-heartbeat.C:
			if !write(func() error { _, err := fmt.Fprint(w, ": ping\n\n"); return err }) {
				return nil
			}
		case <-s.wake:
			pending, _ = c.take(s)
		}
	}
}

// writeEvent writes one server-sent event.
func writeEvent(w http.ResponseWriter, event, id string, data any, extra string) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%sevent: %s\nid: %s\ndata: %s\n\n", extra, event, id, b)
	return err
}
