package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/agentd/agentd/internal/daemon"
)

func runStart(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("start")
	fs.StringVar(&e.configPath, "config", e.configPath, "config file (default $AGENTD_HOME/config.toml)")
	listen := fs.String("listen", "", "listen address (default: listen from the config, 127.0.0.1:4200)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := e.loadConfig(true)
	if err != nil {
		return err
	}
	log := e.logger(cfg)
	stopHUP := ignoreHUP(log)
	defer stopHUP()
	d, err := daemon.New(ctx, cfg, daemon.Options{Logger: log, ConnectMCP: true})
	if err != nil {
		return err
	}
	defer d.Close()
	ln, err := d.Listen(*listen)
	if err != nil {
		return err
	}
	if err := d.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
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
