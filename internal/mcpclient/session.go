package mcpclient

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one live connection to a server: the SDK session, the
// transport-level connection under it, and for stdio the process.
type session struct {
	cs   *mcp.ClientSession
	conn mcp.Connection // captured at Connect, to close under the SDK
	proc *process       // stdio only

	closeIdle       func() // drops idle HTTP connections; nil for stdio
	cancelTransport func() // ends the context the transport connected with

	// rejected is set (before the SDK sees the response) when an HTTP
	// request carrying the session id was answered 400 or 404: the
	// upstream forgot the session.
	rejected atomic.Bool

	ended chan struct{} // closed when the SDK connection has finished

	broken     chan struct{}
	brokenOnce sync.Once
	brokenErr  error // set before broken is closed

	closeOnce sync.Once
	started   time.Time
	watchers  sync.WaitGroup

	logs logGate

	tasks taskWatch // what the wire says of MCP tasks (tasks.go)
}

// logGate lets a call wait for the log messages and progress
// notifications read before its result to be handled: the SDK hands
// notifications to handlers on a goroutine of their own, while it hands a
// result to its call at once, so without the wait a call's last log
// messages or progress could reach its caller after the call's result, or
// find the call gone (and be dropped: issue 30).
type logGate struct {
	read atomic.Uint64 // log messages the frame readers passed on

	mu      sync.Mutex
	handled uint64
	wake    chan struct{} // closed and replaced when handled grows
}

// saw counts a log message or progress read (frameEvents.callNotification).
func (g *logGate) saw() { g.read.Add(1) }

// done counts a log message or progress handled.
func (g *logGate) done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.handled++
	if g.wake != nil {
		close(g.wake)
		g.wake = nil
	}
}

// wait waits until every log message read so far has been handled, for
// at most limit: a message the SDK drops undelivered (malformed params) is
// then counted as handled, so later calls do not wait for it again.
func (g *logGate) wait(ctx context.Context, limit time.Duration) {
	n := g.read.Load()
	var timeout <-chan time.Time
	for {
		g.mu.Lock()
		if g.handled >= n {
			g.mu.Unlock()
			return
		}
		if g.wake == nil {
			g.wake = make(chan struct{})
		}
		wake := g.wake
		g.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(limit)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-timeout:
			g.mu.Lock()
			g.handled = max(g.handled, n)
			g.mu.Unlock()
			return
		}
	}
}

func newSession() *session {
	return &session{broken: make(chan struct{}), ended: make(chan struct{}), started: time.Now()}
}

// fail marks the session broken; the first reason wins.
func (s *session) fail(err error) {
	s.brokenOnce.Do(func() {
		s.brokenErr = err
		close(s.broken)
	})
}

func (s *session) isBroken() bool {
	select {
	case <-s.broken:
		return true
	default:
		return false
	}
}

// reason returns why the session broke, once it has.
func (s *session) reason() error {
	select {
	case <-s.broken:
		return s.brokenErr
	default:
		return nil
	}
}

// errClosing breaks a session that is being torn down on purpose.
var errClosing = errors.New("session closed")

// watch starts the goroutines that notice the session ending: the SDK
// connection finishing (a read error, a keepalive failure, a 404 for
// the session) and, for stdio, the process exiting.
func (s *session) watch() {
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		err := s.cs.Wait()
		close(s.ended)
		if err == nil {
			err = errors.New("connection closed by the server")
		}
		s.fail(err)
	}()
	if s.proc == nil {
		return
	}
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		select {
		case <-s.proc.exited:
		case <-s.broken:
			return
		}
		// Whatever the leader left behind in its group goes too, so that
		// stdout reaches EOF now; if something escaped the group and
		// keeps stdout open, stop waiting for it.
		s.proc.killGroup()
		s.fail(s.proc.exitError())
		select {
		case <-time.After(500 * time.Millisecond):
			s.proc.stdout.Close()
		case <-s.ended:
		}
	}()
}

// close tears the session down without waiting for in-flight calls: the
// transport connection is closed first (which fails those calls at
// once), then the process is stopped, then the SDK session is closed.
func (s *session) close() {
	s.closeOnce.Do(func() {
		s.fail(errClosing)
		if s.conn != nil {
			_ = s.conn.Close()
		}
		if s.proc != nil {
			s.proc.stop()
		}
		if s.cs != nil {
			_ = s.cs.Close()
		}
		if s.cancelTransport != nil {
			s.cancelTransport()
		}
		s.watchers.Wait()
		if s.closeIdle != nil {
			s.closeIdle()
		}
	})
}

// captureTransport remembers the Connection its inner transport made, so
// that close can cut it under the SDK. It must not wrap the Connection:
// the SDK finds optional behaviour on it by type assertion.
type captureTransport struct {
	inner mcp.Transport
	sess  *session
}

// Connect implements mcp.Transport. The legacy SSE transport ties its
// event stream to the context it connects with, so the transport gets a
// context of the session's lifetime; the connect deadline still bounds
// the connect itself.
func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	c, err := t.inner.Connect(lctx)
	stop()
	if err != nil {
		cancel()
		return nil, err
	}
	t.sess.conn = c
	t.sess.cancelTransport = cancel
	return c, nil
}

var _ mcp.Transport = (*captureTransport)(nil)
