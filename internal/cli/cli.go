// Package cli implements agentd's command line. `agentd start` runs the
// daemon in the foreground; every other command talks to a running daemon
// through its HTTP API (package client), except the stdio protocol servers
// (`agentd mcp`, `agentd acp`), which attach to a daemon or boot one
// in-process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/agentd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/internal/client"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/telemetry"
)

// env is what every command gets: its streams and the global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	configPath     string
	addr           string // daemon address override
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"start", "run the daemon in the foreground", runStart},
		{"doctor", "check the config, the store, LLM providers and the port", runDoctor},
		{"agents", "list|show|create|delete agents", runAgents},
		{"chat", "chat with an agent: chat AGENT [MESSAGE]", runChat},
		{"mcp", "MCP: `agentd mcp` serves MCP on stdio; servers|tools|call inspect upstreams", runMCP},
		{"acp", "serve the Agent Client Protocol on stdio for an editor: acp [--agent NAME]", runACP},
		{"a2a", "A2A client: discover URL | send AGENT_OR_URL MESSAGE | task ID | agents", runA2A},
		{"principals", "who may call the daemon: principals list | new-key", runPrincipals},
		{"health", "ask the daemon whether it is up (exit 0 if it is)", runHealth},
		{"version", "print the version, commit and Go version (also --version)", runVersion},
	}
}

// errUsage marks errors that should be followed by usage help.
var errUsage = errors.New("usage")

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("agentd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&e.configPath, "config", "", "config file (default $AGENTD_HOME/config.toml)")
	fs.StringVar(&e.addr, "addr", "", "daemon address for client commands (default: listen from the config)")
	showVersion := fs.Bool("version", false, "print the version, commit and Go version")
	fs.Usage = func() { usage(stderr) }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Fprint(stdout, buildinfo.Line())
		return 0
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] == "help" || rest[0] == "-h" || rest[0] == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == rest[0] {
			err := c.run(ctx, e, rest[1:])
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				fmt.Fprintf(stderr, "agentd %s: %v\n", c.name, err)
				return 2
			}
			fmt.Fprintf(stderr, "agentd %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "agentd: unknown command %q\n\n", rest[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "agentd %s: runs AI agents and connects them to MCP, A2A and ACP.\n\nUsage: agentd [--config FILE] [--addr HOST:PORT] COMMAND [ARGS]\n\nCommands:\n", buildinfo.Version())
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEnvironment: AGENTD_HOME (default ~/.agentd) holds config.toml, the store and workspaces.")
}

// newFlags returns a flag set for a subcommand that reports to stderr.
func (e *env) newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("agentd "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// loadConfig loads the config; write says whether a missing default
// config.toml may be created (only `start` does that).
func (e *env) loadConfig(write bool) (*config.Config, error) {
	return config.Load(config.LoadOptions{Path: e.configPath, WriteDefault: write})
}

// client returns an API client for the daemon the config points at.
func (e *env) client() (*client.Client, *config.Config, error) {
	cfg, err := e.loadConfig(false)
	if err != nil {
		return nil, nil, err
	}
	addr := e.addr
	if addr == "" {
		addr = cfg.Listen
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return client.New(addr, cfg.APIKeyValue()), cfg, nil
}

// logger returns the daemon's logger: on stderr at the config's level,
// text or JSON (log_format), every record logged with a request's context
// carrying its request id and trace ids.
func (e *env) logger(cfg *config.Config) *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		lvl = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler = slog.NewTextHandler(e.stderr, opts)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(e.stderr, opts)
	}
	return slog.New(telemetry.LogHandler(h))
}

func runVersion(ctx context.Context, e *env, args []string) error {
	fmt.Fprint(e.stdout, buildinfo.Line())
	return nil
}
