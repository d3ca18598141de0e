//go:build !linux && !darwin

package cli

import (
	"context"
	"os"

	"github.com/agentd/agentd/internal/config"
)

// isTerminal is false where agentd has no terminal handling: chat reads
// lines, as from a pipe.
func isTerminal(*os.File) bool { return false }

func (ch *chat) interactive(ctx context.Context, _ *config.Config) error { return ch.lines(ctx) }

func (ch *chat) ttyTurn(ctx context.Context, msg string) (bool, error) {
	_, err := ch.turn(ctx, msg, nil)
	return false, err
}
