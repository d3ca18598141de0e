package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/sandbox"
	"github.com/agentd/agentd/internal/tool"
)

// ShellOptions configures shell_exec. The zero value gives the defaults.
type ShellOptions struct {
	// Timeout bounds each command; default 30s.
	Timeout time.Duration
	// MaxOutputBytes caps the combined stdout and stderr kept; default 64 KiB.
	MaxOutputBytes int
	// Path is the PATH given to the command; default
	// "/usr/local/bin:/usr/bin:/bin".
	Path string
	// TempDir is the command's TMPDIR; default <workspace>/.tmp.
	TempDir string
	// Sandbox starts each command confined (see internal/sandbox); nil
	// runs it unconfined, as the tool's own unit tests do. Policy gives
	// the policy of a call by agent for workspace; the workspace and
	// TempDir are added to its writable paths.
	Sandbox *sandbox.Launcher
	Policy  func(agent, workspace string) sandbox.Policy
}

const (
	defaultShellTimeout = 30 * time.Second
	defaultShellOutput  = 64 << 10
	defaultShellPath    = "/usr/local/bin:/usr/bin:/bin"
	// drainGrace bounds how long output is still read after the process
	// group was killed, in case a descendant escaped the group.
	drainGrace = 2 * time.Second
)

// ShellExec returns shell_exec, which runs a command with /bin/sh -c in
// the agent's workspace. The command gets an environment of PATH, HOME
// (the workspace) and TMPDIR only, so no secret of the daemon's
// environment reaches it, and runs in its own process group, which is
// killed as a whole on timeout, on cancellation and when the command
// ends (background jobs do not outlive the call).
func ShellExec(opts ShellOptions) tool.Tool {
	if opts.Timeout <= 0 {
		opts.Timeout = defaultShellTimeout
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = defaultShellOutput
	}
	if opts.Path == "" {
		opts.Path = defaultShellPath
	}
	confined := ""
	if opts.Sandbox != nil && !opts.Sandbox.Off {
		confined = "Commands run in a sandbox: they read the system directories, read and write only the workspace " +
			"(and paths the operator granted), see no other process of the host, and have no network unless the operator allows it; " +
			"an access it refuses is reported as \"permission denied by the sandbox\". "
	}
	return &funcTool{
		spec: tool.Spec{
			Name: "shell_exec",
			Description: "Run a shell command (/bin/sh -c) in your workspace directory and return its combined " +
				"stdout and stderr and its exit code. " +
				fmt.Sprintf("Commands are killed after %s; output beyond %d bytes is cut. ", opts.Timeout, opts.MaxOutputBytes) +
				"The environment holds only PATH, HOME (the workspace) and TMPDIR; there is no terminal and no stdin. " +
				"Background processes are killed when the command finishes. " + confined,
			InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command line, interpreted by /bin/sh, e.g. \"ls -la && go test ./...\"."}
  },
  "required": ["command"],
  "additionalProperties": false
}`),
			Origin: tool.OriginBuiltin,
			// Leave our own timeout room to fire first, so the model
			// reads "timed out" rather than a runner cancellation.
			TimeoutSecs: int(math.Ceil(opts.Timeout.Seconds())) + 5,
		},
		call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
			var args struct {
				Command string `json:"command"`
			}
			if err := decodeArgs(c.Args, &args); err != nil {
				return errorf("%v", err), nil
			}
			if strings.TrimSpace(args.Command) == "" {
				return errorf("command is required"), nil
			}
			if c.Workspace == "" || !filepath.IsAbs(c.Workspace) {
				return errorf("this agent has no workspace directory"), nil
			}
			return runShell(ctx, opts, c.Agent, c.Workspace, args.Command)
		},
	}
}

// shellOutcome is shell_exec's structured result.
type shellOutcome struct {
	ExitCode  int  `json:"exit_code"`
	TimedOut  bool `json:"timed_out,omitempty"`
	Truncated bool `json:"truncated,omitempty"`
}

// cappedBuffer keeps the first max bytes written and counts the rest, so
// a chatty command neither exhausts memory nor blocks on a full pipe.
type cappedBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// ReadFrom reads r to EOF or error into c.
func (c *cappedBuffer) ReadFrom(r *os.File) (int64, error) {
	var total int64
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			total += int64(n)
			_, _ = c.Write(chunk[:n])
		}
		if err != nil {
			return total, err
		}
	}
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(trimToRune(c.buf))
}
