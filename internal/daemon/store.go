package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/store/storemetrics"
)

// openStore opens the backend [store] chooses. A PostgreSQL database that
// cannot be reached fails here, within postgres.DefaultConnectTimeout,
// with an error naming the variable the URL came from and the URL with its
// password masked: a replica must not start half-working.
func openStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (store.Store, error) {
	switch cfg.Store.Backend {
	case config.BackendPostgres:
		url, err := cfg.PostgresURL()
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		db, err := postgres.Open(ctx, url.Reveal(), &postgres.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open store: postgres (URL from $%s): %w", cfg.Store.URLEnv, err)
		}
		log.Info("store opened", "backend", config.BackendPostgres, "database", postgres.Redact(url.Reveal()))
		return db, nil
	case config.BackendSQLite, "":
		db, err := sqlite.Open(ctx, cfg.StorePath(), &sqlite.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		return db, nil
	default:
		// Validation refuses it; a Config built in code may still say it.
		return nil, fmt.Errorf("open store: store.backend %q is not one of %s, %s", cfg.Store.Backend, config.BackendSQLite, config.BackendPostgres)
	}
}

// storeSystem is the backend's db.system.name, for the store's metrics.
func storeSystem(cfg *config.Config) string {
	if cfg.Store.Backend == config.BackendPostgres {
		return storemetrics.PostgreSQL
	}
	return storemetrics.SQLite
}

// joinReplicas makes this daemon a replica of the system on db when the
// store is PostgreSQL: it registers with a lease, and from then on
// agentd processes on the same database act as one (see docs/deploy.md).
// nil, nil with SQLite: one process, alone with its file.
func joinReplicas(ctx context.Context, cfg *config.Config, db store.Store, log *slog.Logger) (*postgres.Cluster, error) {
	pg, ok := db.(*postgres.DB)
	if !ok {
		return nil, nil
	}
	name := cfg.Cluster.Name
	if name == "" {
		host, _ := os.Hostname()
		_, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil || port == "" {
			port = "0"
		}
		name = host + ":" + port
	}
	c, err := pg.Join(ctx, postgres.ClusterOptions{
		Name:      name,
		Heartbeat: time.Duration(cfg.Cluster.HeartbeatSecs) * time.Second,
		Lease:     time.Duration(cfg.Cluster.LeaseSecs) * time.Second,
		Logger:    log,
	})
	if err != nil {
		return nil, fmt.Errorf("join the replicas on the PostgreSQL store: %w", err)
	}
	return c, nil
}
