//go:build !unix

package builtin

import (
	"context"

	"github.com/agentd/agentd/internal/tool"
)

// runShell needs process groups, which only Unix has.
func runShell(context.Context, ShellOptions, string, string, string) (tool.Result, error) {
	return errorf("shell_exec is not supported on this platform"), nil
}
