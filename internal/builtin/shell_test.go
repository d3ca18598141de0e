//go:build unix

package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/tool"
)

func shellCall(ctx context.Context, t *testing.T, opts ShellOptions, ws, command string) (tool.Result, shellOutcome, error) {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"command": command})
	res, err := ShellExec(opts).Call(ctx, &tool.Call{Agent: "tester", Workspace: ws, Args: raw, Progress: func(string, float64, float64) {}})
	var out shellOutcome
	if err == nil && res.Structured != nil {
		if jerr := json.Unmarshal(res.Structured, &out); jerr != nil {
			t.Fatalf("structured: %v", jerr)
		}
	}
	return res, out, err
}

func TestShellExec(t *testing.T) {
	ws := t.TempDir()
	real, _ := filepath.EvalSymlinks(ws)
	tests := []struct {
		name     string
		opts     ShellOptions
		command  string
		contain  []string
		isErr    bool
		exitCode int
	}{
		{"echo", ShellOptions{}, "echo hello", []string{"hello\n[exit code 0]"}, false, 0},
		{"stderr too", ShellOptions{}, "echo out; echo err >&2", []string{"out\n", "err\n"}, false, 0},
		{"exit code", ShellOptions{}, "echo failing; exit 3", []string{"failing", "[exit code 3]"}, true, 3},
		{"runs in workspace", ShellOptions{}, "pwd", []string{real}, false, 0},
		{"home is workspace", ShellOptions{}, `echo "home=$HOME"`, []string{"home=" + ws}, false, 0},
		{"custom path", ShellOptions{Path: "/bin:/usr/bin"}, `echo "path=$PATH"`, []string{"path=/bin:/usr/bin\n"}, false, 0},
		{"default path", ShellOptions{}, `echo "path=$PATH"`, []string{"path=/usr/local/bin:/usr/bin:/bin\n"}, false, 0},
		{"no stdin", ShellOptions{}, "cat; echo done", []string{"done"}, false, 0},
		{"output cap", ShellOptions{MaxOutputBytes: 1000}, "head -c 100000 /dev/zero | tr '\\000' a", []string{"[output truncated: 99000 more bytes not shown]"}, false, 0},
		{"syntax error", ShellOptions{}, "if then", []string{"[exit code 2]"}, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out, err := shellCall(t.Context(), t, tt.opts, ws, tt.command)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isErr {
				t.Errorf("IsError = %v: %s", res.IsError, res.Content)
			}
			for _, s := range tt.contain {
				if !strings.Contains(res.Content, s) {
					t.Errorf("output %.300q lacks %q", res.Content, s)
				}
			}
			if out.ExitCode != tt.exitCode {
				t.Errorf("exit code %d, want %d", out.ExitCode, tt.exitCode)
			}
		})
	}
	t.Run("output cap keeps the first bytes", func(t *testing.T) {
		res, out, err := shellCall(t.Context(), t, ShellOptions{MaxOutputBytes: 1000}, ws, "head -c 100000 /dev/zero | tr '\\000' a")
		if err != nil {
			t.Fatal(err)
		}
		if !out.Truncated || !strings.HasPrefix(res.Content, strings.Repeat("a", 1000)+"\n[output truncated") {
			t.Errorf("bad capped output: %.80q... truncated=%v", res.Content, out.Truncated)
		}
	})
	t.Run("empty command", func(t *testing.T) {
		res, _, err := shellCall(t.Context(), t, ShellOptions{}, ws, "  ")
		if err != nil || !res.IsError {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

func TestShellEnvironment(t *testing.T) {
	t.Setenv("AGENTD_TEST_SECRET", "hunter2")
	ws := t.TempDir()
	res, _, err := shellCall(t.Context(), t, ShellOptions{}, ws, "env")
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatal(res.Content)
	}
	// The shell itself may export PWD, SHLVL, _ and OLDPWD.
	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "PWD": true, "SHLVL": true, "_": true, "OLDPWD": true}
	seen := map[string]string{}
	for _, line := range strings.Split(res.Content, "\n") {
		if strings.HasPrefix(line, "[exit code") || line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("unexpected line %q", line)
			continue
		}
		seen[name] = value
		if !allowed[name] {
			t.Errorf("child sees %s=%q", name, value)
		}
	}
	if seen["HOME"] != ws || seen["PATH"] != defaultShellPath || seen["TMPDIR"] != filepath.Join(ws, ".tmp") {
		t.Errorf("env = %v", seen)
	}
	if strings.Contains(res.Content, "hunter2") {
		t.Error("the daemon's environment leaked")
	}
	if fi, err := os.Stat(filepath.Join(ws, ".tmp")); err != nil || !fi.IsDir() {
		t.Errorf("TMPDIR not created: %v", err)
	}
}

