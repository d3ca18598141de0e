package cli

import (
	"fmt"
	"strings"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/sandbox"
)

// doctorSandbox reports what this kernel can enforce and, for each
// agent's shell_exec and each stdio server, what its policy gets here.
// A policy that cannot be enforced fails the check in required mode,
// as it fails `agentd start`.
func doctorSandbox(cfg *config.Config, report func(ok bool, what, detail string), note func(what, detail string)) {
	m := sandbox.Probe()
	uns := "no"
	if m.UserNS {
		uns = "yes"
	}
	cg := m.PidsCgroup
	if cg == "" {
		cg = "none writable"
	}
	landlock := "off"
	if m.LandlockABI > 0 {
		landlock = fmt.Sprintf("ABI %d", m.LandlockABI)
	}
	note("sandbox kernel", fmt.Sprintf("%s: Landlock %s, unprivileged user namespaces %s, pids cgroup %s, daemon as root %v", m.OS, landlock, uns, cg, m.Root))
	for _, p := range m.Problems {
		note("sandbox kernel", p)
	}
	mode := cfg.SandboxMode()
	if mode == config.SandboxOff {
		report(false, "sandbox", `mode = "off": shell_exec and stdio servers see everything the daemon's user sees`)
		return
	}
	l := &sandbox.Launcher{Mechanisms: m, BestEffort: mode == config.SandboxBestEffort}
	show := func(what string, pol sandbox.Policy) {
		if pol.Off {
			report(false, what, `mode = "off": runs unconfined`)
			return
		}
		if err := pol.Check(); err != nil {
			report(false, what, err.Error())
			return
		}
		enf, _ := l.Plan(pol)
		detail := fmt.Sprintf("network %s; enforced: %s", pol.Network, enf.Summary())
		if len(enf.Missing) == 0 {
			report(true, what, detail)
			return
		}
		detail += "; NOT enforced: " + strings.Join(enf.Missing, "; ")
		if l.BestEffort {
			note(what, detail)
		} else {
			report(false, what, detail+` (mode "required" refuses to start it)`)
		}
	}
	for _, a := range cfg.Agents {
		ws := cfg.WorkspaceDir(a.Name, a)
		pol := cfg.ShellSandbox(a.Name, ws)
		pol.Write = append(pol.Write, ws)
		show("sandbox shell "+a.Name, pol)
	}
	for _, s := range cfg.MCPServers {
		if s.Transport.Type == "stdio" {
			show("sandbox mcp "+s.Name, cfg.MCPSandbox(s, s.Transport.Command))
		}
	}
}
