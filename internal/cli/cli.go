// Package cli implements agentd's command line. `agentd start` runs the
// daemon in the foreground; every other command talks to a running daemon
// through its HTTP API (package client), except the stdio protocol servers
// (`agentd mcp`, `agentd acp`), which attach to a daemon or boot one
// in-process.
//
// The command tree is cobra's (github.com/spf13/cobra): it gives every
// command `--help` and `help` with examples, flags anywhere on the line
// (pflag, as gh, kubectl and docker parse them), "did you mean" for
// mistyped commands, shell completions, and docs/cli.md generated from
// the tree (TestCLIDocsUpToDate).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/internal/client"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/telemetry"
)

// Exit codes of every command (docs/cli.md, "Exit codes").
const (
	ExitOK      = 0 // the command did what it was asked
	ExitFailure = 1 // it ran and failed: the daemon is not running, the daemon refused, a check failed
	ExitUsage   = 2 // the command line is wrong: unknown command or flag, missing or extra arguments
)

// env is what every command gets: its streams and the global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	configPath     string
	addr           string // daemon address override (--addr, else AGENTD_ADDR)
}

// usageError is a command line that cannot be run as written: exit 2,
// with a pointer to the command's help.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

const exitCodesHelp = `Exit codes:
  0  success
  1  the command ran and failed (the daemon is not running or refused, a check failed, a tool returned an error)
  2  the command line is wrong (unknown command or flag, missing or extra arguments)`

const envHelp = `Environment:
  AGENTD_HOME  holds config.toml, the store and workspaces (default ~/.agentd)
  AGENTD_ADDR  the daemon's address for client commands (as --addr)`

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	root := e.rootCmd()
	if args == nil {
		args = []string{} // nil makes cobra read os.Args
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	return e.report(cmd, err)
}

// report prints err for cmd and returns the exit code it means.
func (e *env) report(cmd *cobra.Command, err error) int {
	name := "agentd"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	var ue *usageError
	// cobra's own errors for an unknown command are usage errors too.
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command ") {
		fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
		fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", name)
		return ExitUsage
	}
	fmt.Fprintf(e.stderr, "%s: %v\n", name, err)
	return ExitFailure
}

func (e *env) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "agentd",
		Short: "runs AI agents and connects them to MCP, A2A and ACP",
		Long: `agentd runs AI agents and connects them to MCP, A2A and ACP.

` + "`agentd start`" + ` runs the daemon; every other command is a client of a running
daemon (found at --addr, AGENTD_ADDR, the address a running ` + "`agentd start`" + `
recorded in AGENTD_HOME, or listen from the config, in that order), except
` + "`agentd mcp`" + ` and ` + "`agentd acp`" + `, which serve a protocol on stdio.

` + envHelp + `

` + exitCodesHelp,
		Example: `  agentd start                       # the daemon, on 127.0.0.1:4200
  agentd chat assistant              # interactive chat
  agentd --addr 127.0.0.1:4300 agents list
  source <(agentd completion bash)   # completions for this shell`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Arguments are for subcommands only; an unknown one is reported
		// by cobra with its suggestions.
	}
	e.versionFlag(root)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	pf := root.PersistentFlags()
	pf.StringVar(&e.configPath, "config", "", "config file (default $AGENTD_HOME/config.toml)")
	pf.StringVar(&e.addr, "addr", "", "daemon address for client commands (default $AGENTD_ADDR, else the running daemon's, else listen from the config)")
	root.AddCommand(
		e.startCmd(),
		e.doctorCmd(),
		e.agentsCmd(),
		e.chatCmd(),
		e.mcpCmd(),
		e.acpCmd(),
		e.a2aCmd(),
		e.principalsCmd(),
		e.healthCmd(),
		e.versionCmd(),
	)
	return root
}

// group makes cmd, a command that only holds subcommands, refuse an
// unknown subcommand with a suggestion, as cobra does for the root (cobra
// itself prints the group's help and exits 0 for one).
func group(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("a subcommand is required (%s)", subcommandNames(c))
		}
		return unknownSubcommand(c, args[0])
	}
	return cmd
}

func unknownSubcommand(c *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, which only its root applies
	}
	if s := c.SuggestionsFor(name); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	} else {
		msg += " (" + subcommandNames(c) + ")"
	}
	return &usageError{msg}
}

func subcommandNames(c *cobra.Command) string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return strings.Join(names, ", ")
}

// exactArgs is cobra.ExactArgs reported as a usage error naming the
// arguments.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("want %s, got %d argument(s)", what, len(args))
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs as a usage error.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("want %s", what)
		}
		return nil
	}
}

// loadConfig loads the config; write says whether a missing default
// config.toml may be created (only `start` does that).
func (e *env) loadConfig(write bool) (*config.Config, error) {
	return config.Load(config.LoadOptions{Path: e.configPath, WriteDefault: write})
}

// baseURL is the daemon's address for client commands: --addr, else
// AGENTD_ADDR, else the address a running `agentd start` recorded in
// the home directory (start --listen elsewhere), else listen from cfg.
func (e *env) baseURL(cfg *config.Config) string {
	addr := e.addr
	if addr == "" {
		addr = cfg.DaemonAddr()
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return strings.TrimSuffix(addr, "/")
}

// client returns an API client for the daemon the config points at.
func (e *env) client() (*client.Client, *config.Config, error) {
	cfg, err := e.loadConfig(false)
	if err != nil {
		return nil, nil, err
	}
	return client.New(e.baseURL(cfg), cfg.APIKeyValue()), cfg, nil
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

func (e *env) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "print the version, commit and Go version (also --version)",
		Example: "  agentd version\n  agentd --version",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprint(e.stdout, buildinfo.Line())
			return nil
		},
	}
}

// completeAgents completes an agent name from the running daemon; no
// daemon, no completions (and no error on the user's terminal).
func (e *env) completeAgents(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, _, err := e.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	agents, err := c.Agents(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, a := range agents {
		out = append(out, cobra.CompletionWithDesc(a.Manifest.Name, a.Manifest.Description))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// versionFlag gives root the --version (-v) flag cobra would add for a
// Version, printing what `agentd version` prints. cobra prints a custom
// version text only through SetVersionTemplate, i.e. text/template, whose
// method lookup by name (reflect.Value.MethodByName) makes the linker keep
// every exported method of every type in the binary: 10 MiB of agentd's
// (docs/size.md; cmd/agentd TestReleaseBinary holds it). So root has no
// Version and the flag is agentd's: the root command runs nothing, cobra
// answers its flags with help, and the help function prints the version
// instead when the flag is set.
func (e *env) versionFlag(root *cobra.Command) {
	root.Flags().BoolP("version", "v", false, "version for agentd")
	// As cobra marks its own: a given --version ends completion.
	_ = root.Flags().SetAnnotation("version", cobra.FlagSetByCobraAnnotation, []string{"true"})
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			version, _ := c.Flags().GetBool("version")
			asked, _ := c.Flags().GetBool("help")
			if version && !asked {
				fmt.Fprint(c.OutOrStdout(), buildinfo.Line())
				return
			}
		}
		help(c, args)
	})
}
