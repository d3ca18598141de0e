package cli

import (
	"context"
	"errors"
)

// runMCPServe serves MCP on stdio. It is implemented with the MCP server
// edge (issue "MCP server"); until then it says so instead of pretending.
func runMCPServe(ctx context.Context, e *env, args []string) error {
	return errors.New("the stdio MCP server is not built yet; use `agentd mcp servers|tools|call`")
}
