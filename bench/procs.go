package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/proctree"
)

// Spec describes a process to start.
type Spec struct {
	Path string
	Args []string
	Env  []string // nil = the bench's environment
	Dir  string
	// Stdout receives the process's standard output; nil discards it.
	Stdout io.Writer
}

// Proc is a process the bench started, in a process group of its own.
type Proc struct {
	Name string
	cmd  *exec.Cmd

	done    chan struct{} // closed once the process has been reaped
	waitErr error
	stderr  *tail
	once    sync.Once
}

// Pid returns the process id, which is also its process group id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stderr returns the last lines the process wrote to stderr.
func (p *Proc) Stderr() string { return p.stderr.String() }

// Stop ends the process and everything it started: SIGTERM to its group
// and to the groups of its descendants (an MCP client puts its servers in
// groups of their own), then SIGKILL to whatever is left after grace.
func (p *Proc) Stop(grace time.Duration) error {
	var err error
	p.once.Do(func() { err = p.stop(grace) })
	return err
}

func (p *Proc) stop(grace time.Duration) error {
	if p.Exited() {
		// Descendants may outlive a process that crashed.
		proctree.KillTree(p.Pid(), nil)
		return nil
	}
	desc := proctree.Descendants(p.Pid())
	proctree.Terminate(p.Pid(), desc)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	proctree.KillTree(p.Pid(), desc)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("stop %s (pid %d): still running after SIGKILL", p.Name, p.Pid())
	}
	// Descendants are reaped by their own parents (or, as orphans, by
	// Close); a zombie counts as gone.
	deadline := time.Now().Add(3 * time.Second)
	for _, d := range desc {
		for proctree.Alive(d.Pid) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

// Procs owns every process the bench starts. Close stops them all, in
// reverse order of start, so nothing outlives the bench, whatever way it
// ends (error, ctrl-C).
type Procs struct {
	mu     sync.Mutex
	list   []*Proc
	closed bool
}

// NewProcs returns an empty set. On Linux the bench becomes a child
// subreaper, so processes orphaned by a peer that died are re-parented
// to the bench and Close can kill them too.
func NewProcs() *Procs {
	becomeSubreaper()
	return &Procs{}
}

// Start starts a process in its own process group. ctx only bounds the
// start; the process lives until Stop or Close.
func (ps *Procs) Start(ctx context.Context, name string, s Spec) (*Proc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Env = s.Env
	cmd.Dir = s.Dir
	cmd.Stdout = s.Stdout
	t := &tail{max: 8 << 10}
	cmd.Stderr = t
	ownGroup(cmd)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, errors.New("processes already closed")
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, done: make(chan struct{}), stderr: t}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	ps.list = append(ps.list, p)
	return p, nil
}

// Adopt registers a process started elsewhere (cmd already started, in a
// group of its own, waited for by its starter) so Close stops it.
func (ps *Procs) Adopt(name string, cmd *exec.Cmd) *Proc {
	p := &Proc{Name: name, cmd: cmd, done: make(chan struct{}), stderr: &tail{max: 1}}
	pid := cmd.Process.Pid
	go func() {
		for proctree.Alive(pid) {
			time.Sleep(20 * time.Millisecond)
		}
		close(p.done)
	}()
	ps.mu.Lock()
	ps.list = append(ps.list, p)
	ps.mu.Unlock()
	return p
}

// Close stops every process, newest first, then kills any orphan that
// was re-parented to the bench.
func (ps *Procs) Close() error {
	ps.mu.Lock()
	ps.closed = true
	list := ps.list
	ps.list = nil
	ps.mu.Unlock()
	var errs []error
	for i := len(list) - 1; i >= 0; i-- {
		errs = append(errs, list[i].Stop(3*time.Second))
	}
	killOrphans()
	return errors.Join(errs...)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
}

// lineWaiter is an io.Writer that reports the first line starting with a
// prefix, for peers that print their address once they listen.
type lineWaiter struct {
	prefix string
	mu     sync.Mutex
	buf    []byte
	found  chan string
	sent   bool
}

func newLineWaiter(prefix string) *lineWaiter {
	return &lineWaiter{prefix: prefix, found: make(chan string, 1)}
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
		if rest, ok := strings.CutPrefix(line, w.prefix); ok {
			w.found <- strings.TrimSpace(rest)
			w.sent = true
			w.buf = nil
			break
		}
	}
	if len(w.buf) > 64<<10 {
		w.buf = w.buf[len(w.buf)-(64<<10):]
	}
	return len(p), nil
}

// wait returns the rest of the first matching line, or an error when p
// exits or the timeout passes first.
func (w *lineWaiter) wait(ctx context.Context, p *Proc, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case s := <-w.found:
		return s, nil
	case <-p.Done():
		return "", fmt.Errorf("%s exited before it was ready: %s", p.Name, lastLines(p.Stderr(), 5))
	case <-t.C:
		return "", fmt.Errorf("%s not ready after %s: %s", p.Name, timeout, lastLines(p.Stderr(), 5))
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// lastLines returns the last n lines of s, joined with " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, " | ")
	if out == "" {
		return "(no stderr)"
	}
	return out
}

// environ returns the bench's environment with the given entries
// replacing or adding to it.
func environ(set ...string) []string {
	env := os.Environ()
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		out := env[:0:0]
		for _, e := range env {
			if !strings.HasPrefix(e, k+"=") {
				out = append(out, e)
			}
		}
		env = append(out, kv)
	}
	return env
}
