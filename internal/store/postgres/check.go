package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Status is what Check found: enough for `agentd doctor` to say whether
// `agentd start` will work, and what it will do to the schema.
type Status struct {
	Server   string // the server's version, e.g. "15.4"
	Database string
	Schema   string // where agentd's tables are (current_schema)
	// Version is the schema's migration version (0: no agentd tables
	// yet); Latest is the one this agentd migrates to.
	Version, Latest int
}

// Check connects to connURL within timeout (zero means
// DefaultConnectTimeout) and reads the schema's migration version,
// changing nothing: unlike Open, it applies no migration. Errors never
// contain the URL's password.
func Check(ctx context.Context, connURL string, timeout time.Duration) (Status, error) {
	target := Redact(connURL)
	cfg, err := poolConfig(connURL, timeout)
	if err != nil {
		return Status{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.ConnConfig.ConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return Status{}, fmt.Errorf("connect to %s: %w", target, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	st := Status{Latest: LatestVersion()}
	var schema *string
	var migrated bool
	err = conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_database(), current_schema(),
		to_regclass('schema_migrations') IS NOT NULL`).Scan(&st.Server, &st.Database, &schema, &migrated)
	if err != nil {
		return Status{}, wrap(fmt.Sprintf("inspect %s", target), err)
	}
	if schema == nil {
		return st, errors.New("no schema to create tables in: the search_path names no existing schema")
	}
	st.Schema = *schema
	if migrated {
		if err := conn.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&st.Version); err != nil {
			return Status{}, wrap(fmt.Sprintf("read schema version of %s", target), err)
		}
	}
	return st, nil
}
