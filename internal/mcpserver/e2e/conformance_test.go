package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConformanceGateway runs the official MCP conformance suite
// (@modelcontextprotocol/conformance 0.1.16) against agentd serving the
// go-sdk's conformance server (its fixture tools, resources and prompts)
// as a gateway at /mcp/gateway/everything: the whole path from the HTTP
// edge through the tool runner and the MCP client manager to a stdio
// upstream. Scenarios listed in testdata/conformance-baseline.yml are
// expected to fail, each for the reason written beside it; any other
// failure, or a listed scenario that now passes, fails the test.
func TestConformanceGateway(t *testing.T) {
	nodeBin := node(t)
	everything := goBuild(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	e := writeConfig(t, fmt.Sprintf(`
[[mcp_servers]]
name = "everything"
allowed_tools = ["*"]

[mcp_servers.transport]
type = "stdio"
command = %q

[mcp]
gateways = ["everything"]
`, everything))
	_, base := startDaemon(t, e, false)
	url := base + "/mcp/gateway/everything"
	waitForGatewayTools(t, url)

	baseline, err := filepath.Abs(filepath.Join("testdata", "conformance-baseline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, nodeModule(t, "@modelcontextprotocol/conformance/dist/index.js"),
		"server", "--url", url, "--expected-failures", baseline)
	cmd.Env = e.cmdEnv()
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("conformance suite against %s: %v\n%s", url, err, summary(out.Bytes()))
	}
	t.Logf("%s", summary(out.Bytes()))
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
