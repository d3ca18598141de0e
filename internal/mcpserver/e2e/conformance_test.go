package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/conformancetest"
	"github.com/agentd/agentd/internal/daemon"
)

// The conformance tests run the official MCP conformance suites against
// agentd serving the go-sdk's conformance server (its fixture tools,
// resources and prompts) as a gateway at /mcp/gateway/everything: the
// whole path from the HTTP edge through the tool runner and the MCP client
// manager to the upstream, and back for what the upstream asks of its
// client during a call. Scenarios a baseline in testdata lists are
// expected to fail, each for the reason written beside it; any other
// failure, or a listed scenario that now passes, fails the test.

// everythingLinks are the two ways agentd reaches the upstream: over stdio
// the go-sdk client and server agree on 2026-07-28 (stateless requests,
// input requests in results), over the server's stateful Streamable HTTP
// on 2025-11-25 (a session, requests of the server's own).
var everythingLinks = []struct {
	name  string
	start func(t *testing.T) string
}{
	{"stdio-2026-07-28", startStdioGateway},
	{"http-2025-11-25", startHTTPGateway},
}

// TestConformanceGateway runs @modelcontextprotocol/conformance 0.1.16
// (initialize-era clients) over both links. Baselines:
// testdata/conformance-baseline.json (stdio) and
// testdata/conformance-http-baseline.json (http).
func TestConformanceGateway(t *testing.T) {
	nodeBin := node(t)
	baselines := map[string]string{
		"stdio-2026-07-28": "conformance-baseline.json",
		"http-2025-11-25":  "conformance-http-baseline.json",
	}
	for _, link := range everythingLinks {
		t.Run(link.name, func(t *testing.T) {
			url := link.start(t)
			runConformance(t, nodeBin, "@modelcontextprotocol/conformance/dist/index.js", url, baselines[link.name])
		})
	}
}

// TestConformanceGateway20260728 runs the suite of the 2026-07-28
// revision (0.2.0-alpha.12, installed as conformance-2026) with exactly
// the scenarios that revision requires, at its wire, over both links: the
// stdio one speaks 2026-07-28 too; over the HTTP one, an initialize-era
// session, the gateway itself turns the upstream's requests into input
// requests in results (mcpclient's parked calls). Baselines:
// testdata/conformance-2026-baseline.json (stdio) and
// testdata/conformance-2026-http-baseline.json (http).
func TestConformanceGateway20260728(t *testing.T) {
	nodeBin := node(t)
	baselines := map[string]string{
		"stdio-2026-07-28": "conformance-2026-baseline.json",
		"http-2025-11-25":  "conformance-2026-http-baseline.json",
	}
	for _, link := range everythingLinks {
		t.Run(link.name, func(t *testing.T) {
			url := link.start(t)
			runConformance(t, nodeBin, "conformance-2026/dist/index.js", url, baselines[link.name],
				"--requirements", "2026-07-28")
		})
	}
}

// startStdioGateway starts a daemon serving the go-sdk conformance server
// over stdio as the gateway "everything" and returns the gateway's URL
// once its tools are served.
func startStdioGateway(t *testing.T) string {
	t.Helper()
	everything := goBuild(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	return startGateway(t, fmt.Sprintf(`
[mcp_servers.transport]
type = "stdio"
command = %q
`, everything))
}

// startHTTPGateway starts the go-sdk conformance server on stateful
// Streamable HTTP (a subprocess on a loopback port) and a daemon serving
// it as the gateway "everything".
func startHTTPGateway(t *testing.T) string {
	t.Helper()
	everything := goBuild(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	addr := freeAddr(t)
	cmd := exec.Command(everything, "-http", addr, "-stateless=false")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitListening(t, addr)
	return startGateway(t, fmt.Sprintf(`
allow_private = true

[mcp_servers.transport]
type = "http"
url = "http://%s/"
`, addr))
}

// startGateway starts a daemon with the upstream "everything" (transport
// is the rest of its [[mcp_servers]] entry) served as a gateway.
func startGateway(t *testing.T, transport string) string {
	t.Helper()
	_, url := startGatewayDaemon(t, transport)
	return url
}

// startGatewayDaemon is startGateway, with the daemon.
func startGatewayDaemon(t *testing.T, transport string) (*daemon.Daemon, string) {
	t.Helper()
	e := writeConfig(t, `
[mcp]
gateways = ["everything"]

[[mcp_servers]]
name = "everything"
allowed_tools = ["*"]
`+transport)
	d, base := startDaemon(t, e, false)
	url := base + "/mcp/gateway/everything"
	waitForGatewayTools(t, url)
	return d, url
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitListening waits until something accepts connections on addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s after 10s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runConformance runs the server scenarios of the suite whose entry point
// is module (below interop/node_modules) against url, and compares every
// failed check with the baseline testdata/{baseline} (see
// conformancetest): a failure it does not name, one that fails for
// another reason than it says, or an entry that passes fails the test.
// The tasks-* scenarios (the SEP-2663 tasks extension of the 2026-07-28
// suite) are run but never scored by the suite and are left out.
func runConformance(t *testing.T, nodeBin, module, url, baseline string, args ...string) {
	t.Helper()
	b, err := conformancetest.Load(filepath.Join("testdata", baseline))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	expected, results := filepath.Join(dir, "expected-failures.yml"), filepath.Join(dir, "results")
	if err := b.WriteSuiteFile(expected); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	full := append([]string{nodeModule(t, module), "server", "--url", url, "--expected-failures", expected, "-o", results}, args...)
	cmd := exec.CommandContext(ctx, nodeBin, full...)
	// The suite may write results below its working directory.
	cmd.Dir = dir
	cmd.Env = env{home: cmd.Dir}.cmdEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	failures, scenarios, err := b.ReadResults(results, func(s string) bool { return strings.HasPrefix(s, "tasks-") })
	if err != nil {
		t.Fatalf("reading the suite's results: %v\n%s", err, summary(out.Bytes()))
	}
	if scenarios == 0 {
		t.Fatalf("the suite scored no scenario (%v)\n%s", runErr, out.Bytes())
	}
	for _, p := range conformancetest.Compare(b, failures) {
		t.Errorf("testdata/%s: %s", baseline, p)
	}
	if runErr != nil && !t.Failed() {
		t.Fatalf("conformance suite %s against %s: %v\n%s", module, url, runErr, summary(out.Bytes()))
	}
	t.Logf("%d scenarios scored, %d failed checks as the baseline expects\n%s", scenarios, len(failures), summary(out.Bytes()))
}

// summary is the suite's output from its summary on, or all of it.
func summary(out []byte) []byte {
	if i := bytes.Index(out, []byte("=== SUMMARY ===")); i >= 0 {
		return out[i:]
	}
	return out
}

// waitForGatewayTools waits until the upstream is connected and its tools
// are served (the client manager connects in the background).
func waitForGatewayTools(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := countTools(url)
		if err == nil && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway at %s serves no tools after 30s (last error: %v)", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func countTools(url string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return 0, err
	}
	return len(res.Tools), nil
}
