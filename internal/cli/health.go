package cli

import (
	"context"
	"fmt"
	"time"
)

// runHealth asks the daemon for GET /api/health and fails unless it says
// ok: the container image's HEALTHCHECK (a scratch image has no curl),
// and a probe for scripts.
func runHealth(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("health")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: health takes no arguments", errUsage)
	}
	c, _, err := e.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	h, err := c.Health(ctx)
	if err != nil {
		return err
	}
	if h.Status != "ok" {
		return fmt.Errorf("the daemon says %q", h.Status)
	}
	fmt.Fprintf(e.stdout, "ok %s\n", h.Version)
	return nil
}
