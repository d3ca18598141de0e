package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Paths of scenario 1. The targets compare agentd's gateway on the
// protocol version supergateway speaks (2025-11-25, a session per client);
// the stateless 2026-07-28 rows show what the newer version costs.
const (
	pathDirect      = "direct stdio (go-sdk client)"
	pathGateway     = "agentd /mcp/gateway/everything"
	pathGatewayNew  = "agentd /mcp/gateway/everything, stateless"
	pathExpose      = "agentd /mcp (expose_tools), stateless"
	pathSupergw     = "supergateway (stateful streamable)"
	sessionVersion  = "2025-11-25"
	statelessLatest = "" // whatever the client and agentd negotiate
)

// mcpPath is one way to reach a tool.
type mcpPath struct {
	name string
	cs   *mcp.ClientSession
	tool string
}

// callOnce returns a load function calling tool with args on cs; a tool
// error counts as a failure.
func callOnce(cs *mcp.ClientSession, tool string, args map[string]any) func(context.Context) error {
	return func(ctx context.Context) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("%s: tool error: %s", tool, abbreviate(toolText(res), 200))
		}
		return nil
	}
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// findTool returns the name of the session's tool for which match is
// true.
func findTool(ctx context.Context, cs *mcp.ClientSession, match func(string) bool) (string, error) {
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return "", fmt.Errorf("list tools: %w", err)
		}
		if match(t.Name) {
			return t.Name, nil
		}
		names = append(names, t.Name)
	}
	return "", fmt.Errorf("no such tool among %d (%s)", len(names), abbreviate(strings.Join(names, ", "), 200))
}

