package main

import (
	"fmt"
	"strings"
)

// metric picks what a comparison reads from a row: its median and the
// value of each round.
type metric struct {
	name string
	// higherBetter is true for throughput, false for latency.
	higherBetter bool
	get          func(Row) (float64, []float64)
}

var (
	mRate = metric{"calls/s", true, func(r Row) (float64, []float64) { return r.Rate, r.RoundRates }}
	mP50  = metric{"p50", false, func(r Row) (float64, []float64) { return r.P50us, r.RoundP50us }}
	mP99  = metric{"p99", false, func(r Row) (float64, []float64) { return r.P99us, r.RoundP99us }}
)

// bound is one check of a comparison: at concurrency Conc the ratio
// num/den of the metric must be ≥ Min (when Min > 0) or ≤ Max (when
// Max > 0).
type bound struct {
	Conc     int
	Min, Max float64
}

func (b bound) pass(ratio float64) bool {
	if b.Min > 0 && ratio < b.Min {
		return false
	}
	if b.Max > 0 && ratio > b.Max {
		return false
	}
	return true
}

func (b bound) String() string {
	if b.Min > 0 {
		return fmt.Sprintf("≥ %g× at c=%d", b.Min, b.Conc)
	}
	return fmt.Sprintf("≤ %g× at c=%d", b.Max, b.Conc)
}

// comparison is a target read as the ratio of one row's metric to
// another's, measured in the same interleaved rounds.
type comparison struct {
	Name, Goal string
	Num, Den   string // row paths
	Metric     metric
	Bounds     []bound
	// Why is prepended to the generated explanation.
	Why string
}

// target evaluates c on res's rows. A bound whose rows are missing makes
// the target unmeasured (not met would blame agentd for a peer that did
// not run).
func (c comparison) target(res *Scenario) Target {
	var parts, noisy, missing []string
	met := true
	for _, b := range c.Bounds {
		n, okN := res.row(c.Num, b.Conc)
		d, okD := res.row(c.Den, b.Conc)
		if !okN || !okD {
			missing = append(missing, fmt.Sprintf("c=%d", b.Conc))
			continue
		}
		nv, nr := c.Metric.get(n)
		dv, dr := c.Metric.get(d)
		if dv == 0 {
			missing = append(missing, fmt.Sprintf("c=%d", b.Conc))
			continue
		}
		// Each round measures both paths back to back, so the median of
		// the rounds' ratios cancels the machine's drift better than the
		// ratio of the medians, which mixes rounds; with one round they
		// agree.
		ratio := nv / dv
		seen := map[bool]bool{}
		var rs []string
		var perRound []float64
		for i := range min(len(nr), len(dr)) {
			if dr[i] > 0 {
				r := nr[i] / dr[i]
				perRound = append(perRound, r)
				rs = append(rs, fmt.Sprintf("%.2f", r))
				seen[b.pass(r)] = true
			}
		}
		if len(perRound) >= 2 {
			ratio = median(perRound)
		}
		text := fmt.Sprintf("%.2f×", ratio)
		if len(rs) >= 2 {
			text += " (rounds " + strings.Join(rs, ", ") + ")"
		}
		parts = append(parts, fmt.Sprintf("%s at c=%d", text, b.Conc))
		if !b.pass(ratio) {
			met = false
		}
		if len(seen) > 1 {
			noisy = append(noisy, fmt.Sprintf("c=%d", b.Conc))
		}
	}
	if len(missing) > 0 {
		return unmeasured(c.Name, c.Goal, fmt.Sprintf("%s or %s has no numbers at %s (see the rows).", c.Num, c.Den, strings.Join(missing, ", ")))
	}
	why := c.Why
	if why != "" {
		why += " "
	}
	why += fmt.Sprintf("%s of %s over %s (the median of the rounds' ratios): %s.", c.Metric.name, c.Num, c.Den, strings.Join(parts, ", ")) + noiseNote(noisy)
	return Target{Name: c.Name, Goal: c.Goal, Measured: strings.Join(parts, ", "), Met: verdict(met), Why: why}
}

// goalText renders bounds as a goal, e.g. "≥ 2.5× at c=1, ≥ 3× at c=16".
func goalText(what string, bs ...bound) string {
	var s []string
	for _, b := range bs {
		s = append(s, b.String())
	}
	return what + " " + strings.Join(s, ", ")
}
