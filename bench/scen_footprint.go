package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// settle is how long memory is left to settle before RSS is read.
const settle = time.Second

func runFootprint(ctx context.Context, e *Env, res *Scenario) error {
	bin, err := e.Agentd(ctx)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(bin); err == nil {
		res.Rows = append(res.Rows, Row{Path: "binary size (go build -trimpath)", Value: float64(fi.Size()) / (1 << 20), Unit: "MiB",
			Note: "with symbols and DWARF (no -ldflags=-s -w), as `make build` builds it"})
	}
	llm, err := e.FakeLLM(ctx)
	if err != nil {
		return err
	}
	base := AgentdConfig{LLM: llm, ExposeTools: true}

	// Cold start with an existing store: the first start creates it and
	// is not counted.
	if err := coldStart(ctx, e, res, base); err != nil {
		return err
	}

	idle, err := e.StartAgentd(ctx, "idle0", base)
	if err != nil {
		return err
	}
	defer idle.Stop()
	rss0, err := settledRSS(ctx, idle)
	if err != nil {
		return err
	}
	res.Rows = append(res.Rows, Row{Path: "idle RSS, 0 MCP servers", Value: float64(rss0) / 1024, Unit: "MiB"})
	var rssN int64
	nServers := e.Settings.MCPServers
	if err := e.NeedNode(); err != nil {
		res.naRow(fmt.Sprintf("idle RSS, %d stdio MCP servers", nServers), err)
	} else if rssN, err = idleWithServers(ctx, e, base, nServers); err != nil {
		res.naRow(fmt.Sprintf("idle RSS, %d stdio MCP servers", nServers), err)
	} else {
		res.Rows = append(res.Rows, Row{Path: fmt.Sprintf("idle RSS, %d stdio MCP servers (children excluded)", nServers), Value: float64(rssN) / 1024, Unit: "MiB"})
	}

	streamKB, streamErr := streamGrowth(ctx, e, idle)
	if streamErr != nil {
		res.naRow("RSS growth per open A2A stream", streamErr)
	} else {
		res.Rows = append(res.Rows, Row{Path: fmt.Sprintf("RSS growth per open A2A stream (%d held)", e.Settings.Streams), Value: streamKB, Unit: "KiB",
			Note: "each stream's run waits in a streamed model call, so this includes agentd's outgoing connection to the model"})
	}
	sessKB, sessErr := sessionGrowth(ctx, e, idle)
	if sessErr != nil {
		res.naRow("RSS growth per MCP session", sessErr)
	} else {
		res.Rows = append(res.Rows, Row{Path: fmt.Sprintf("RSS growth per MCP session (%d opened)", e.Settings.Sessions), Value: sessKB, Unit: "KiB"})
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	footprintTargets(e, res, rss0, rssN, streamKB, streamErr, sessKB, sessErr)
	return nil
}

func coldStart(ctx context.Context, e *Env, res *Scenario, cfg AgentdConfig) error {
	a, err := e.StartAgentd(ctx, "cold", cfg)
	if err != nil {
		return err
	}
	if err := a.Stop(); err != nil {
		return err
	}
	var times []time.Duration
	for i := 0; i < e.Settings.ColdStarts && ctx.Err() == nil; i++ {
		t0 := time.Now()
		if err := a.start(ctx, e, fmt.Sprintf("cold%d", i)); err != nil {
			return err
		}
		times = append(times, time.Since(t0))
		if err := a.Stop(); err != nil {
			return err
		}
	}
	if len(times) == 0 {
		return ctx.Err()
	}
	row := Row{Path: fmt.Sprintf("cold start to healthy /api/health, existing store (median of %d)", len(times)),
		Value: us(median(times)) / 1e3, Unit: "ms"}
	row.Note = fmt.Sprintf("min %.1f ms, max %.1f ms", us(minDur(times))/1e3, us(maxDur(times))/1e3)
	res.Rows = append(res.Rows, row)
	return nil
}

func minDur(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func maxDur(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// settledRSS waits for start-up work to finish and reads agentd's RSS.
func settledRSS(ctx context.Context, a *Agentd) (int64, error) {
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return a.RSS()
}

func idleWithServers(ctx context.Context, e *Env, base AgentdConfig, n int) (int64, error) {
	cfg := base
	for i := range n {
		cfg.Servers = append(cfg.Servers, fmt.Sprintf("everything%d", i))
	}
	a, err := e.StartAgentd(ctx, fmt.Sprintf("idle%d", n), cfg)
	if err != nil {
		return 0, err
	}
	defer a.Stop()
	if err := a.WaitMCP(ctx, e.HTTP, n, 120*time.Second); err != nil {
		return 0, err
	}
	return settledRSS(ctx, a)
}

// streamGrowth opens Settings.Streams A2A streams on the holder agent,
// whose runs never finish, and returns agentd's RSS growth per stream in
// KB. A warm-up of a few streams first fills the pools every stream uses.
func streamGrowth(ctx context.Context, e *Env, a *Agentd) (float64, error) {
	if err := a2aAvailable(ctx, e.HTTP, a, agentHolder); err != nil {
		return 0, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	c, err := a2aclient.NewFromEndpoints(ctx,
		[]*a2a.AgentInterface{a2a.NewAgentInterface(a.URL+"/a2a/agents/"+agentHolder, a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		return 0, err
	}
	defer c.Destroy()
	if err := holdStreams(ctx, c, 20, func() error { return nil }); err != nil {
		return 0, fmt.Errorf("warm-up: %w", err)
	}
	before, err := settledRSS(ctx, a)
	if err != nil {
		return 0, err
	}
	var after int64
	n := e.Settings.Streams
	err = holdStreams(ctx, c, n, func() error {
		var err error
		after, err = settledRSS(ctx, a)
		return err
	})
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(n), nil
}

// holdStreams opens n streams, waits for each one's first event, calls
// measure while they are all open, then closes them.
func holdStreams(ctx context.Context, c *a2aclient.Client, n int, measure func() error) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		opened  atomic.Int64
		ready   = make(chan struct{}, n)
		errOnce sync.Once
		first   error
	)
	sem := make(chan struct{}, 64) // open at most 64 at a time
	for range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Go(func() {
			got := false
			for _, err := range c.SendStreamingMessage(sctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hold"))}) {
				if err != nil {
					if sctx.Err() == nil {
						errOnce.Do(func() { first = err })
					}
					break
				}
				if !got {
					got = true
					opened.Add(1)
					<-sem
					ready <- struct{}{}
				}
			}
			if !got {
				<-sem
				ready <- struct{}{}
			}
		})
	}
	timeout := time.After(120 * time.Second)
	for range n {
		select {
		case <-ready:
		case <-timeout:
			cancel()
			wg.Wait()
			return fmt.Errorf("only %d of %d streams opened in 120 s", opened.Load(), n)
		case <-ctx.Done():
			cancel()
			wg.Wait()
			return ctx.Err()
		}
	}
	var err error
	if int(opened.Load()) != n {
		err = fmt.Errorf("%d of %d streams failed to open: %v", n-int(opened.Load()), n, first)
	} else {
		err = measure()
	}
	cancel()
	wg.Wait()
	return err
}

// sessionGrowth opens Settings.Sessions stateful MCP sessions
// (initialize, then notifications/initialized) on agentd's /mcp and
// returns the RSS growth per session in KB. Each session's requests use
// short-lived connections, so only the session state stays behind.
func sessionGrowth(ctx context.Context, e *Env, a *Agentd) (float64, error) {
	if err := mcpAvailable(ctx, e.HTTP, a, "/mcp"); err != nil {
		return 0, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	hc := &http.Client{Transport: tr}
	open := func(n int) error {
		var (
			wg      sync.WaitGroup
			errOnce sync.Once
			first   error
			next    atomic.Int64
		)
		for range 16 {
			wg.Go(func() {
				for next.Add(1) <= int64(n) && ctx.Err() == nil {
					if err := openMCPSession(ctx, hc, a.URL+"/mcp"); err != nil {
						errOnce.Do(func() { first = err })
						return
					}
				}
			})
		}
		wg.Wait()
		return first
	}
	if err := open(20); err != nil {
		return 0, fmt.Errorf("warm-up: %w", err)
	}
	before, err := settledRSS(ctx, a)
	if err != nil {
		return 0, err
	}
	n := e.Settings.Sessions
	if err := open(n); err != nil {
		return 0, err
	}
	after, err := settledRSS(ctx, a)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(n), nil
}

// openMCPSession runs the 2025-11-25 handshake and leaves the session
// open.
func openMCPSession(ctx context.Context, hc *http.Client, url string) error {
	post := func(body, session string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		return hc.Do(req)
	}
	resp, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agentd-bench","version":"1.0.0"}}}`, "")
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		return fmt.Errorf("initialize: status %d, session id %q", resp.StatusCode, id)
	}
	resp, err = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, id)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notifications/initialized: status %d", resp.StatusCode)
	}
	return nil
}

func footprintTargets(e *Env, res *Scenario, rss0, rssN int64, streamKB float64, streamErr error, sessKB float64, sessErr error) {
	for _, r := range res.Rows {
		if strings.HasPrefix(r.Path, "cold start") && r.NA == "" {
			res.Targets = append(res.Targets, Target{Name: "cold start", Goal: "< 100 ms to a healthy /api/health with an existing store",
				Measured: fmt.Sprintf("%.1f ms", r.Value), Met: verdict(r.Value < 100),
				Why: fmt.Sprintf("Median from exec to the first 200 from /api/health, polled every millisecond (%s).", r.Note)})
		}
	}
	idle := Target{Name: "idle memory", Goal: "< 30 MB RSS idle, with 0 and with 10 stdio MCP servers connected (children excluded)"}
	mb0 := float64(rss0) / 1024
	if rssN == 0 {
		idle.Measured = fmt.Sprintf("%.1f MiB with 0 servers", mb0)
		idle.Met = nil
		idle.Why = fmt.Sprintf("%.1f MiB with no server; the %d-server case could not be measured (see the rows).", mb0, e.Settings.MCPServers)
	} else {
		mbN := float64(rssN) / 1024
		idle.Measured = fmt.Sprintf("%.1f MiB / %.1f MiB", mb0, mbN)
		idle.Met = verdict(mb0*1.048576 < 30 && mbN*1.048576 < 30)
		idle.Why = fmt.Sprintf("VmRSS of agentd alone: %.1f MiB with no MCP server, %.1f MiB with %d server-everything instances connected over stdio.", mb0, mbN, e.Settings.MCPServers)
	}
	res.Targets = append(res.Targets, idle)
	growth := func(name, what string, kb float64, err error) {
		goal := "< 30 KB RSS growth per " + what
		if err != nil {
			msg := err.Error()
			if errors.Is(err, errNotAvailable) {
				msg = trimNA(msg)
			}
			res.Targets = append(res.Targets, unmeasured(name, goal, msg))
			return
		}
		res.Targets = append(res.Targets, Target{Name: name, Goal: goal, Measured: fmt.Sprintf("%.1f KiB", kb), Met: verdict(kb < 30),
			Why: fmt.Sprintf("agentd's VmRSS after minus before, over the count (%.1f KiB each); RSS includes the Go heap's headroom, so it moves in steps.", kb)})
	}
	growth("A2A stream memory", "open A2A stream", streamKB, streamErr)
	growth("MCP session memory", "MCP session", sessKB, sessErr)
}
