package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// procSample is what the bench reads of a running agentd to see growth.
type procSample struct {
	RSSkB      int64
	FDs        int
	Threads    int
	Goroutines int // from go_goroutines at /metrics; -1 if not served
}

// sample reads a's process state. Goroutines come from the Prometheus
// exposition (Go runtime collector); fds and threads from /proc.
func sample(ctx context.Context, c *http.Client, a *Agentd) (procSample, error) {
	var s procSample
	var err error
	pid := a.Proc.Pid()
	if s.RSSkB, err = rssKB(pid); err != nil {
		return s, err
	}
	if s.FDs, err = fdCount(pid); err != nil {
		return s, err
	}
	if s.Threads, err = threadCount(pid); err != nil {
		return s, err
	}
	s.Goroutines = goroutines(ctx, c, a.URL+"/metrics")
	return s, nil
}

// settledSample waits for the process to settle and takes the smallest
// of a few samples a quarter second apart: a goroutine or connection
// finishing its work at that moment is not growth.
//
// The load generator's idle keep-alive connections are closed first
// (the session outlives them), and /metrics is read on a connection of
// its own that closes after the answer: the counts are agentd's own
// state, not how many connections the client pool happened to grow.
func settledSample(ctx context.Context, c *http.Client, a *Agentd) (procSample, error) {
	c.CloseIdleConnections()
	c = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return procSample{}, ctx.Err()
	}
	best, err := sample(ctx, c, a)
	if err != nil {
		return best, err
	}
	for range 3 {
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return best, ctx.Err()
		}
		s, err := sample(ctx, c, a)
		if err != nil {
			return best, err
		}
		best.RSSkB, best.FDs, best.Threads = min(best.RSSkB, s.RSSkB), min(best.FDs, s.FDs), min(best.Threads, s.Threads)
		if s.Goroutines >= 0 && (best.Goroutines < 0 || s.Goroutines < best.Goroutines) {
			best.Goroutines = s.Goroutines
		}
	}
	return best, nil
}

// goroutines reads go_goroutines from a Prometheus exposition, or -1.
func goroutines(ctx context.Context, c *http.Client, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return -1
	}
	resp, err := c.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return -1
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return int(f)
			}
		}
	}
	return -1
}

// soakResult is the long gateway run of scenario 4.
type soakResult struct {
	Calls, Errors  int
	Elapsed        time.Duration
	Before, After  procSample
	Conc, Warmup   int
	FirstErr       error
	WantCalls      int
	CutShortByTime bool
}

// gatewaySoak warms the gateway up, samples agentd, makes
// Settings.SoakCalls calls to /mcp/gateway/everything over one 2025-11-25
// session at c=16 and samples it again.
func gatewaySoak(ctx context.Context, e *Env, a *Agentd) (*soakResult, error) {
	cs, tool, err := connectAgentdTool(ctx, e, a, "/mcp/gateway/everything", sessionVersion, func(n string) bool { return n == "echo" })
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	call := callOnce(cs, tool, map[string]any{"message": "soak"})
	r := &soakResult{Conc: 16, Warmup: e.Settings.SoakWarmup, WantCalls: e.Settings.SoakCalls}
	e.logf("  gateway soak: %d warm-up calls, then %d", r.Warmup, r.WantCalls)
	if st := Load(ctx, LoadSpec{Concurrency: r.Conc, Duration: time.Minute, MaxCalls: r.Warmup}, call); st.Calls == 0 {
		return nil, fmt.Errorf("warm-up: no successful call: %v", st.FirstErr)
	}
	if r.Before, err = settledSample(ctx, e.HTTP, a); err != nil {
		return nil, err
	}
	st := Load(ctx, LoadSpec{Concurrency: r.Conc, Duration: e.Settings.SoakMax, MaxCalls: r.WantCalls}, call)
	r.Calls, r.Errors, r.Elapsed, r.FirstErr = st.Calls, st.Errors, st.Elapsed, st.FirstErr
	r.CutShortByTime = st.Calls+st.Errors < r.WantCalls
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if r.After, err = settledSample(ctx, e.HTTP, a); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *soakResult) rows(res *Scenario) {
	note := fmt.Sprintf("%d calls at c=%d in %.0f s after %d warm-up calls", r.Calls, r.Conc, r.Elapsed.Seconds(), r.Warmup)
	if r.Errors > 0 {
		note += fmt.Sprintf("; %d errors, first: %s", r.Errors, abbreviate(fmt.Sprint(r.FirstErr), 120))
	}
	res.Rows = append(res.Rows,
		Row{Path: "RSS after gateway warm-up", Value: float64(r.Before.RSSkB) / 1024, Unit: "MiB"},
		Row{Path: "RSS after the gateway run", Value: float64(r.After.RSSkB) / 1024, Unit: "MiB", Note: note},
		Row{Path: "open fds, after warm-up → after the run", Value: float64(r.After.FDs), Unit: "fds", Note: fmt.Sprintf("%d after warm-up", r.Before.FDs)},
		Row{Path: "OS threads, after warm-up → after the run", Value: float64(r.After.Threads), Unit: "threads", Note: fmt.Sprintf("%d after warm-up", r.Before.Threads)},
	)
	if r.After.Goroutines >= 0 && r.Before.Goroutines >= 0 {
		res.Rows = append(res.Rows, Row{Path: "goroutines, after warm-up → after the run", Value: float64(r.After.Goroutines), Unit: "goroutines",
			Note: fmt.Sprintf("%d after warm-up; go_goroutines at /metrics", r.Before.Goroutines)})
	}
}

