package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// An A/B run (bench -ab REF) measures one change to agentd: the gateway
// paths of scenario 1 (a 2025-11-25 session and stateless 2026-07-28
// calls to server-everything's echo) through agentd built from this
// checkout and from the commit REF, side by side in one run, rounds
// interleaved. A change worth a few percent is lost in the noise between
// two runs on a shared machine; within one run both builds see the same
// noise. Each round also reads agentd's own CPU time, whose cost per
// call moves less with the machine's load than calls per second do. On 2
// shared cores a null run (REF=HEAD, two identical builds) still gave
// head/base medians of 1.04 to 1.18 for calls/s and within 7% for CPU
// per call: that is the resolution to expect there.

// abRounds is the rounds per cell of an A/B run: more than a full run's
// three, since the ratio between two builds of agentd is smaller.
const abRounds = 7

func runAB(ctx context.Context, e *Env, ref string, stdout io.Writer) error {
	if err := e.NeedNode(); err != nil {
		return err
	}
	head, err := e.Agentd(ctx)
	if err != nil {
		return err
	}
	base, err := e.buildAt(ctx, ref)
	if err != nil {
		return err
	}
	type side struct {
		name string
		a    *Agentd
	}
	var sides []side
	for _, s := range []struct{ name, bin string }{{"head", head}, {"base", base}} {
		a, err := e.StartAgentd(ctx, "ab-"+s.name, AgentdConfig{Bin: s.bin, Servers: []string{"everything"}, Gateways: []string{"everything"}})
		if err != nil {
			return fmt.Errorf("agentd %s: %w", s.name, err)
		}
		if err := a.WaitMCP(ctx, e.HTTP, 1, 60*time.Second); err != nil {
			return fmt.Errorf("agentd %s: %w", s.name, err)
		}
		sides = append(sides, side{s.name, a})
	}
	args := map[string]any{"message": "hello from the agentd bench"}
	eras := []struct{ name, version string }{{"2025-11-25 session", sessionVersion}, {"stateless 2026-07-28", statelessLatest}}
	type abCell struct {
		*Cell
		era, side string
		pid       int
		call      func(context.Context) error
		cpu       []time.Duration // agentd's CPU time per call, by round
	}
	var cells []*abCell
	for _, conc := range e.Settings.Concurrency {
		for _, era := range eras {
			for _, s := range sides {
				cs, tool, err := connectAgentdTool(ctx, e, s.a, "/mcp/gateway/everything", era.version, func(n string) bool { return n == "echo" })
				if err != nil {
					return fmt.Errorf("agentd %s, %s: %w", s.name, era.name, err)
				}
				defer cs.Close()
				call := callOnce(cs, tool, args)
				if err := call(ctx); err != nil {
					return fmt.Errorf("agentd %s, %s: first call: %w", s.name, era.name, err)
				}
				cells = append(cells, &abCell{Cell: &Cell{Path: s.name + " " + era.name, Concurrency: conc}, era: era.name, side: s.name, pid: s.a.Proc.Pid(), call: call})
			}
		}
	}
	for _, conc := range e.Settings.Concurrency {
		var group []*Cell
		byCell := map[*Cell]*abCell{}
		for _, c := range cells {
			if c.Concurrency == conc {
				group = append(group, c.Cell)
				byCell[c.Cell] = c
			}
		}
		e.logf("  concurrency %d: %d cells × %d rounds", conc, len(group), e.Settings.Rounds)
		Interleave(ctx, e.Settings.Rounds, group, func(ctx context.Context, cell *Cell) Stats {
			c := byCell[cell]
			cpu0, err0 := cpuTime(c.pid)
			st := Load(ctx, e.spec(conc), c.call)
			cpu1, err1 := cpuTime(c.pid)
			if err0 == nil && err1 == nil && st.Calls > 0 {
				// The warm-up's calls are in the CPU time too.
				calls := float64(st.Calls) * float64(e.Settings.Duration+e.Settings.Warmup) / float64(e.Settings.Duration)
				c.cpu = append(c.cpu, time.Duration(float64(cpu1-cpu0)/calls))
			}
			return st
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}

	fmt.Fprintf(stdout, "A/B: agentd at this checkout (head) against %s (base), /mcp/gateway/everything, echo of server-everything over stdio\n", ref)
	fmt.Fprintf(stdout, "%d rounds per cell of %s (after %s of warm-up), interleaved; ratios are head/base within each round\n\n", e.Settings.Rounds, e.Settings.Duration, e.Settings.Warmup)
	fmt.Fprintf(stdout, "| era | c | base calls/s | head calls/s | head/base (median) | per round | base p50 | head p50 | agentd CPU/call base → head |\n")
	fmt.Fprintf(stdout, "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |\n")
	for _, conc := range e.Settings.Concurrency {
		for _, era := range eras {
			var h, b *abCell
			for _, c := range cells {
				if c.Concurrency == conc && c.era == era.name {
					if c.side == "head" {
						h = c
					} else {
						b = c
					}
				}
			}
			hs, bs := h.Summary(), b.Summary()
			if hs.Errors+bs.Errors > 0 {
				fmt.Fprintf(stdout, "| %s | %d | errors: head %d (%v), base %d (%v) |\n", era.name, conc, hs.Errors, hs.FirstErr, bs.Errors, bs.FirstErr)
				continue
			}
			var ratios []float64
			var per []string
			for i := range min(len(h.Rounds), len(b.Rounds)) {
				r := h.Rounds[i].Rate / b.Rounds[i].Rate
				ratios = append(ratios, r)
				per = append(per, fmt.Sprintf("%.2f", r))
			}
			fmt.Fprintf(stdout, "| %s | %d | %.0f | %.0f | %.3f | %s | %s | %s | %s → %s |\n", era.name, conc, bs.Rate, hs.Rate, median(ratios),
				strings.Join(per, " "), bs.P50.Round(time.Microsecond), hs.P50.Round(time.Microsecond), cpuText(b.cpu), cpuText(h.cpu))
		}
	}
	return nil
}

func cpuText(xs []time.Duration) string {
	if len(xs) == 0 {
		return "n/a"
	}
	return median(slices.Clone(xs)).Round(time.Microsecond).String()
}

// buildAt builds agentd from the commit ref of the repository: its tree
// unpacked (git archive) into the scratch directory, so that the
// checkout and its .git are left as they are.
func (e *Env) buildAt(ctx context.Context, ref string) (string, error) {
	src := filepath.Join(e.Tmp, "src-base")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	e.logf("building agentd at %s", ref)
	archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", ref)
	archive.Dir = e.Root
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	var archiveErr strings.Builder
	archive.Stderr = &archiveErr
	if err := untar.Start(); err != nil {
		return "", fmt.Errorf("unpack %s: %w", ref, err)
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		return "", fmt.Errorf("git archive %s: %w: %s", ref, err, strings.TrimSpace(archiveErr.String()))
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("unpack %s: %w", ref, err)
	}
	return e.goBuild(ctx, src, "./cmd/agentd", "agentd-base")
}
