package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/daemon"
)

func (e *env) startCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "start",
		Short: "run the daemon in the foreground",
		Long: `Run the daemon in the foreground until interrupted (Ctrl-C, SIGTERM).

The first start writes a commented config.toml into AGENTD_HOME. The daemon
records the address it listens on in AGENTD_HOME/daemon.json, so client
commands of the same config find it after ` + "`start --listen`" + `.`,
		Example: `  agentd start
  agentd start --listen 127.0.0.1:4300
  agentd start --config /etc/agentd/config.toml`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := e.loadConfig(true)
			if err != nil {
				return err
			}
			log := e.logger(cfg)
			d, err := daemon.New(ctx, cfg, daemon.Options{Logger: log, ConnectMCP: true})
			if err != nil {
				return err
			}
			defer d.Close()
			ln, err := d.Listen(listen)
			if err != nil {
				return err
			}
			remove, err := cfg.RecordDaemonAddr(ln.Addr().String())
			if err != nil {
				log.Warn("client commands will not find this daemon unless given --addr", "err", err)
			}
			defer remove()
			if err := d.Serve(ctx, ln); err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			log.Info("stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "listen address (default: listen from the config, 127.0.0.1:4200)")
	return cmd
}
