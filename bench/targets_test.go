package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestComparisonTarget(t *testing.T) {
	rows := []Row{
		{Path: "agentd", Concurrency: 1, Rate: 900, P50us: 100, P99us: 400, RoundRates: []float64{900, 1000, 800}, RoundP50us: []float64{100, 90, 110}, RoundP99us: []float64{400, 380, 420}},
		{Path: "peer", Concurrency: 1, Rate: 300, P50us: 120, P99us: 350, RoundRates: []float64{300, 300, 300}, RoundP50us: []float64{120, 120, 80}, RoundP99us: []float64{350, 350, 350}},
		{Path: "agentd", Concurrency: 16, Rate: 2000, P99us: 900},
		{Path: "peer", Concurrency: 16, Rate: 1000, P99us: 1000},
		{Path: "gone", NA: "did not start"},
		// A drifting machine: the ratio of the medians (2.0) says more
		// than any round does; the rounds' median ratio (1.0) does not.
		{Path: "agentd", Concurrency: 4, Rate: 200, RoundRates: []float64{100, 300, 200}},
		{Path: "peer", Concurrency: 4, Rate: 100, RoundRates: []float64{100, 100, 400}},
	}
	res := &Scenario{Rows: rows}
	tests := []struct {
		name     string
		c        comparison
		met      *bool
		measured string
		why      []string
	}{
		{"throughput met at c=1", comparison{Num: "agentd", Den: "peer", Metric: mRate, Bounds: []bound{{Conc: 1, Min: 2.5}}},
			verdict(true), "3.00× (rounds 3.00, 3.33, 2.67) at c=1", nil},
		{"throughput not met at c=16", comparison{Num: "agentd", Den: "peer", Metric: mRate, Bounds: []bound{{Conc: 1, Min: 2.5}, {Conc: 16, Min: 3}}},
			verdict(false), "3.00× (rounds 3.00, 3.33, 2.67) at c=1, 2.00× at c=16", nil},
		{"rounds disagree", comparison{Num: "agentd", Den: "peer", Metric: mRate, Bounds: []bound{{Conc: 1, Min: 3}}},
			verdict(true), "3.00× (rounds 3.00, 3.33, 2.67) at c=1", []string{"Rounds disagree at c=1"}},
		{"latency at most", comparison{Num: "agentd", Den: "peer", Metric: mP50, Bounds: []bound{{Conc: 1, Max: 1}}},
			verdict(true), "0.83× (rounds 0.83, 0.75, 1.38) at c=1", []string{"Rounds disagree"}},
		{"p99 above", comparison{Num: "agentd", Den: "peer", Metric: mP99, Bounds: []bound{{Conc: 1, Max: 1}}},
			verdict(false), "1.14× (rounds 1.14, 1.09, 1.20) at c=1", nil},
		{"paired rounds, not medians", comparison{Num: "agentd", Den: "peer", Metric: mRate, Bounds: []bound{{Conc: 4, Min: 1.5}}},
			verdict(false), "1.00× (rounds 1.00, 3.00, 0.50) at c=4", []string{"Rounds disagree at c=4"}},
		{"a missing row is unmeasured, not failed", comparison{Num: "agentd", Den: "gone", Metric: mRate, Bounds: []bound{{Conc: 1, Min: 1}}},
			nil, "n/a", []string{"gone", "c=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.c.target(res)
			if (got.Met == nil) != (tt.met == nil) || (got.Met != nil && *got.Met != *tt.met) {
				t.Fatalf("met = %v, want %v (%+v)", metText(got.Met), metText(tt.met), got)
			}
			if got.Measured != tt.measured {
				t.Errorf("measured = %q, want %q", got.Measured, tt.measured)
			}
			for _, w := range tt.why {
				if !strings.Contains(got.Why, w) {
					t.Errorf("why %q lacks %q", got.Why, w)
				}
			}
		})
	}
}

func TestSoakTargets(t *testing.T) {
	base := procSample{RSSkB: 40_000, FDs: 30, Threads: 9, Goroutines: 100}
	tests := []struct {
		name          string
		after         procSample
		err           error
		rssMet, noMet *bool
	}{
		{"steady", procSample{RSSkB: 44_000, FDs: 30, Threads: 12, Goroutines: 100}, nil, verdict(true), verdict(true)},
		{"rss grew", procSample{RSSkB: 50_000, FDs: 30, Threads: 9, Goroutines: 100}, nil, verdict(false), verdict(true)},
		{"goroutines leak", procSample{RSSkB: 40_000, FDs: 30, Threads: 9, Goroutines: 101}, nil, verdict(true), verdict(false)},
		{"fds leak", procSample{RSSkB: 40_000, FDs: 31, Threads: 9, Goroutines: 100}, nil, verdict(true), verdict(false)},
		{"not run", procSample{}, errors.New("no node"), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &Scenario{}
			var r *soakResult
			if tt.err == nil {
				r = &soakResult{Calls: 100_000, WantCalls: 100_000, Conc: 16, Warmup: 5000, Before: base, After: tt.after}
			}
			soakTargets(res, r, tt.err)
			if len(res.Targets) != 2 {
				t.Fatalf("%d targets", len(res.Targets))
			}
			for i, want := range []*bool{tt.rssMet, tt.noMet} {
				got := res.Targets[i].Met
				if (got == nil) != (want == nil) || (got != nil && *got != *want) {
					t.Errorf("%s: met = %v, want %v (%s)", res.Targets[i].Name, metText(got), metText(want), res.Targets[i].Why)
				}
			}
		})
	}
}

// TestFloorRelay drives the floor relay in front of server-everything
// with the go-sdk client the bench measures it with, from concurrent
// callers sharing one session (their ids interleave) and from a second
// session whose ids repeat the first one's.
func TestFloorRelay(t *testing.T) {
	e := interopEnv(t)
	p, url, err := e.StartFloorRelay(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(0)
	var sessions []*mcp.ClientSession
	for range 2 {
		cs, err := e.ConnectHTTP(t.Context(), url, sessionVersion)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		cs := sessions[i%2]
		wg.Go(func() {
			for j := range 10 {
				want := "m" + strings.Repeat("x", i) + string(rune('a'+j))
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": want}})
				if err != nil {
					errs <- err
					return
				}
				if got := toolText(res); !strings.HasSuffix(got, want) {
					errs <- errors.New("answer " + got + " to a call with " + want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The bench builds agentd with the Makefile's tags, as a release is.
func TestReleaseTags(t *testing.T) {
	tags, err := releaseTags("..")
	if err != nil || !strings.Contains(tags, "grpcnotrace") {
		t.Fatalf("releaseTags: %q, %v", tags, err)
	}
}
