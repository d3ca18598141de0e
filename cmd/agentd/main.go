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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