// groupAlive reports whether any live (non-zombie) process is in the
// process group pgid, or is pid; it reads /proc so zombies left for a
// non-reaping init do not count as alive.
func groupAlive(t *testing.T, pgid, pid int) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		// No /proc: fall back to signal 0, which counts zombies.
		return syscall.Kill(-pgid, 0) == nil || syscall.Kill(pid, 0) == nil
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid || n == pid {
			return true
		}
	}
	return false
}

// waitGone polls until the group has died; killing is asynchronous.
func waitGone(t *testing.T, pgid, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for groupAlive(t, pgid, pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d (grandchild %d) still alive", pgid, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pids parses "pgid grandchild" printed by the test commands.
func pids(t *testing.T, content string) (pgid, grandchild int) {
	t.Helper()
	fields := strings.Fields(content)
	if len(fields) < 2 {
		t.Fatalf("no pids in %q", content)
	}
	pgid, err1 := strconv.Atoi(fields[0])
	grandchild, err2 := strconv.Atoi(fields[1])
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("pids in %q: %v", content, err)
	}
	return pgid, grandchild
}

func TestShellKillsProcessGroup(t *testing.T) {
	ws := t.TempDir()
	// The shell prints its pid (the group id, thanks to Setpgid) and the
	// pid of a background grandchild, then waits.
	const script = "echo $$; sleep 30 & echo $!; sleep 30; wait"

	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		res, out, err := shellCall(t.Context(), t, ShellOptions{Timeout: 300 * time.Millisecond}, ws, script)
		if err != nil {
			t.Fatal(err)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("took %v", elapsed)
		}
		if !res.IsError || !out.TimedOut || !strings.Contains(res.Content, "timed out after 300ms") {
			t.Errorf("result %+v", res)
		}
		pgid, child := pids(t, res.Content)
		waitGone(t, pgid, child)
	})

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		type ret struct {
			res tool.Result
			err error
		}
		done := make(chan ret, 1)
		go func() {
			raw, _ := json.Marshal(map[string]string{"command": "echo $$ > pids; sleep 30 & echo $! >> pids; sleep 30; wait"})
			res, err := ShellExec(ShellOptions{}).Call(ctx, &tool.Call{Workspace: ws, Args: raw})
			done <- ret{res, err}
		}()
		// Wait for the child to have started its grandchild.
		var content []byte
		for deadline := time.Now().Add(5 * time.Second); ; {
			content, _ = os.ReadFile(filepath.Join(ws, "pids"))
			if strings.Count(string(content), "\n") == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the command never started")
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		select {
		case r := <-done:
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", r.err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Call did not return after cancel")
		}
		pgid, child := pids(t, string(content))
		waitGone(t, pgid, child)
	})

	t.Run("background job after exit", func(t *testing.T) {
		start := time.Now()
		res, _, err := shellCall(t.Context(), t, ShellOptions{}, ws, "echo $$; sleep 30 & echo $!")
		if err != nil {
			t.Fatal(err)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("a background job held the call for %v", elapsed)
		}
		if res.IsError {
			t.Errorf("result %+v", res)
		}
		pgid, child := pids(t, res.Content)
		waitGone(t, pgid, child)
	})
}