func soakTargets(res *Scenario, r *soakResult, err error) {
	const (
		nameRSS  = "memory after a long gateway run"
		goalRSS  = "RSS after 100k gateway calls ≤ 1.2× RSS after warm-up"
		nameLeak = "no goroutine or fd growth"
		goalLeak = "goroutines and open fds after the gateway run ≤ after warm-up"
	)
	if err != nil || r == nil {
		msg := fmt.Sprint(err)
		res.Targets = append(res.Targets, unmeasured(nameRSS, goalRSS, trimNA(msg)), unmeasured(nameLeak, goalLeak, trimNA(msg)))
		return
	}
	ratio := float64(r.After.RSSkB) / float64(r.Before.RSSkB)
	why := fmt.Sprintf("VmRSS %.1f MiB after %d warm-up calls, %.1f MiB after %d more calls to /mcp/gateway/everything at c=%d (%.0f s), each sampled as the least of four reads over %s + 0.75 s.",
		float64(r.Before.RSSkB)/1024, r.Warmup, float64(r.After.RSSkB)/1024, r.Calls, r.Conc, r.Elapsed.Seconds(), settle)
	if r.WantCalls < 100_000 {
		why += fmt.Sprintf(" This run made %d calls, not 100k (a -quick run).", r.WantCalls)
	}
	if r.CutShortByTime {
		why += fmt.Sprintf(" The run was cut at its time limit before %d calls.", r.WantCalls)
	}
	res.Targets = append(res.Targets, Target{Name: nameRSS, Goal: goalRSS, Measured: fmt.Sprintf("%.2f×", ratio), Met: verdict(ratio <= 1.2 && r.Calls > 0), Why: why})

	// OS threads are shown, not judged: the Go runtime keeps the threads
	// a burst of blocking syscalls made it start, so their count rises
	// to a plateau without anything leaking.
	grew := r.After.FDs > r.Before.FDs
	parts := []string{
		fmt.Sprintf("fds %d → %d", r.Before.FDs, r.After.FDs),
	}
	how := "fds counted in /proc/PID/fd, threads from /proc/PID/status"
	if r.Before.Goroutines >= 0 && r.After.Goroutines >= 0 {
		parts = append([]string{fmt.Sprintf("goroutines %d → %d", r.Before.Goroutines, r.After.Goroutines)}, parts...)
		grew = grew || r.After.Goroutines > r.Before.Goroutines
		how = "goroutines from go_goroutines at GET /metrics (the Go runtime collector), " + how
	} else {
		how += "; goroutines not measured (no go_goroutines at /metrics)"
	}
	res.Targets = append(res.Targets, Target{Name: nameLeak, Goal: goalLeak, Measured: strings.Join(parts, ", "), Met: verdict(!grew),
		Why: strings.Join(parts, ", ") + " (" + how + "; the load generator's idle connections are closed before each sample). " +
			fmt.Sprintf("OS threads %d → %d, shown but not judged: the Go runtime keeps threads it started for blocking syscalls.", r.Before.Threads, r.After.Threads)})
}
