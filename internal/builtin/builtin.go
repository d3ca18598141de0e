// Package builtin provides agentd's built-in tools: workspace files
// (file_read, file_write, file_list), shell_exec, web_fetch and per-agent
// memory (memory_store, memory_recall).
//
// Every tool confines itself: file tools cannot leave the agent's
// workspace (Confine, then os.Root for the I/O itself, so a symlink
// swapped in between cannot redirect it), shell_exec runs with a cleared
// environment in its own process group, and web_fetch goes through a
// netguard.Policy. Tool failures the model should see are results with
// IsError set; a Go error means the call could not be attempted.
package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/internal/tool"
)

// funcTool is a Tool made of a spec and a function.
type funcTool struct {
	spec tool.Spec
	call func(ctx context.Context, c *tool.Call) (tool.Result, error)
}

var _ tool.Tool = (*funcTool)(nil)

func (t *funcTool) Spec() tool.Spec { return t.spec }

func (t *funcTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	return t.call(ctx, c)
}

// decodeArgs unmarshals a call's arguments; absent arguments decode as {}.
func decodeArgs(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// errorf is a result the model reads as a failure.
func errorf(format string, args ...any) tool.Result {
	return tool.Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// structured encodes v for Result.Structured; v is always encodable.
func structured(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
