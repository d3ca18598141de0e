package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Paths of scenario 7: the same calls to three agentd instances that
// differ only in telemetry.
const (
	telemetryOff = "telemetry off"
	tracingOff   = "metrics on, tracing off (default)"
	tracingOn    = "tracing on, every trace sampled"
)

func runTracing(ctx context.Context, e *Env, res *Scenario) error {
	if err := e.NeedNode(); err != nil {
		return err
	}
	llm, err := e.FakeLLM(ctx)
	if err != nil {
		return err
	}
	sink, err := startOTLPSink()
	if err != nil {
		return err
	}
	defer sink.Close()

	type instance struct {
		label string
		cfg   AgentdConfig
	}
	base := AgentdConfig{LLM: llm, Servers: []string{"everything"}, Gateways: []string{"everything"}}
	off, on := base, base
	off.MetricsOff = true
	on.TracesURL = sink.URL + "/v1/traces"
	var paths []mcpPath
	sends := map[string]func(context.Context) error{}
	var order []string
	for i, in := range []instance{{telemetryOff, off}, {tracingOff, base}, {tracingOn, on}} {
		a, err := e.StartAgentd(ctx, fmt.Sprintf("trace%d", i), in.cfg)
		if err != nil {
			return err
		}
		defer a.Stop()
		if err := a.WaitMCP(ctx, e.HTTP, 1, 60*time.Second); err != nil {
			return err
		}
		gw := "gateway echo, " + in.label
		cs, tool, err := connectAgentdTool(ctx, e, a, "/mcp/gateway/everything", sessionVersion, func(n string) bool { return n == "echo" })
		if err != nil {
			res.naRow(gw, err)
		} else {
			defer cs.Close()
			paths = append(paths, mcpPath{gw, cs, tool})
		}
		snd := "A2A send, " + in.label
		c, err := e.A2AClient(ctx, a.URL+"/a2a/agents/"+agentInstant)
		if err != nil {
			res.naRow(snd, err)
			continue
		}
		defer c.Destroy()
		sends[snd] = a2aSend(c)
		order = append(order, snd)
	}
	args := map[string]any{"message": "hello from the agentd bench"}
	fns := map[string]func(context.Context) error{}
	var names []string
	for _, p := range paths {
		fns[p.name] = callOnce(p.cs, p.tool, args)
		names = append(names, p.name)
	}
	for _, n := range order {
		fns[n] = sends[n]
		names = append(names, n)
	}
	var live []string
	for _, n := range names {
		if err := fns[n](ctx); err != nil {
			res.naRow(n, fmt.Errorf("first call failed: %w", err))
			continue
		}
		live = append(live, n)
	}
	for _, conc := range a2aConcurrency(e.Settings.Concurrency) {
		var cells []*Cell
		for _, n := range live {
			cells = append(cells, &Cell{Path: n, Concurrency: conc})
		}
		e.logf("  concurrency %d: %d paths", conc, len(cells))
		Interleave(ctx, e.secondaryRounds(), cells, func(ctx context.Context, c *Cell) Stats { return Load(ctx, e.secondarySpec(conc), fns[c.Path]) })
		for _, c := range cells {
			res.Rows = append(res.Rows, cellRow(c))
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The batch exporter sends at least every 5 s: wait for the spans of
	// the last cells before judging whether any arrived.
	deadline := time.Now().Add(7 * time.Second)
	for sink.requests.Load() == 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
	}
	res.Rows = append(res.Rows, Row{Path: "OTLP export requests received (tracing on)", Value: float64(sink.requests.Load()), Unit: "requests",
		Note: fmt.Sprintf("%.1f MiB of protobuf, discarded", float64(sink.bytes.Load())/(1<<20))})
	tracingNotes(e, res, sink.requests.Load())
	return nil
}

// tracingNotes states the ratios. Issue 17 sets no bound for sampled
// tracing; it asks the bench to show the cost.
func tracingNotes(e *Env, res *Scenario, exports int64) {
	concs := a2aConcurrency(e.Settings.Concurrency)
	var bs []bound
	for _, c := range concs {
		bs = append(bs, bound{Conc: c})
	}
	for _, p := range []string{"gateway echo, ", "A2A send, "} {
		for _, cmp := range []struct{ num, den, what string }{
			{tracingOn, tracingOff, "tracing on over tracing off"},
			{tracingOff, telemetryOff, "metrics on (the default) over all telemetry off"},
		} {
			if cmp.num == tracingOn && exports == 0 {
				res.Notes = append(res.Notes, p+cmp.what+": not measured, no span reached the OTLP receiver.")
				continue
			}
			t := comparison{Num: p + cmp.num, Den: p + cmp.den, Metric: mRate, Bounds: bs}.target(res)
			if t.Met == nil {
				continue
			}
			res.Notes = append(res.Notes, fmt.Sprintf("%s%s, calls/s: %s.", p, cmp.what, t.Measured))
		}
	}
}

// otlpSink is an OTLP/HTTP receiver in the bench process that counts
// and discards what it gets: an exporter's full cost stays on agentd's
// side, the receiver's is the bench's.
type otlpSink struct {
	URL      string
	srv      *http.Server
	done     chan struct{}
	requests atomic.Int64
	bytes    atomic.Int64
}

func startOTLPSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &otlpSink{URL: "http://" + ln.Addr().String(), done: make(chan struct{})}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.bytes.Add(n)
		s.requests.Add(1)
		// An empty ExportTraceServiceResponse: everything accepted.
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the receiver and waits for its server to return.
func (s *otlpSink) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		_ = s.srv.Close()
	}
	<-s.done
}
