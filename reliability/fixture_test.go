//go:build linux

package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modeSleep is a grandchild the stdio fixture spawns: it sleeps until
// killed, so that a test can see whether its process group was killed.
const modeSleep = "reliability-sleep"

// runStdioMCP is the stdio MCP server fixture (this test binary
// re-executed by the daemon's MCP client). Its tools report what the
// child sees: its environment, its process ids; spawn starts a
// grandchild in its process group; exit ends the process abruptly.
func runStdioMCP(_ []string) int {
	srv := mcp.NewServer(&mcp.Implementation{Name: "reliability-fixture", Version: "1"}, nil)
	type none struct{}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "env", Description: "The server's environment, one NAME=value a line."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			env := os.Environ()
			slices.Sort(env)
			return text(strings.Join(env, "\n")), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "ids", Description: "pid pgid ppid"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			pgid, _ := syscall.Getpgid(0)
			return text(fmt.Sprintf("%d %d %d", os.Getpid(), pgid, os.Getppid())), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "spawn", Description: "Start a grandchild; returns its pid."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			exe, err := os.Executable()
			if err != nil {
				return nil, nil, err
			}
			cmd := exec.Command(exe, modeSleep)
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			go func() { _ = cmd.Wait() }()
			return text(fmt.Sprint(cmd.Process.Pid)), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "exit", Description: "Exit at once, as a crash would."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		return 1
	}
	return 0
}

func runSleep() int {
	time.Sleep(10 * time.Minute)
	return 0
}
