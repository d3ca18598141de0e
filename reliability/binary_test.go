//go:build linux

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The agentd binary is built once per test run, into a directory removed
// by TestMain, with the same command as internal/daemon's kill -9 test so
// that the build cache serves both.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func agentdBinary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "agentd-reliability-")
		if err != nil {
			binary.err = err
			return
		}
		binary.dir = dir
		binary.path = filepath.Join(dir, "agentd")
		cmd := exec.Command("go", "build", "-o", binary.path, "./cmd/agentd")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build ./cmd/agentd: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

func cleanupBinary() {
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
}

// agentdProc is the real binary running `agentd start`.
type agentdProc struct {
	cmd  *exec.Cmd
	URL  string
	Log  string // path of its combined output
	done chan struct{}
}

// Pid is the daemon's process id (also its process group).
func (p *agentdProc) Pid() int { return p.cmd.Process.Pid }

// startAgentd starts the binary on cfgPath with AGENTD_HOME=home and env
// added to a minimal environment, and waits until /api/health answers.
func startAgentd(t testing.TB, cfgPath, home, addr string, env ...string) *agentdProc {
	t.Helper()
	bin := agentdBinary(t)
	cmd := exec.Command(bin, "--config", cfgPath, "start")
	cmd.Env = append([]string{"AGENTD_HOME=" + home, "PATH=" + os.Getenv("PATH"), "HOME=" + home}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	logPath := filepath.Join(home, fmt.Sprintf("agentd-%d.log", time.Now().UnixNano()))
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &agentdProc{cmd: cmd, URL: "http://" + addr, Log: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		r, err := doHTTP(ctx, http.DefaultClient, "GET", p.URL+"/api/health", nil, "", nil)
		cancel()
		if err == nil && r.Status == http.StatusOK {
			return p
		}
		select {
		case <-p.done:
			out, _ := os.ReadFile(logPath)
			t.Fatalf("agentd exited before it was healthy:\n%s", out)
		default:
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logPath)
			t.Fatalf("agentd not healthy after 60 s: %v\n%s", err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill9 sends SIGKILL to the daemon's process group and waits for it.
func (p *agentdProc) kill() {
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	<-p.done
}

// stop asks the daemon to shut down (SIGTERM) and waits up to grace,
// then kills it. It reports whether the daemon exited on its own.
func (p *agentdProc) stop(grace time.Duration) bool {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return true
	case <-time.After(grace):
		p.kill()
		return false
	}
}

// logText returns what the daemon wrote so far.
func (p *agentdProc) logText() string {
	b, _ := os.ReadFile(p.Log)
	return string(b)
}
