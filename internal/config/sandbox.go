package config

import (
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/sandbox"
)

// Sandbox is the [sandbox] table: how agentd confines the programs it
// starts (shell_exec commands, stdio MCP servers). See docs/security.md.
type Sandbox struct {
	// Mode is "required" (default: refuse to start a program whose
	// policy this machine cannot fully enforce), "best_effort" (start it
	// with what can be enforced, saying what cannot) or "off" (confine
	// nothing, with a warning at start).
	Mode string `toml:"mode" json:"mode,omitempty"`
	// Read and Write are granted to every confined program, beside the
	// system directories and each program's own grants.
	Read  []string `toml:"read" json:"read,omitempty"`
	Write []string `toml:"write" json:"write,omitempty"`
	// Shell is shell_exec's profile; Agents overrides it per agent name.
	Shell  SandboxProfile            `toml:"shell" json:"shell"`
	Agents map[string]SandboxProfile `toml:"agents" json:"agents,omitempty"`
}

// SandboxProfile is one program's confinement: [sandbox.shell],
// [sandbox.agents.NAME] and [mcp_servers.sandbox]. Zero fields take the
// defaults of where the profile is used.
type SandboxProfile struct {
	// Mode "off" runs this one program unconfined (warned at start);
	// empty follows [sandbox] mode.
	Mode string `toml:"mode" json:"mode,omitempty"`
	// Read and Write are absolute paths (or ~/ for the daemon user's
	// home) added to what the program may read, or read and write.
	Read  []string `toml:"read" json:"read,omitempty"`
	Write []string `toml:"write" json:"write,omitempty"`
	// Network is none, loopback or any; ConnectTCP narrows any to ports.
	Network    string `toml:"network" json:"network,omitempty"`
	ConnectTCP []int  `toml:"connect_tcp" json:"connect_tcp,omitempty"`
	// MemoryMB caps each process's data (RLIMIT_DATA), CPUSecs its CPU
	// time, MaxProcs the processes and threads alive at once; -1 lifts a
	// default limit.
	MemoryMB int `toml:"memory_mb" json:"memory_mb,omitempty"`
	CPUSecs  int `toml:"cpu_secs" json:"cpu_secs,omitempty"`
	MaxProcs int `toml:"max_procs" json:"max_procs,omitempty"`
}

// Sandbox modes.
const (
	SandboxRequired   = "required"
	SandboxBestEffort = "best_effort"
	SandboxOff        = "off"
)

// SandboxMode is [sandbox] mode with its default.
func (c *Config) SandboxMode() string {
	if c.Sandbox.Mode == "" {
		return SandboxRequired
	}
	return c.Sandbox.Mode
}

// ExpandHome turns a leading ~/ into home/.
func ExpandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}

func checkSandbox(r *report, src *source, root fieldPath, c *Config) {
	p := root.key("sandbox")
	if c.Sandbox.Mode != "" {
		checkOneOf(r, src, p.key("mode"), c.Sandbox.Mode, SandboxRequired, SandboxBestEffort, SandboxOff)
	}
	checkSandboxPaths(r, src, p, "read", c.Sandbox.Read)
	checkSandboxPaths(r, src, p, "write", c.Sandbox.Write)
	checkSandboxProfile(r, src, p.key("shell"), &c.Sandbox.Shell)
	for _, name := range sortedStringKeys(c.Sandbox.Agents) {
		ap := p.key("agents").key(name)
		if !manifest.ValidName(name) {
			r.add(src, ap, "%q is not a valid agent name (%s)", name, nameRules)
		}
		prof := c.Sandbox.Agents[name]
		checkSandboxProfile(r, src, ap, &prof)
	}
}

func checkSandboxProfile(r *report, src *source, p fieldPath, s *SandboxProfile) {
	if s == nil {
		return
	}
	if s.Mode != "" {
		checkOneOf(r, src, p.key("mode"), s.Mode, SandboxOff)
	}
	if s.Network != "" {
		checkOneOf(r, src, p.key("network"), s.Network, "none", "loopback", "any")
	}
	for i, port := range s.ConnectTCP {
		if port < 1 || port > 65535 {
			r.add(src, p.key("connect_tcp").index(i), "%d is not a TCP port (1-65535)", port)
		}
	}
	if len(s.ConnectTCP) > 0 && s.Network != "any" {
		r.add(src, p.key("connect_tcp"), "needs network = \"any\" (the other modes have no host network to narrow)")
	}
	checkSandboxPaths(r, src, p, "read", s.Read)
	checkSandboxPaths(r, src, p, "write", s.Write)
	for _, f := range []struct {
		name string
		v    int
	}{{"memory_mb", s.MemoryMB}, {"cpu_secs", s.CPUSecs}, {"max_procs", s.MaxProcs}} {
		if f.v < -1 {
			r.add(src, p.key(f.name), "must be positive, 0 for the default or -1 for no limit")
		}
	}
}

