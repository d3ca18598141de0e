package daemon

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/sqlite"
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
