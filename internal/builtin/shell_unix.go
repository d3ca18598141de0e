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

	"github.com/agentd/agentd/internal/tool"
)

func runShell(ctx context.Context, opts ShellOptions, ws, command string) (tool.Result, error) {
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

	cmd := exec.CommandContext(runCtx, "/bin/sh", "-c", command)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + opts.Path, "HOME=" + ws, "TMPDIR=" + tmp}
	cmd.Stdout = w // an *os.File: the child writes to it directly, no copying goroutine
	cmd.Stderr = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }

	if err := cmd.Start(); err != nil {
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
		IsError:    timedOut || exitCode != 0,
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
