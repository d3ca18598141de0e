package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/sandbox"
	"github.com/agentd/agentd/internal/telemetry"
)

// newSandbox builds the launcher every confined program starts through,
// marks the daemon non-dumpable, and says at start what is not
// enforced. In required mode (the default) a configured program whose
// policy this machine cannot enforce stops the start, naming it; in
// best_effort mode it is a warning; off is a loud warning.
func newSandbox(cfg *config.Config, log *slog.Logger, mp metric.MeterProvider) (*sandbox.Launcher, error) {
	if err := sandbox.NoDump(); err != nil {
		log.Warn("sandbox: cannot mark the daemon non-dumpable; its /proc entries stay readable to same-user processes that are not confined", "err", err)
	}
	mode := cfg.SandboxMode()
	l := &sandbox.Launcher{
		Mechanisms: sandbox.Probe(),
		BestEffort: mode == config.SandboxBestEffort,
		Off:        mode == config.SandboxOff,
	}
	if mp != nil {
		refusals, _ := mp.Meter(telemetry.Scope).Int64Counter("agentd.sandbox.refusals",
			metric.WithUnit("{refusal}"),
			metric.WithDescription("Actions the sandbox refused, by program (shell_exec, mcp server NAME) and kind (start: policy not enforceable here; read, write: an access the program reported denied)."))
		l.Refused = func(ctx context.Context, program, kind string) {
			refusals.Add(ctx, 1, metric.WithAttributes(attribute.String("program", program), attribute.String("kind", kind)))
		}
	}
	if l.Off {
		log.Warn("SANDBOX OFF: shell_exec and stdio MCP servers run with the daemon's user and see everything it sees ([sandbox] mode = \"off\")")
		return l, nil
	}
	for _, p := range l.Mechanisms.Problems {
		log.Warn("sandbox: " + p)
	}
	var unenforced, invalid []string
	check := func(program string, pol sandbox.Policy) {
		if err := pol.Check(); err != nil {
			invalid = append(invalid, program+": "+err.Error())
			return
		}
		if pol.Off {
			log.Warn("SANDBOX OFF for "+program+": it runs with the daemon's user and sees everything it sees", "program", program)
			return
		}
		enf, _ := l.Plan(pol)
		if len(enf.Missing) == 0 {
			log.Info("sandbox", "program", program, "enforced", enf.Summary(), "network", string(pol.Network))
			return
		}
		log.Warn("sandbox: not enforced for "+program, "missing", strings.Join(enf.Missing, "; "), "enforced", enf.Summary())
		unenforced = append(unenforced, program+": "+strings.Join(enf.Missing, "; "))
	}
	for _, a := range cfg.Agents {
		ws := cfg.WorkspaceDir(a.Name, a)
		pol := cfg.ShellSandbox(a.Name, ws)
		pol.Write = append(pol.Write, ws)
		check("shell_exec of agent "+a.Name, pol)
	}
	for _, s := range cfg.MCPServers {
		if s.Transport.Type == "stdio" {
			check("mcp server "+s.Name, cfg.MCPSandbox(s, s.Transport.Command))
		}
	}
	if len(invalid) > 0 {
		return nil, fmt.Errorf("sandbox: %s", strings.Join(invalid, " | "))
	}
	if len(unenforced) > 0 && !l.BestEffort {
		return nil, fmt.Errorf("sandbox: this machine cannot enforce the configured confinement (%s); set [sandbox] mode = \"best_effort\" to start with what can be enforced, or see `agentd doctor`", strings.Join(unenforced, " | "))
	}
	return l, nil
}
