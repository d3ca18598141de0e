package main

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// LoadSpec bounds one measurement: it stops at Duration or after MaxCalls
// calls, whichever comes first.
type LoadSpec struct {
	Concurrency int
	Duration    time.Duration
	// Warmup runs calls that are not recorded, before the measurement.
	Warmup   time.Duration
	MaxCalls int
}

// Stats is the outcome of one measurement.
type Stats struct {
	Calls   int           // successful calls
	Errors  int           // failed calls
	Elapsed time.Duration // wall time of the measured phase
	P50     time.Duration
	P99     time.Duration
	Rate    float64 // successful calls per second
	// FirstErr is the first failure, if any.
	FirstErr error
}

// Load calls fn from spec.Concurrency goroutines until the spec's bounds
// and records each call's latency. fn's ctx is cancelled when the
// measurement ends or ctx is.
func Load(ctx context.Context, spec LoadSpec, fn func(context.Context) error) Stats {
	return LoadTimed(ctx, spec, func(ctx context.Context) (time.Duration, error) {
		t0 := time.Now()
		err := fn(ctx)
		return time.Since(t0), err
	})
}

// LoadTimed is Load for calls that report their own latency (such as the
// time to a stream's first event).
func LoadTimed(ctx context.Context, spec LoadSpec, fn func(context.Context) (time.Duration, error)) Stats {
	conc := max(spec.Concurrency, 1)
	if spec.Warmup > 0 {
		runPhase(ctx, conc, spec.Warmup, 0, fn)
	}
	if ctx.Err() != nil {
		return Stats{FirstErr: ctx.Err()}
	}
	return runPhase(ctx, conc, spec.Duration, spec.MaxCalls, fn)
}

func runPhase(ctx context.Context, conc int, d time.Duration, maxCalls int, fn func(context.Context) (time.Duration, error)) Stats {
	if maxCalls <= 0 {
		maxCalls = int(^uint(0) >> 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		issued   atomic.Int64
		errs     atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	lats := make([][]time.Duration, conc)
	start := time.Now()
	deadline := start.Add(d)
	for w := range conc {
		wg.Go(func() {
			own := make([]time.Duration, 0, 1024)
			for ctx.Err() == nil && time.Now().Before(deadline) && issued.Add(1) <= int64(maxCalls) {
				lat, err := fn(ctx)
				if err != nil {
					if ctx.Err() != nil {
						break // cut short by the end of the phase
					}
					errs.Add(1)
					errOnce.Do(func() { firstErr = err })
					continue
				}
				own = append(own, lat)
			}
			lats[w] = own
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	st := Stats{Calls: len(all), Errors: int(errs.Load()), Elapsed: elapsed, FirstErr: firstErr}
	st.P50, st.P99 = percentile(all, 50), percentile(all, 99)
	if elapsed > 0 {
		st.Rate = float64(len(all)) / elapsed.Seconds()
	}
	return st
}

// percentile returns the nearest-rank p-th percentile of ds (which it
// sorts), or 0 for no samples.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(float64(len(ds))*p/100+0.999999) - 1
	return ds[min(max(rank, 0), len(ds)-1)]
}

// Cell collects the rounds of one measurement (a path at a concurrency).
type Cell struct {
	Path        string
	Concurrency int
	// Note is shown with the row (e.g. the protocol version negotiated).
	Note   string
	Rounds []Stats
}

// Summary is a cell's median over its rounds.
type Summary struct {
	P50, P99 time.Duration
	Rate     float64
	Calls    int // total successful calls over all rounds
	Errors   int
	FirstErr error
}

// Summary returns the medians of p50, p99 and rate over the rounds.
func (c *Cell) Summary() Summary {
	var s Summary
	var p50, p99 []time.Duration
	var rates []float64
	for _, r := range c.Rounds {
		s.Calls += r.Calls
		s.Errors += r.Errors
		if s.FirstErr == nil {
			s.FirstErr = r.FirstErr
		}
		if r.Calls == 0 {
			continue
		}
		p50 = append(p50, r.P50)
		p99 = append(p99, r.P99)
		rates = append(rates, r.Rate)
	}
	s.P50, s.P99, s.Rate = median(p50), median(p99), median(rates)
	return s
}

// median returns the middle value (the mean of the two middle ones for
// an even count), or zero for none.
func median[T time.Duration | float64 | int64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Interleave runs rounds of measurements: each round measures every
// cell once, the order rotating from round to round, so slow drift of a
// noisy machine spreads over all paths instead of biasing one.
func Interleave(ctx context.Context, rounds int, cells []*Cell, measure func(ctx context.Context, c *Cell) Stats) {
	for r := range rounds {
		n := len(cells)
		for i := range n {
			if ctx.Err() != nil {
				return
			}
			c := cells[(i+r)%n]
			c.Rounds = append(c.Rounds, measure(ctx, c))
		}
	}
}
