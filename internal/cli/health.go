package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

// healthCmd asks the daemon for GET /api/health and fails unless it says
// ok: the container image's HEALTHCHECK (a scratch image has no curl),
// and a probe for scripts.
func (e *env) healthCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "health",
		Short: "ask the daemon whether it is up (exit 0 if it is)",
		Example: `  agentd health
  agentd health --timeout 4s && echo up`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.health(cmd.Context(), timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}

func (e *env) health(ctx context.Context, timeout time.Duration) error {
	c, _, err := e.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
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
