package mcpclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/sandbox"
)

// process is one stdio server: a child in its own process group, whose
// stdin and stdout are pipes this package owns (not exec's, so that Wait
// never closes a pipe the SDK is still reading) and whose stderr goes to
// the daemon log.
type process struct {
	cmd    *exec.Cmd
	box    *sandbox.Cmd // the confined command cmd belongs to; nil when unconfined
	tmp    string       // the server's private TMPDIR in the sandbox, removed at stop
	pgid   int
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	grace  time.Duration
	log    *slog.Logger
	redact func(string) string

	exited  chan struct{} // closed when the child has been reaped
	waitErr error         // set before exited is closed

	stderrDone chan struct{}
	stopOnce   sync.Once

	mu      sync.Mutex
	lastErr string // the last stderr line, for connect errors
}

// lastStderr returns the last line the server wrote to stderr.
func (p *process) lastStderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

// childEnv builds the child's environment: PATH, HOME and TMPDIR, then
// the names the server lists, each taken from lookup; unset names are
// left out. home overrides HOME when set.
func childEnv(names []string, lookup func(string) (string, bool), home string) []string {
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	seen := map[string]bool{}
	var env []string
	add := func(k, v string) {
		if seen[k] {
			return
		}
		seen[k] = true
		env = append(env, k+"="+v)
	}
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if k == "HOME" && home != "" {
			add(k, home)
			continue
		}
		if v, ok := lookup(k); ok {
			add(k, v)
		}
	}
	for _, k := range names {
		if v, ok := lookup(k); ok {
			add(k, v)
		}
	}
	return env
}

// withEnv returns env with name set to value, replacing any earlier
// value.
func withEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// envValue returns the value of name in env.
func envValue(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// lookPath finds command the way a shell would, but in the child's PATH
// rather than the daemon's. A command with a slash is used as is
// (relative to dir).
func lookPath(command, pathEnv, dir string) (string, error) {
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := isExecutable(p); err != nil {
			return "", err
		}
		return command, nil
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			// A relative PATH entry would resolve against the daemon's
			// working directory: never what a config author means.
			continue
		}
		p := filepath.Join(d, command)
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH", command)
}

func isExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// confinement is how a stdio server is sandboxed: nil box runs it as
// the daemon's user with the daemon's view (tests of this package).
type confinement struct {
	box    *sandbox.Launcher
	policy func(cfg config.MCPServer, path string) sandbox.Policy
}

// startProcess spawns the server of cfg, confined by conf.
// redact is applied to every stderr line kept or logged.
func startProcess(cfg config.MCPServer, env []string, grace time.Duration, log *slog.Logger, redact func(string) string, conf confinement) (*process, error) {
	t := cfg.Transport
	path, err := lookPath(t.Command, envValue(env, "PATH"), t.Dir)
	if err != nil {
		return nil, fmt.Errorf("start %q: %w", t.Command, err)
	}
	if env == nil {
		env = []string{} // nil would mean the daemon's environment
	}
	args := append([]string{t.Command}, t.Args...)
	var (
		cmd *exec.Cmd
		box *sandbox.Cmd
		tmp string
	)
	if conf.box != nil {
		pol := sandbox.Policy{Network: sandbox.NetworkAny}
		if conf.policy != nil {
			pol = conf.policy(cfg, path)
		}
		if _, confined := conf.box.Plan(pol); confined {
			// A private HOME and TMPDIR: /tmp is shared with every other
			// program, and the configured HOME (AGENTD_HOME by default)
			// is out of the sandbox's reach.
			if tmp, err = os.MkdirTemp("", "agentd-mcp-"+cfg.Name+"-"); err != nil {
				return nil, fmt.Errorf("start %q: sandbox temp dir: %w", t.Command, err)
			}
			pol.Write = append(append([]string(nil), pol.Write...), tmp)
			env = withEnv(withEnv(env, "TMPDIR", tmp), "HOME", tmp)
		}
		box, err = conf.box.Command(context.Background(), "mcp server "+cfg.Name, pol, path, args, env)
		if err != nil {
			if tmp != "" {
				os.RemoveAll(tmp)
			}
			return nil, fmt.Errorf("start %q: %w", t.Command, err)
		}
		cmd = box.Cmd
	} else {
		cmd = exec.Command(path)
		cmd.Args = args
		cmd.Env = env
	}
	cmd.Dir = t.Dir
	ownGroup(cmd)

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	p := &process{
		cmd:        cmd,
		box:        box,
		tmp:        tmp,
		stdin:      inW,
		stdout:     outR,
		stderr:     errR,
		grace:      grace,
		log:        log,
		redact:     redact,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	started := make(chan error, 1)
	go p.run(started)
	err = <-started
	if err != nil && tmp != "" {
		os.RemoveAll(tmp)
	}
	// The child has its copies; ours of its ends must go so that EOF on
	// stdout means every writer is gone.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("start %q: %w", t.Command, err)
	}
	p.pgid = cmd.Process.Pid // Setpgid with Pgid 0: the group is the child's pid
	go p.drainStderr()
	return p, nil
}

