package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/config"
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
			// SIGHUP's default action kills the process: it is caught
			// from the start, and reloads the config once the daemon
			// is built.
			hup := onHUP(ctx, log)
			defer hup.stop()
			d, err := daemon.New(ctx, cfg, daemon.Options{Logger: log, ConnectMCP: true, Adjust: func(c *config.Config) {
				if listen != "" {
					c.Listen = listen
				}
			}})
			if err != nil {
				return err
			}
			defer d.Close()
			hup.reload.Store(&d)
			// Deferred after Close, so it runs first: no reload runs
			// on a closing daemon.
			defer hup.stop()
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

// hupHandler reloads the daemon's config on SIGHUP (the same reload as
// POST /api/admin/reload); before the daemon is built, SIGHUP is only
// logged.
type hupHandler struct {
	reload atomic.Pointer[*daemon.Daemon]
	stop   func()
}

func onHUP(ctx context.Context, log *slog.Logger) *hupHandler {
	h := &hupHandler{}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-sig:
				d := h.reload.Load()
				if d == nil {
					log.Warn("SIGHUP during start-up: ignored; send it again once the daemon listens")
					continue
				}
				(*d).ReloadSignal(context.WithoutCancel(ctx))
			}
		}
	})
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			signal.Stop(sig)
			close(done)
			wg.Wait()
		})
	}
	return h
}
