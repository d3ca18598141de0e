package config

import (
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/internal/manifest"
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