// run starts the child, reports the outcome on started and, if it
// started, reaps it. The goroutine keeps its OS thread from fork to reap:
// the parent death signal set on Linux (see ownGroup) fires when the
// forking thread ends, and Go ends a thread only when a goroutine exits
// locked to it. Locking just around Start would not do: the thread would
// go back to the pool, where any goroutine that locks it and exits (in
// a dependency, now or later) would kill a healthy server. It costs no
// thread: Wait holds one in waitid for the child's life anyway.
func (p *process) run(started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := p.cmd.Start
	if p.box != nil {
		start = p.box.Start // puts the trampoline in its cgroup, sends the policy
	}
	if err := start(); err != nil {
		started <- err
		return
	}
	started <- nil
	p.waitErr = p.cmd.Wait()
	if p.box != nil {
		p.box.Done()
	}
	close(p.exited)
}

// maxStderrLine bounds one logged stderr line.
const maxStderrLine = 4096

// drainStderr logs the child's stderr line by line until every writer is
// gone. Reading it is not optional: a child blocks once the pipe is full.
func (p *process) drainStderr() {
	defer close(p.stderrDone)
	br := bufio.NewReaderSize(p.stderr, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		if text := p.redact(strings.TrimSpace(string(line))); text != "" {
			p.log.Debug("mcp server stderr", "line", text)
			p.mu.Lock()
			p.lastErr = truncate(text, 300)
			p.mu.Unlock()
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return
		}
	}
}

// stop ends the server: close its stdin (what the spec asks first), give
// it a moment, SIGTERM the whole group, wait up to the grace, SIGKILL the
// group. The group is killed even when the leader has already exited, so
// that nothing it started survives. stop returns once the leader is
// reaped and the stderr reader has finished.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(100 * time.Millisecond):
			// A sandboxed server is PID 1 of its namespace, where a
			// SIGTERM it has no handler for is dropped, not fatal:
			// waiting the grace out would only delay the SIGKILL.
			if p.box == nil || !p.box.Confined() || sandbox.CatchesSIGTERM(p.cmd.Process.Pid) {
				_ = signalGroup(p.pgid, sigTerm)
				select {
				case <-p.exited:
				case <-time.After(p.grace):
				}
			}
		}
		_ = signalGroup(p.pgid, sigKill)
		<-p.exited
		p.stdout.Close()
		// stderr ends when the last process of the group holding it dies;
		// a child that escaped the group could keep it open forever.
		select {
		case <-p.stderrDone:
		case <-time.After(p.grace):
			p.log.Warn("mcp server left a process holding its stderr open")
		}
		p.stderr.Close() // unblocks the reader if it is still waiting
		<-p.stderrDone
		if p.tmp != "" {
			os.RemoveAll(p.tmp)
		}
	})
}

// killGroup SIGKILLs what is left of the group after the leader died on
// its own, so that its stdout reaches EOF now.
func (p *process) killGroup() {
	_ = signalGroup(p.pgid, sigKill)
}

// exitError describes how the child ended, for status and logs.
func (p *process) exitError() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return fmt.Errorf("server process exited: %s", ee.ProcessState.String())
	}
	if p.waitErr != nil {
		return fmt.Errorf("server process: %w", p.waitErr)
	}
	return errors.New("server process exited")
}
