package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/acpagent"
	"github.com/agentd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/daemon"
	"github.com/agentd/agentd/internal/mcpclient"
)

func (e *env) acpCmd() *cobra.Command {
	var agentName string
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "serve the Agent Client Protocol on stdio for an editor",
		Long: `Serve the Agent Client Protocol on stdin/stdout for an editor that launched
agentd (Zed: "agent_servers": {"agentd": {"command": "agentd", "args": ["acp"]}}).
The kernel runs in this process over the daemon's store; logs go to stderr.`,
		Example: `  agentd acp
  agentd acp --agent coder`,
		Args:              exactArgs(0, "no arguments (agentd acp [--agent NAME])"),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.acp(cmd.Context(), agentName)
		},
	}
	cmd.Flags().StringVar(&agentName, "agent", "", "agent to serve (default: default_agent from the config, else the first agent)")
	_ = cmd.RegisterFlagCompletionFunc("agent", e.completeAgents)
	return cmd
}

// acp serves the Agent Client Protocol on stdio for an editor that
// launched `agentd acp`. The kernel runs in this process over the same
// store file as the daemon (SQLite in WAL mode allows both at once), so
// sessions started in the editor are listed and continued through a
// running daemon's API, and the other way round. Logs go to stderr: stdout
// carries the protocol.
func (e *env) acp(ctx context.Context, agentFlag string) error {
	cfg, err := e.loadConfig(false)
	if err != nil {
		return err
	}
	base := e.logger(cfg)
	log := base.With("component", "acp")

	token := ""
	if cfg.ACP.AuthTokenEnv != "" {
		v, ok := cfg.LookupSecret(cfg.ACP.AuthTokenEnv)
		if !ok {
			return fmt.Errorf("acp.auth_token_env names %s, which is not set: set it, or remove auth_token_env from %s", cfg.ACP.AuthTokenEnv, cfg.File)
		}
		token = v
	}
	version := cfg.ACP.Version
	if version == "" {
		version = buildinfo.Version()
	}

	d, err := daemon.New(ctx, cfg, daemon.Options{Logger: base, ConnectMCP: true})
	if err != nil {
		return err
	}
	defer d.Close()

	name, err := acpAgent(ctx, cfg, d, agentFlag)
	if err != nil {
		return err
	}
	entry, err := d.Kernel.Agents().Get(ctx, name)
	if err != nil {
		return err
	}
	log.Info("serving ACP on stdio", "agent", name, "store", cfg.StorePath())
	return acpagent.Serve(ctx, e.stdin, e.stdout, acpagent.Options{
		Kernel:        d.Kernel,
		Sessions:      d.Store,
		Agent:         name,
		Name:          cfg.ACP.Name,
		Version:       version,
		UntrustedUser: cfg.ACP.UserTrust == "untrusted",
		AuthToken:     token,
		Tools:         d.Tools,
		Workspace:     cfg.WorkspaceDir(name, entry.Manifest),
		ConnectMCP: acpagent.NewMCPConnector(acpagent.MCPConnectorOptions{
			Client: mcpclient.Options{
				Logger:        base.With("component", "editor-mcp"),
				ClientName:    cfg.ACP.Name,
				ClientVersion: version,
				// An editor's stdio servers are confined like configured
				// ones (docs/security.md).
				Sandbox:       d.Sandbox,
				SandboxPolicy: cfg.MCPSandbox,
			},
			Ambient: cfg.LookupSecret,
		}),
		// The config's MCP servers connect in the background: a session
		// opens once their first attempts are over (or 20 s have passed),
		// so that its first turn finds their tools.
		Ready: func(ctx context.Context) []error {
			return acpagent.WaitServers(ctx, d.MCP, acpServerWait)
		},
		Tracer: d.Telemetry.TracerProvider(),
		Logger: log,
	})
}

// acpServerWait bounds how long opening an ACP session waits for the
// config's MCP servers; a slower one's tools appear in a later turn.
const acpServerWait = 20 * time.Second

// acpAgent picks the agent to serve: --agent, else default_agent, else the
// first agent there is.
func acpAgent(ctx context.Context, cfg *config.Config, d *daemon.Daemon, flag string) (string, error) {
	switch {
	case flag != "":
		return flag, nil
	case cfg.DefaultAgent != "":
		return cfg.DefaultAgent, nil
	}
	entries, err := d.Kernel.Agents().List(ctx)
	if err != nil {
		return "", err
	}
	if len(entries) == 0 {
		return "", fmt.Errorf("no agent to serve: add an [[agents]] entry to %s or pass --agent", cfg.File)
	}
	return entries[0].Manifest.Name, nil
}
