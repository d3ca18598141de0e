package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// markerEnv, in a process's environment, makes this package's init run
// the trampoline instead of the program. Its value is the mode.
const markerEnv = "AGENTD_SANDBOX_TRAMPOLINE"

// specFD is the trampoline's descriptor for the pipe the spec comes on.
const specFD = 3

// spec is what the daemon tells the trampoline.
type spec struct {
	Path   string   `json:"path"`
	Args   []string `json:"args"`
	Env    []string `json:"env"`
	Policy Policy   `json:"policy"`
	// InNS says the trampoline is root in namespaces of its own (so it
	// has capabilities to use and then drop); NetNS that it has its own
	// network namespace.
	InNS     bool `json:"in_ns"`
	NetNS    bool `json:"net_ns"`
	Landlock int  `json:"landlock"`
	// Nproc says RLIMIT_NPROC is the process limit (no pids cgroup).
	Nproc bool `json:"nproc"`
}

// Cmd is a confined command: an exec.Cmd that runs the trampoline.
// Set Stdin, Stdout, Stderr, Dir and SysProcAttr's Setpgid and Pdeathsig
// on Cmd as usual (do not replace SysProcAttr), then call Start, not
// Cmd.Start, and Done after Wait.
type Cmd struct {
	*exec.Cmd
	// Enforced is what the policy gets on this machine.
	Enforced Enforced
	spec     []byte
	cgroup   string
	maxProcs uint64
}

var cgroupSeq atomic.Uint64

// Command builds a confined command running path with args (args[0]
// included) and exactly env. m is Probe's answer; p must pass Check.
// Without any mechanism the command runs unconfined: callers decide
// beforehand, from m.Enforce(p).Missing, whether that is allowed.
func Command(ctx context.Context, m Mechanisms, p Policy, path string, args, env []string) (*Cmd, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if env == nil {
		env = []string{}
	}
	enf := m.Enforce(p)
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: find own executable for the trampoline: %w", err)
	}
	s := spec{Path: path, Args: args, Env: env, Policy: p, InNS: m.UserNS, Landlock: m.LandlockABI}
	s.NetNS = m.UserNS && p.Network != NetworkAny
	s.Nproc = p.MaxProcs > 0 && m.PidsCgroup == ""
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = []string{"agentd-sandbox", path}
	cmd.Env = []string{markerEnv + "=run"}
	if m.UserNS {
		cmd.SysProcAttr = nsAttr(s.NetNS)
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	c := &Cmd{Cmd: cmd, Enforced: enf, spec: b, maxProcs: p.MaxProcs}
	if p.MaxProcs > 0 && m.PidsCgroup != "" {
		c.cgroup = filepath.Join(m.PidsCgroup, fmt.Sprintf("agentd-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	}
	return c, nil
}

// Start starts the trampoline, puts it in its pids cgroup, and sends it
// the spec; the trampoline execs the target only once the spec is
// complete, so the target never runs outside its cgroup.
func (c *Cmd) Start() error {
	if c.spec == nil {
		return c.Cmd.Start() // unconfined
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	c.ExtraFiles = append([]*os.File{r}, c.ExtraFiles...)
	if c.cgroup != "" {
		if err := os.Mkdir(c.cgroup, 0o755); err != nil {
			r.Close()
			w.Close()
			return fmt.Errorf("sandbox: create cgroup: %w", err)
		}
		if err := os.WriteFile(filepath.Join(c.cgroup, "pids.max"), []byte(strconv.FormatUint(c.maxProcs, 10)), 0o644); err != nil {
			r.Close()
			w.Close()
			c.Done()
			return fmt.Errorf("sandbox: set pids.max: %w", err)
		}
	}
	err = c.Cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		c.Done()
		return err
	}
	if c.cgroup != "" {
		if err := os.WriteFile(filepath.Join(c.cgroup, "cgroup.procs"), []byte(strconv.Itoa(c.Process.Pid)), 0o644); err != nil {
			w.Close() // EOF before a full spec: the trampoline gives up
			_ = c.Process.Kill()
			return fmt.Errorf("sandbox: join cgroup: %w", err)
		}
	}
	_, err = w.Write(c.spec)
	w.Close()
	if err != nil {
		_ = c.Process.Kill()
		return fmt.Errorf("sandbox: send spec: %w", err)
	}
	return nil
}

// Done removes what the sandbox made for the command; call it after
// Wait. The namespace's processes die with its init, but the kernel
// reaps them asynchronously, so the cgroup may be busy for a moment.
func (c *Cmd) Done() {
	if c.cgroup == "" {
		return
	}
	for range 50 {
		if err := os.Remove(c.cgroup); err == nil || os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// plainCmd wraps an unconfined command.
func plainCmd(cmd *exec.Cmd, enf Enforced) *Cmd {
	return &Cmd{Cmd: cmd, Enforced: enf}
}

// Confined reports whether the command runs through the trampoline
// (confined), not unconfined.
func (c *Cmd) Confined() bool { return c.spec != nil }
