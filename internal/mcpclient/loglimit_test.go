package mcpclient

import (
	"testing"
	"time"
)

// TestLogLimiter: a flood is cut to the burst, then to the rate, and the
// first line let through after drops says how many were dropped.
func TestLogLimiter(t *testing.T) {
	l := newLogLimiter(10, 5)
	t0 := time.Unix(1000, 0)
	passed := 0
	for range 100 {
		if ok, _ := l.allow(t0); ok {
			passed++
		}
	}
	if passed != 5 {
		t.Fatalf("a burst of 100 at one instant let %d through, want the burst, 5", passed)
	}
	// 0.1 s later one token has come back: one line, reporting the 95.
	ok, dropped := l.allow(t0.Add(100 * time.Millisecond))
	if !ok || dropped != 95 {
		t.Fatalf("after 0.1 s: ok=%v dropped=%d, want true, 95", ok, dropped)
	}
	if ok, _ := l.allow(t0.Add(100 * time.Millisecond)); ok {
		t.Fatal("a second line in the same instant passed: the token was already spent")
	}
	// A long quiet period refills only up to the burst.
	passed = 0
	for range 20 {
		if ok, _ := l.allow(t0.Add(time.Hour)); ok {
			passed++
		}
	}
	if passed != 5 {
		t.Fatalf("after an hour of quiet %d passed, want the burst, 5", passed)
	}
}