func checkSandboxPaths(r *report, src *source, p fieldPath, key string, paths []string) {
	for i, v := range paths {
		if !filepath.IsAbs(v) && !strings.HasPrefix(v, "~/") {
			r.add(src, p.key(key).index(i), "%q must be an absolute path (or start with ~/)", v)
		}
	}
}

// Default limits of confined programs. A shell command is short and
// small; an MCP server is long-lived (no CPU-time cap) and often a
// Node.js or Python runtime with many threads.
const (
	DefaultShellMemoryMB = 2048
	DefaultShellCPUSecs  = 300
	DefaultShellMaxProcs = 256
	DefaultMCPMemoryMB   = 4096
	DefaultMCPMaxProcs   = 1024
)

// ShellSandbox is the policy of agent's shell_exec, whose workspace is
// ws: [sandbox.shell] overridden field by field by [sandbox.agents.NAME].
// The caller adds the workspace and TMPDIR to the writable paths.
func (c *Config) ShellSandbox(agent, ws string) sandbox.Policy {
	prof := c.Sandbox.Shell
	if o, ok := c.Sandbox.Agents[agent]; ok {
		prof = overlay(prof, o)
	}
	p := c.sandboxPolicy(prof, "none", DefaultShellMemoryMB, DefaultShellCPUSecs, DefaultShellMaxProcs)
	p.DenyExcept = []string{ws}
	for _, a := range c.Agents {
		if other := c.WorkspaceDir(a.Name, a); a.Name != agent && other != filepath.Clean(ws) {
			p.Deny = append(p.Deny, other)
		}
	}
	return p
}

// MCPSandbox is the policy of stdio server s, whose executable resolved
// to path: [mcp_servers.sandbox] over the defaults, plus what the
// program needs to read to run (see sandbox.ProgramRead).
func (c *Config) MCPSandbox(s MCPServer, path string) sandbox.Policy {
	var prof SandboxProfile
	if s.Sandbox != nil {
		prof = *s.Sandbox
	}
	p := c.sandboxPolicy(prof, "any", DefaultMCPMemoryMB, 0, DefaultMCPMaxProcs)
	p.Read = append(p.Read, sandbox.ProgramRead(path, s.Transport.Args, s.Transport.Dir)...)
	if s.Transport.Dir != "" {
		p.Read = append(p.Read, s.Transport.Dir)
	}
	for _, a := range c.Agents {
		p.Deny = append(p.Deny, c.WorkspaceDir(a.Name, a))
	}
	return p
}

// overlay returns base with the fields o sets.
func overlay(base, o SandboxProfile) SandboxProfile {
	if o.Mode != "" {
		base.Mode = o.Mode
	}
	base.Read = append(append([]string(nil), base.Read...), o.Read...)
	base.Write = append(append([]string(nil), base.Write...), o.Write...)
	if o.Network != "" {
		base.Network = o.Network
		base.ConnectTCP = o.ConnectTCP
	}
	if o.MemoryMB != 0 {
		base.MemoryMB = o.MemoryMB
	}
	if o.CPUSecs != 0 {
		base.CPUSecs = o.CPUSecs
	}
	if o.MaxProcs != 0 {
		base.MaxProcs = o.MaxProcs
	}
	return base
}

func (c *Config) sandboxPolicy(prof SandboxProfile, network string, memMB, cpu, procs int) sandbox.Policy {
	home, _ := c.lookup("HOME")
	limit := func(v, def int) uint64 {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return uint64(def)
		}
		return uint64(v)
	}
	if prof.Network != "" {
		network = prof.Network
	}
	p := sandbox.Policy{
		Off:         prof.Mode == SandboxOff || c.SandboxMode() == SandboxOff,
		Network:     sandbox.Network(network),
		MemoryBytes: limit(prof.MemoryMB, memMB) << 20,
		CPUSeconds:  limit(prof.CPUSecs, cpu),
		MaxProcs:    limit(prof.MaxProcs, procs),
	}
	for _, r := range append(append([]string(nil), c.Sandbox.Read...), prof.Read...) {
		p.Read = append(p.Read, ExpandHome(r, home))
	}
	for _, w := range append(append([]string(nil), c.Sandbox.Write...), prof.Write...) {
		p.Write = append(p.Write, ExpandHome(w, home))
	}
	for _, port := range prof.ConnectTCP {
		p.ConnectTCP = append(p.ConnectTCP, uint16(port))
	}
	if c.Home != "" {
		p.Deny = append(p.Deny, c.Home)
	}
	return p
}
