package main

import (
	"crypto/sha256"
	"os"
	"testing"
	"time"
)

// TestCPUTime reads the bench's own CPU time around a loop that burns at
// least 50 ms of it.
func TestCPUTime(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		sum = sha256.Sum256(sum[:])
	}
	after, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// 200 ms of wall time spinning is at least 50 ms on the CPU even on
	// a machine shared four ways; the ticks are 10 ms.
	if d := after - before; d < 50*time.Millisecond || d > 10*time.Second {
		t.Errorf("cpu time grew by %s over 200 ms of spinning", d)
	}
	if _, err := cpuTime(1 << 30); err == nil {
		t.Error("cpu time of a pid that does not exist: no error")
	}
}
