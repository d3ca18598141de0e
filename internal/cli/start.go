package cli

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

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
			if listen != "" {
				// The address served is the one everything else names:
				// the replica's name (host:port; replicas on one host
				// were all named after the file's port) and the Host
				// check.
				cfg.Listen = listen
			}
			log := e.logger(cfg)
			stopHUP := ignoreHUP(log)
			defer stopHUP()
			d, err := daemon.New(ctx, cfg, daemon.Options{Logger: log, ConnectMCP: true})
			if err != nil {
				return err
			}
			defer d.Close()
			log = log.With("service.instance.id", d.Telemetry.InstanceID()) // as the daemon's own records
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

// ignoreHUP keeps SIGHUP from killing the daemon (its default action:
// exit 129, without draining), which an operator sending it to reload
// would not expect. Reloading is not implemented: the signal is logged,
// and a restart (a rolling one, among replicas) applies a new config.
// The returned func stops listening and waits for the goroutine.
func ignoreHUP(log *slog.Logger) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				log.Warn("SIGHUP: reload not supported yet: restart the daemon to apply a new config (it keeps running with the old one)")
			}
		}
	})
	return func() {
		signal.Stop(hup)
		close(done)
		wg.Wait()
	}
}
