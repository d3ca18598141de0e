package mcpclient

import (
	"sync"
	"time"
)

// An upstream's notifications/message are its to send at any rate; the
// daemon's log is not its to fill. A held-out run saw one server write
// 279 MB of INFO lines in 15 s. logLimiter lets a server's messages
// through at a sustained rate with a burst (a token bucket), counts what
// it drops, and reports the count with the next message let through, so
// the operator sees that (and how much) was suppressed.
type logLimiter struct {
	rate  float64 // messages per second
	burst float64

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// Upstream log limits per server: enough for a chatty server's start-up
// and a steady trickle after; beyond them a line is counted, not written.
const (
	upstreamLogRate  = 10
	upstreamLogBurst = 50
	// upstreamLogMax bounds one message's text in the daemon's log.
	upstreamLogMax = 1000
)

func newLogLimiter(rate, burst float64) *logLimiter {
	return &logLimiter{rate: rate, burst: burst, tokens: burst}
}

// allow reports whether a message arriving at now may be logged, and how
// many were dropped since the last one that was.
func (l *logLimiter) allow(now time.Time) (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}
