package acpagent

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/tool"
)

// mcpHelper makes the test binary an MCP server on stdio, so the real
// client manager can be tested against a real child process.
var mcpHelper = flag.Bool("acpagent.mcp-helper", false, "serve a test MCP server on stdio and exit")

func TestMain(m *testing.M) {
	flag.Parse()
	if *mcpHelper {
		serveHelperMCP()
		return
	}
	os.Exit(m.Run())
}

// serveHelperMCP serves one tool, env, which reports the ACPTEST_*
// variables and whether any other variable but PATH, HOME and TMPDIR was
// passed.
func serveHelperMCP() {
	s := mcp.NewServer(&mcp.Implementation{Name: "helper", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "env", Description: "report the environment", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			names := os.Environ()
			sort.Strings(names)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(names, "\n")}}}, nil
		})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
}

func TestMCPConnectorRealServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	connect := NewMCPConnector(MCPConnectorOptions{
		Client: mcpclient.Options{KillGrace: 200 * time.Millisecond},
		Ambient: func(name string) (string, bool) {
			switch name {
			case "PATH":
				return "/usr/bin:/bin", true
			case "SECRET_OF_AGENTD":
				return "leak", true
			}
			return "", false
		},
		ConnectWait: 20 * time.Second,
	})
	servers, notices := editorServers([]acp.McpServer{
		{Stdio: &acp.McpServerStdio{Name: "helper", Command: exe, Args: []string{"-acpagent.mcp-helper"},
			Env: []acp.EnvVariable{{Name: "ACPTEST_TOKEN", Value: "from-the-editor"}}}},
		{Stdio: &acp.McpServerStdio{Name: "broken", Command: "/nonexistent/agentd-test-server", Args: []string{}, Env: []acp.EnvVariable{}}},
	}, t.TempDir())
	if len(notices) != 0 {
		t.Fatalf("notices: %v", notices)
	}
	ctx := context.Background()
	set, err := connect(ctx, servers)
	if set == nil {
		t.Fatalf("no server connected: %v", err)
	}
	t.Cleanup(func() {
		if err := set.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err == nil || !strings.Contains(err.Error(), `"broken"`) || strings.Contains(err.Error(), `"helper"`) {
		t.Errorf("connect error = %v, want one naming only the broken server", err)
	}
	var env tool.Tool
	for _, tl := range set.Tools() {
		if tl.Spec().Name == "mcp_helper_env" {
			env = tl
		}
	}
	if env == nil {
		var names []string
		for _, tl := range set.Tools() {
			names = append(names, tl.Spec().Name)
		}
		t.Fatalf("no mcp_helper_env among %v", names)
	}
	res, err := env.Call(ctx, &tool.Call{Args: json.RawMessage(`{}`), Progress: func(string, float64, float64) {}})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if !strings.Contains(res.Content, "ACPTEST_TOKEN=from-the-editor") {
		t.Errorf("the editor's variable did not reach the server: %q", res.Content)
	}
	if strings.Contains(res.Content, "SECRET_OF_AGENTD") {
		t.Errorf("agentd's environment leaked to the editor's server: %q", res.Content)
	}
}
