//go:build unix

package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentd/agentd/internal/sandbox"
	"github.com/agentd/agentd/internal/tool"
)

func runShell(ctx context.Context, opts ShellOptions, agent, ws, command string) (tool.Result, error) {
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return tool.Result{}, fmt.Errorf("create workspace: %w", err)
	}
	tmp := opts.TempDir
	if tmp == "" {
		tmp = filepath.Join(ws, ".tmp")
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return tool.Result{}, fmt.Errorf("create temp dir: %w", err)
	}

	runCtx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	r, w, err := os.Pipe()
	if err != nil {
		return tool.Result{}, fmt.Errorf("shell_exec: create pipe: %w", err)
	}
	defer r.Close()

	env := []string{"PATH=" + opts.Path, "HOME=" + ws, "TMPDIR=" + tmp}
	var (
		cmd   *exec.Cmd
		sc    *sandbox.Cmd
		pol   sandbox.Policy
		start func() error
	)
	if opts.Sandbox != nil {
		if opts.Policy != nil {
			pol = opts.Policy(agent, ws)
		} else {
			pol = sandbox.Policy{Network: sandbox.NetworkNone}
		}
		pol.Write = append(append([]string(nil), pol.Write...), ws, tmp)
		sc, err = opts.Sandbox.Command(runCtx, "shell_exec", pol, "/bin/sh", []string{"/bin/sh", "-c", command}, env)
		if err != nil {
			w.Close()
			return errorf("shell_exec: %v", err), nil
		}
		defer sc.Done()
		cmd, start = sc.Cmd, sc.Start
	} else {
		cmd = exec.CommandContext(runCtx, "/bin/sh", "-c", command)
		cmd.Env = env
		start = cmd.Start
	}
	cmd.Dir = ws
	cmd.Stdout = w // an *os.File: the child writes to it directly, no copying goroutine
	cmd.Stderr = w
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// In a sandbox the shell is also PID 1 of its own namespace, whose
	// death takes every process it left; the group covers the rest.
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }

	if err := start(); err != nil {
		w.Close()
		return errorf("shell_exec: start /bin/sh: %v", err), nil
	}
	w.Close() // the parent's copy; EOF comes once every descendant closes theirs

	out := &cappedBuffer{max: opts.MaxOutputBytes}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = out.ReadFrom(r)
	}()

	waitErr := cmd.Wait()
	// The command is gone; take its background jobs with it, which also
	// closes their ends of the pipe.
	_ = killGroup(cmd.Process.Pid)
	_ = r.SetReadDeadline(time.Now().Add(drainGrace))
	<-readDone

	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	if ctx.Err() != nil {
		return tool.Result{}, fmt.Errorf("shell_exec: %w", ctx.Err())
	}

	exitCode := 0
	var exitErr *exec.ExitError
	switch {
	case timedOut:
		exitCode = -1
	case waitErr == nil:
	case errors.As(waitErr, &exitErr):
		exitCode = exitErr.ExitCode() // -1 when killed by a signal
	default:
		return errorf("shell_exec: %v", waitErr), nil
	}

	var b strings.Builder
	refused := false
	if sc != nil && sc.Confined() {
		// A refusal leads the result, which is an error even if the
		// command carried on: the model reads it first, and the audit
		// record keeps a failed call's first line.
		for _, r := range sandbox.Explain(pol, out.String(), 3) {
			refused = true
			fmt.Fprintf(&b, "%s (this shell may read the system and write only its workspace)\n", r)
			if opts.Sandbox.Refused != nil {
				opts.Sandbox.Refused(ctx, "shell_exec", r.Op)
			}
		}
	}
	b.WriteString(strings.ToValidUTF8(out.String(), "\uFFFD"))
	if out.dropped > 0 {
		fmt.Fprintf(&b, "\n[output truncated: %d more bytes not shown]", out.dropped)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch {
	case timedOut:
		fmt.Fprintf(&b, "[killed: timed out after %s]", opts.Timeout)
	case exitCode == -1:
		fmt.Fprintf(&b, "[killed by a signal: %v]", waitErr)
	default:
		fmt.Fprintf(&b, "[exit code %d]", exitCode)
	}
	return tool.Result{
		Content:    b.String(),
		IsError:    timedOut || exitCode != 0 || refused,
		Structured: structured(shellOutcome{ExitCode: exitCode, TimedOut: timedOut, Truncated: out.dropped > 0}),
	}, nil
}

// killGroup kills the process group led by pid.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
