package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Paths of scenario 2.
const (
	pathAgentdBuiltin = "agentd /mcp file_read (expose_tools)"
	pathMinimal       = "minimal go-sdk server file_read"
)

func runMCPServer(ctx context.Context, e *Env, res *Scenario) error {
	args := map[string]any{"path": benchFile}
	var paths []mcpPath

	a, err := e.MainAgentd(ctx)
	if err != nil {
		return err
	}
	if cs, err := agentdFileRead(ctx, e, a); err != nil {
		res.naRow(pathAgentdBuiltin, err)
	} else {
		defer cs.Close()
		paths = append(paths, mcpPath{pathAgentdBuiltin, cs, "file_read"})
	}

	dir := filepath.Join(e.Tmp, "ws-minimal")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, benchFile), []byte(benchFileText), 0o600); err != nil {
		return err
	}
	minProc, addr, err := e.Self(ctx, "mcp-minimal", "-role", "mcp-minimal", "-dir", dir)
	if err != nil {
		return err
	}
	defer minProc.Stop(3 * time.Second)
	minCS, err := e.ConnectHTTP(ctx, "http://"+addr+"/", "")
	if err != nil {
		return err
	}
	defer minCS.Close()
	paths = append(paths, mcpPath{pathMinimal, minCS, "file_read"})

	var live []mcpPath
	for _, p := range paths {
		r, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: p.tool, Arguments: args})
		switch {
		case err != nil:
			res.naRow(p.name, fmt.Errorf("first call failed: %w", err))
		case r.IsError || !strings.Contains(toolText(r), "second line"):
			res.naRow(p.name, fmt.Errorf("first call did not return the file: %s", abbreviate(toolText(r), 160)))
		default:
			live = append(live, p)
		}
	}
	for _, c := range measurePaths(ctx, e, live, args) {
		res.Rows = append(res.Rows, cellRow(c))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	lat := comparison{Name: "built-in tool over /mcp, latency", Goal: "agentd's p50 ≤ 1.2× a minimal go-sdk server's at c=1",
		Num: pathAgentdBuiltin, Den: pathMinimal, Metric: mP50, Bounds: []bound{{Conc: e.Settings.Concurrency[0], Max: 1.2}},
		Why: "Both serve file_read over stateless Streamable HTTP; agentd's call also passes the tool runner (policy, timeout, truncation, audit record)."}
	res.Targets = append(res.Targets, lat.target(res))
	const name, goal = "MCP server near the limit", "agentd's built-in tool over /mcp within 1.5× of a minimal go-sdk server"
	var parts, noisy []string
	met, measured := true, 0
	for _, conc := range e.Settings.Concurrency {
		ag, okA := res.row(pathAgentdBuiltin, conc)
		mn, okM := res.row(pathMinimal, conc)
		if !okA || !okM {
			continue
		}
		measured++
		ratio := mn.Rate / ag.Rate
		parts = append(parts, fmt.Sprintf("%s at c=%d", ratioText(mn, ag, 2), conc))
		if ratio > 1.5 {
			met = false
		}
		if roundsDisagree(mn, ag, func(r float64) bool { return r <= 1.5 }) {
			noisy = append(noisy, fmt.Sprintf("c=%d", conc))
		}
	}
	if measured == 0 {
		res.Targets = append(res.Targets, unmeasured(name, goal, "agentd's /mcp with expose_tools could not be measured (see the rows)"))
		return nil
	}
	res.Targets = append(res.Targets, Target{Name: name, Goal: goal, Measured: strings.Join(parts, ", "), Met: verdict(met),
		Why: "Minimal server's calls/s over agentd's: " + strings.Join(parts, ", ") + ". agentd's call also passes the tool runner (policy, timeout, truncation, audit row in SQLite)." + noiseNote(noisy)})
	return nil
}

// agentdFileRead connects to agentd's /mcp, checks file_read is served
// and writes the file it will read with file_write (the endpoint's
// workspace is agentd's to choose).
func agentdFileRead(ctx context.Context, e *Env, a *Agentd) (*mcp.ClientSession, error) {
	cs, _, err := connectAgentdTool(ctx, e, a, "/mcp", "", func(n string) bool { return n == "file_read" })
	if err != nil {
		return nil, err
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "file_write", Arguments: map[string]any{"path": benchFile, "content": benchFileText}})
	if err != nil || r.IsError {
		cs.Close()
		if err == nil {
			err = fmt.Errorf("%s", abbreviate(toolText(r), 200))
		}
		return nil, fmt.Errorf("write %s through agentd's file_write: %w", benchFile, err)
	}
	return cs, nil
}
