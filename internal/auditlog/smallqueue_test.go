package auditlog

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// TestSmallQueueEndsLinger: with a queue smaller than a batch, a full
// queue ends the writer's linger, so that callers waiting for room do not
// wait it out (they did when only a full batch ended it).
func TestSmallQueueEndsLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		close(g.release)
		w := New(g, &Options{Queue: 4, MaxBatch: 100, Linger: time.Hour})
		defer w.Close()
		ctx := context.Background()
		start := time.Now()
		for i := range 12 {
			w.AppendAudit(ctx, store.AuditRecord{Tool: fmt.Sprint("t", i)})
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("12 appends to a queue of 4 took %v (linger 1h)", d)
		}
	})
}
