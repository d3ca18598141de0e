//go:build !linux

package sandbox

import (
	"context"
	"os/exec"
	"runtime"
)

// Probe reports that nothing can be enforced off Linux.
func Probe() Mechanisms {
	return Mechanisms{OS: runtime.GOOS, Problems: []string{"sandboxing needs Linux (Landlock and namespaces); on " + runtime.GOOS + " nothing is enforced"}}
}

// Cmd is a plain command here: nothing confines it.
type Cmd struct {
	*exec.Cmd
	Enforced Enforced
}

// Command builds an unconfined command; callers have checked that the
// configuration allows that (Enforced.Missing lists what is not).
func Command(ctx context.Context, m Mechanisms, p Policy, path string, args, env []string) (*Cmd, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if env == nil {
		env = []string{}
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = args
	cmd.Env = env
	return &Cmd{Cmd: cmd, Enforced: m.Enforce(p)}, nil
}

// Start starts the command.
func (c *Cmd) Start() error { return c.Cmd.Start() }

// Done has nothing to clean here.
func (c *Cmd) Done() {}

func plainCmd(cmd *exec.Cmd, enf Enforced) *Cmd {
	return &Cmd{Cmd: cmd, Enforced: enf}
}

// Confined reports whether the command is confined: never here.
func (c *Cmd) Confined() bool { return false }

// NoDump has no portable equivalent here.
func NoDump() error { return nil }

// CatchesSIGTERM is true here: no PID namespace changes the default.
func CatchesSIGTERM(int) bool { return true }
