// Command agentd runs AI agents and connects them to MCP, A2A and ACP.
// See `agentd help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentd/agentd/internal/cli"
)

func main() {
	// The first SIGTERM or Ctrl-C starts a graceful stop (the daemon
	// drains: see docs/deploy.md); once it has, the signals' default
	// action is back, so a second one ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
