package cli

import (
	"context"
	"fmt"

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
	if *listen != "" {
		// The address served is the one everything else names: the
		// replica's name (host:port; replicas on one host were all
		// named after the file's port) and the Host check.
		cfg.Listen = *listen
	}
	log := e.logger(cfg)
	d, err := daemon.New(ctx, cfg, daemon.Options{Logger: log, ConnectMCP: true})
	if err != nil {
		return err
	}
	defer d.Close()
	log = log.With("service.instance.id", d.Telemetry.InstanceID()) // as the daemon's own records
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