func runGateway(ctx context.Context, e *Env, res *Scenario) error {
	if err := e.NeedNode(); err != nil {
		return err
	}
	args := map[string]any{"message": "hello from the agentd bench"}
	var paths []mcpPath

	direct, _, err := e.ConnectEverythingStdio(ctx)
	if err != nil {
		return err
	}
	defer direct.Close()
	paths = append(paths, mcpPath{pathDirect, direct, "echo"})

	a, err := e.MainAgentd(ctx)
	if err != nil {
		return err
	}
	// The gateway serves the upstream's tools unprefixed; /mcp with
	// expose_tools serves the whole registry, prefixed.
	echo := func(n string) bool { return n == "echo" }
	for _, p := range []struct {
		name, path, version string
		match               func(string) bool
	}{
		{pathGateway, "/mcp/gateway/everything", sessionVersion, echo},
		{pathGatewayNew, "/mcp/gateway/everything", statelessLatest, echo},
		{pathExpose, "/mcp", statelessLatest, func(n string) bool { return strings.Contains(n, "everything") && strings.HasSuffix(n, "echo") }},
	} {
		if e.mainMCPErr != nil {
			res.naRow(p.name, e.mainMCPErr)
			continue
		}
		cs, tool, err := connectAgentdTool(ctx, e, a, p.path, p.version, p.match)
		if err != nil {
			res.naRow(p.name, err)
			continue
		}
		defer cs.Close()
		paths = append(paths, mcpPath{p.name, cs, tool})
	}

	// Peers stop with the scenario, so they do not load the next ones.
	sgProc, sgURL, err := e.StartSupergateway(ctx)
	if sgProc != nil {
		defer sgProc.Stop(3 * time.Second)
	}
	if err != nil {
		res.naRow(pathSupergw, err)
	} else if sg, err := e.ConnectHTTP(ctx, sgURL, sessionVersion); err != nil {
		res.naRow(pathSupergw, err)
	} else {
		defer sg.Close()
		paths = append(paths, mcpPath{pathSupergw, sg, "echo"})
	}

	// Every path must answer once before it is measured.
	var live []mcpPath
	for _, p := range paths {
		if err := callOnce(p.cs, p.tool, args)(ctx); err != nil {
			res.naRow(p.name, fmt.Errorf("first call failed: %w", err))
			continue
		}
		live = append(live, p)
	}
	cells := measurePaths(ctx, e, live, args)
	for _, c := range cells {
		res.Rows = append(res.Rows, cellRow(c))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	gatewayTargets(e, res)
	return nil
}

// protocolNote names the MCP version the session negotiated: the go-sdk
// client speaks 2026-07-28 (stateless) to servers that offer it and falls
// back to initialize-based sessions otherwise.
func protocolNote(cs *mcp.ClientSession) string {
	if r := cs.InitializeResult(); r != nil {
		return "MCP " + r.ProtocolVersion
	}
	return ""
}

// connectAgentdTool opens a session to agentd's MCP endpoint at path and
// finds the tool to call.
func connectAgentdTool(ctx context.Context, e *Env, a *Agentd, path, version string, match func(string) bool) (*mcp.ClientSession, string, error) {
	if err := mcpAvailable(ctx, e.HTTP, a, path); err != nil {
		return nil, "", err
	}
	cs, err := e.ConnectHTTP(ctx, a.URL+path, version)
	if err != nil {
		return nil, "", err
	}
	tool, err := findTool(ctx, cs, match)
	if err != nil {
		cs.Close()
		return nil, "", fmt.Errorf("agentd %s: %w", path, err)
	}
	return cs, tool, nil
}

// measurePaths measures every path at every concurrency, interleaving
// the paths within each concurrency.
func measurePaths(ctx context.Context, e *Env, paths []mcpPath, args map[string]any) []*Cell {
	var all []*Cell
	for _, conc := range e.Settings.Concurrency {
		var cells []*Cell
		fns := map[*Cell]func(context.Context) error{}
		for _, p := range paths {
			c := &Cell{Path: p.name, Concurrency: conc, Note: protocolNote(p.cs)}
			fns[c] = callOnce(p.cs, p.tool, args)
			cells = append(cells, c)
		}
		e.logf("  concurrency %d: %d paths × %d rounds", conc, len(cells), e.Settings.Rounds)
		Interleave(ctx, e.Settings.Rounds, cells, func(ctx context.Context, c *Cell) Stats {
			return Load(ctx, e.spec(conc), fns[c])
		})
		all = append(all, cells...)
	}
	return all
}

// spec is the load spec of one cell at concurrency conc.
func (e *Env) spec(conc int) LoadSpec {
	return LoadSpec{Concurrency: conc, Duration: e.Settings.Duration, Warmup: e.Settings.Warmup, MaxCalls: e.Settings.MaxCalls}
}

func gatewayTargets(e *Env, res *Scenario) {
	const (
		nameRate = "MCP gateway throughput"
		goalRate = "agentd ≥ 3× supergateway's calls/s"
		nameLat  = "MCP gateway latency"
		goalLat  = "added p50 over direct stdio < 0.3 ms"
	)
	agentdPath := pathGateway
	// Throughput: the ratio at every concurrency.
	var parts, noisy []string
	met, measured := true, 0
	for _, conc := range e.Settings.Concurrency {
		a, okA := res.row(agentdPath, conc)
		s, okS := res.row(pathSupergw, conc)
		if !okA || !okS {
			continue
		}
		measured++
		ratio := a.Rate / s.Rate
		parts = append(parts, fmt.Sprintf("%s at c=%d", ratioText(a, s, 1), conc))
		if ratio < 3 {
			met = false
		}
		if roundsDisagree(a, s, func(r float64) bool { return r >= 3 }) {
			noisy = append(noisy, fmt.Sprintf("c=%d", conc))
		}
	}
	if measured == 0 {
		res.Targets = append(res.Targets, unmeasured(nameRate, goalRate, "agentd's MCP endpoint or supergateway could not be measured (see the rows)"))
	} else {
		why := fmt.Sprintf("%s calls/s over supergateway's, both over MCP %s sessions: %s.", agentdPath, sessionVersion, strings.Join(parts, ", ")) + noiseNote(noisy)
		res.Targets = append(res.Targets, Target{Name: nameRate, Goal: goalRate, Measured: strings.Join(parts, ", "), Met: verdict(met), Why: why})
	}
	// Latency: p50 at the lowest concurrency.
	conc := e.Settings.Concurrency[0]
	a, okA := res.row(agentdPath, conc)
	d, okD := res.row(pathDirect, conc)
	if !okA || !okD {
		res.Targets = append(res.Targets, unmeasured(nameLat, goalLat, "agentd's MCP endpoint or the direct stdio path could not be measured"))
		return
	}
	added := time.Duration((a.P50us - d.P50us) * 1e3)
	ok := added < 300*time.Microsecond
	why := fmt.Sprintf("p50 at c=%d: %s (MCP %s session) %.0f µs against %.0f µs direct, so agentd adds %.0f µs.", conc, agentdPath, sessionVersion, a.P50us, d.P50us, us(added))
	if n, ok := res.row(pathGatewayNew, conc); ok {
		why += fmt.Sprintf(" Stateless 2026-07-28 calls to the same gateway: p50 %.0f µs.", n.P50us)
	}
	res.Targets = append(res.Targets, Target{Name: nameLat, Goal: goalLat, Measured: fmt.Sprintf("+%.0f µs", us(added)), Met: verdict(ok), Why: why})
}
