package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testOptions are fast defaults for tests: short backoff and kill grace,
// the real environment, loopback allowed only where a test says so.
func testOptions(logs *logBuffer) Options {
	o := Options{
		LookupEnv:    os.LookupEnv,
		ReconnectMin: 20 * time.Millisecond,
		ReconnectMax: 200 * time.Millisecond,
		KillGrace:    500 * time.Millisecond,
	}
	if logs != nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return o
}

func newTestManager(t *testing.T, o Options) *Manager {
	t.Helper()
	m := NewManager(o)
	t.Cleanup(func() { m.Close() })
	return m
}

// faultServer is a stdio entry running this test binary as an MCP server.
func faultServer(t *testing.T, name, mode string) config.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return config.MCPServer{
		Name:        name,
		TimeoutSecs: 5,
		Transport:   config.MCPTransport{Type: TransportStdio, Command: exe, Args: []string{testServerArg, "-mode=" + mode}},
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func status(m *Manager, name string) (ServerStatus, bool) {
	for _, s := range m.Status() {
		if s.Name == name {
			return s, true
		}
	}
	return ServerStatus{}, false
}

func waitConnected(t *testing.T, m *Manager, name string) ServerStatus {
	t.Helper()
	waitFor(t, 20*time.Second, name+" to connect", func() bool {
		s, ok := status(m, name)
		return ok && s.Connected
	})
	s, _ := status(m, name)
	return s
}

func findTool(m *Manager, name string) tool.Tool {
	for _, t := range append(m.Tools(), m.ResourceTools()...) {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func mustTool(t *testing.T, m *Manager, name string) tool.Tool {
	t.Helper()
	tl := findTool(m, name)
	if tl == nil {
		var names []string
		for _, x := range m.Tools() {
			names = append(names, x.Spec().Name)
		}
		t.Fatalf("no tool %q among %v", name, names)
	}
	return tl
}

func callTool(ctx context.Context, tl tool.Tool, args any) (tool.Result, error) {
	return callRelay(ctx, tl, args, nil)
}

// callRelay calls tl with args, carrying ex (nil: none) as the call's
// tool.Relay.
func callRelay(ctx context.Context, tl tool.Tool, args any, ex *Exchange) (tool.Result, error) {
	raw, _ := json.Marshal(args)
	c := &tool.Call{Args: raw, Progress: func(string, float64, float64) {}}
	if ex != nil {
		c.Relay = ex
	}
	return tl.Call(ctx, c)
}

// callArrived calls tl (the fault server's hang tool) in a goroutine
// and returns once the server has the call, which it reports with a
// progress notification. The call's error comes on the channel.
func callArrived(t *testing.T, ctx context.Context, tl tool.Tool) <-chan error {
	t.Helper()
	arrived := make(chan struct{})
	var once sync.Once
	c := &tool.Call{Args: json.RawMessage(`null`), Progress: func(string, float64, float64) {
		once.Do(func() { close(arrived) })
	}}
	errc := make(chan error, 1)
	go func() {
		res, err := tl.Call(ctx, c)
		if err == nil {
			err = fmt.Errorf("result %+v", res)
		}
		errc <- err
	}()
	select {
	case <-arrived:
	case err := <-errc:
		t.Fatalf("the call ended before it reached the server: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not reach the server within 10s")
	}
	return errc
}

// fdCount counts this process's open file descriptors.
func fdCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(ents)
}

// baseline records goroutines and open descriptors now; the returned
// check waits for both to come back down to that level.
func baseline(t *testing.T) func() {
	t.Helper()
	g0, f0 := runtime.NumGoroutine(), fdCount(t)
	return func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			g, f := runtime.NumGoroutine(), fdCount(t)
			if g <= g0 && f <= f0 {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				t.Fatalf("resources not back to baseline: goroutines %d (was %d), fds %d (was %d)\n%s", g, g0, f, f0, buf[:n])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
