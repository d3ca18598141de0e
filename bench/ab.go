package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
// call moves less with the machine's load than calls per second do.
// Run it once with no change (REF=HEAD) to see the resolution to expect
// on the machine (see README: Development).

// abRounds is the rounds per cell of an A/B run: more than a full run's
// three, since the ratio between two builds of agentd is smaller.
const abRounds = 5

// abOrder is the instances of an A/B run, in the order they start: two of
// each build, ABBA, so that whatever favours an instance for its place
// (started first, its server-everything's placement) falls on both
// builds. A null run with one instance per build favoured the first
// started in all four cells.
var abOrder = []string{"head", "base", "base", "head"}

func runAB(ctx context.Context, e *Env, ref string, stdout io.Writer) error {
	if err := e.NeedNode(); err != nil {
		return err
	}
	bins := map[string]string{}
	var err error
	if bins["head"], err = e.Agentd(ctx); err != nil {
		return err
	}
	if bins["base"], err = e.buildAt(ctx, ref); err != nil {
		return err
	}
	type instance struct {
		name, build string
		a           *Agentd
	}
	var instances []instance
	for i, build := range abOrder {
		name := fmt.Sprintf("%s-%d", build, i+1)
		a, err := e.StartAgentd(ctx, "ab-"+name, AgentdConfig{Bin: bins[build], Servers: []string{"everything"}, Gateways: []string{"everything"}})
		if err != nil {
			return fmt.Errorf("agentd %s: %w", name, err)
		}
		if err := a.WaitMCP(ctx, e.HTTP, 1, 60*time.Second); err != nil {
			return fmt.Errorf("agentd %s: %w", name, err)
		}
		instances = append(instances, instance{name, build, a})
	}
	args := map[string]any{"message": "hello from the agentd bench"}
	eras := []struct{ name, version string }{{"2025-11-25 session", sessionVersion}, {"stateless 2026-07-28", statelessLatest}}
	type abCell struct {
		*Cell
		era, build string
		pid        int
		call       func(context.Context) error
		cpu        []time.Duration // agentd's CPU time per call, by round
		client     []time.Duration // the load generator's (this process's)
	}
	var cells []*abCell
	for _, conc := range e.Settings.Concurrency {
		for _, era := range eras {
			for _, in := range instances {
				cs, tool, err := connectAgentdTool(ctx, e, in.a, "/mcp/gateway/everything", era.version, func(n string) bool { return n == "echo" })
				if err != nil {
					return fmt.Errorf("agentd %s, %s: %w", in.name, era.name, err)
				}
				defer cs.Close()
				call := callOnce(cs, tool, args)
				if err := call(ctx); err != nil {
					return fmt.Errorf("agentd %s, %s: first call: %w", in.name, era.name, err)
				}
				cells = append(cells, &abCell{Cell: &Cell{Path: in.name + " " + era.name, Concurrency: conc}, era: era.name, build: in.build, pid: in.a.Proc.Pid(), call: call})
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
			self0, errSelf0 := cpuTime(os.Getpid())
			st := Load(ctx, e.spec(conc), c.call)
			cpu1, err1 := cpuTime(c.pid)
			self1, errSelf1 := cpuTime(os.Getpid())
			// The warm-up's calls are in the CPU time too.
			calls := float64(st.Calls) * float64(e.Settings.Duration+e.Settings.Warmup) / float64(e.Settings.Duration)
			if err0 == nil && err1 == nil && st.Calls > 0 {
				c.cpu = append(c.cpu, time.Duration(float64(cpu1-cpu0)/calls))
			}
			if errSelf0 == nil && errSelf1 == nil && st.Calls > 0 {
				c.client = append(c.client, time.Duration(float64(self1-self0)/calls))
			}
			return st
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}

	fmt.Fprintf(stdout, "A/B: agentd at this checkout (head) against %s (base), /mcp/gateway/everything, echo of server-everything over stdio\n", ref)
	fmt.Fprintf(stdout, "two instances of each build (started %s); %d rounds per instance of %s (after %s of warm-up), interleaved;\n",
		strings.Join(abOrder, ", "), e.Settings.Rounds, e.Settings.Duration, e.Settings.Warmup)
	fmt.Fprintf(stdout, "a round's ratio is the head instances' calls/s over the base instances'; p50 and CPU per call are medians over both instances' rounds\n\n")
	fmt.Fprintf(stdout, "| era | c | base calls/s | head calls/s | head/base (median) | per round | base p50 | head p50 | agentd CPU/call base → head | client CPU/call base → head |\n")
	fmt.Fprintf(stdout, "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n")
	for _, conc := range e.Settings.Concurrency {
		for _, era := range eras {
			type pooled struct {
				rates     []float64 // by round, summed over the build's instances
				p50s      []time.Duration
				cpu       []time.Duration
				client    []time.Duration
				errs      int
				firstErr  error
				instances int
			}
			by := map[string]*pooled{"head": {}, "base": {}}
			for _, c := range cells {
				if c.Concurrency != conc || c.era != era.name {
					continue
				}
				p := by[c.build]
				p.instances++
				for i, r := range c.Rounds {
					if i == len(p.rates) {
						p.rates = append(p.rates, 0)
					}
					p.rates[i] += r.Rate
					p.p50s = append(p.p50s, r.P50)
					p.errs += r.Errors
					if p.firstErr == nil {
						p.firstErr = r.FirstErr
					}
				}
				p.cpu = append(p.cpu, c.cpu...)
				p.client = append(p.client, c.client...)
			}
			h, b := by["head"], by["base"]
			if h.errs+b.errs > 0 {
				fmt.Fprintf(stdout, "| %s | %d | errors: head %d (%v), base %d (%v) |\n", era.name, conc, h.errs, h.firstErr, b.errs, b.firstErr)
				continue
			}
			var ratios []float64
			var per []string
			for i := range min(len(h.rates), len(b.rates)) {
				r := h.rates[i] / b.rates[i]
				ratios = append(ratios, r)
				per = append(per, fmt.Sprintf("%.2f", r))
			}
			fmt.Fprintf(stdout, "| %s | %d | %.0f | %.0f | %.3f | %s | %s | %s | %s → %s | %s → %s |\n", era.name, conc,
				median(b.rates)/float64(b.instances), median(h.rates)/float64(h.instances), median(ratios),
				strings.Join(per, " "), median(b.p50s).Round(time.Microsecond), median(h.p50s).Round(time.Microsecond), cpuText(b.cpu), cpuText(h.cpu), cpuText(b.client), cpuText(h.client))
		}
	}
	return nil
}

func cpuText(xs []time.Duration) string {
	if len(xs) == 0 {
		return "n/a"
	}
	return median(xs).Round(time.Microsecond).String()
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
