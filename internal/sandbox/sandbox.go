// Package sandbox confines the programs agentd starts on a model's behalf
// (shell_exec commands, stdio MCP servers) with the kernel's own
// mechanisms, without a container runtime.
//
// Go cannot run code between fork and exec, so a confined command is
// started through a trampoline: agentd's own executable, re-run with a
// marker in its environment, in new user and PID namespaces (and a new
// network namespace unless the policy allows the host's network). The
// trampoline reads the policy from a pipe, applies rlimits, drops every
// capability, sets no_new_privs, enforces a Landlock ruleset (filesystem
// allowlist, TCP port rules, IPC scoping) on itself and execs the
// target, which thereby becomes PID 1 of its namespace: when it exits or
// is killed, the kernel kills every process left in the namespace,
// setsid and double-fork escapes included.
//
// The trampoline is dispatched from this package's init, not from main,
// so that every binary importing it (the daemon, and the test binaries
// of every package that spawns through it) can serve as the trampoline
// without each having to remember a hook. See docs/security.md for the
// model and its limits.
package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Network is how much of the network a confined program reaches.
type Network string

const (
	// NetworkNone gives the program a network namespace of its own whose
	// loopback is down: no interface, no connection, not even to itself.
	NetworkNone Network = "none"
	// NetworkLoopback gives the program a network namespace of its own
	// with its loopback up: it and its children can talk to each other
	// over 127.0.0.1, but nothing on the host (the host's 127.0.0.1
	// included) and nothing outside is reachable.
	NetworkLoopback Network = "loopback"
	// NetworkAny leaves the program on the host's network; ConnectTCP
	// can narrow its TCP connections to a set of ports.
	NetworkAny Network = "any"
)

// ParseNetwork checks a configured network value.
func ParseNetwork(s string) (Network, error) {
	switch n := Network(s); n {
	case NetworkNone, NetworkLoopback, NetworkAny:
		return n, nil
	}
	return "", fmt.Errorf("network %q: want none, loopback or any", s)
}

// Policy is what one confined program may do. The zero value (with
// Network set) allows reading the system directories only.
type Policy struct {
	// Read lists paths (files or directories, with everything beneath)
	// the program may read and execute, beside the system directories.
	Read []string
	// Write lists paths the program may read, execute, create, change
	// and remove things in.
	Write []string
	// Network is none, loopback or any.
	Network Network
	// ConnectTCP, with Network any, limits TCP connections to these
	// destination ports (Landlock ABI 4 and later); empty means all.
	ConnectTCP []uint16
	// MemoryBytes caps each process's data segment and anonymous
	// mappings (RLIMIT_DATA); 0 means no limit.
	MemoryBytes uint64
	// CPUSeconds caps each process's CPU time (RLIMIT_CPU); 0 means none.
	CPUSeconds uint64
	// MaxProcs caps the processes and threads alive in the sandbox at
	// once (a pids cgroup when one can be made, else RLIMIT_NPROC
	// counted in the sandbox's own user namespace); 0 means no limit.
	MaxProcs uint64
	// Deny lists paths that no grant may reach: AGENTD_HOME, other
	// agents' workspaces. A Read or Write path equal to or above one is
	// refused by Check, since Landlock can only allow; so is one beneath
	// it, unless it lies in DenyExcept (the agent's own workspace, which
	// by default lives in AGENTD_HOME/workspaces).
	Deny       []string
	DenyExcept []string
	// Off runs the program unconfined (a per-program "off").
	Off bool `json:"-"`
}

// SystemRead is what every confined program may read and execute: the
// places programs, libraries, certificates and the resolver's
// configuration live. /etc is granted entry by entry, without SecretEtc.
var SystemRead = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc", "/sys/devices/system/cpu", "/etc"}

// SecretEtc are the entries of /etc a confined program never reads, even
// when it runs as the owner of those files (a daemon run as root maps
// root into the sandbox).
var SecretEtc = []string{"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssh", "ssl/private", "security/opasswd", "agentd"}

// Check refuses a policy that grants what it must not: a relative path,
// or any path that reaches a denied one. The error names the path.
func (p Policy) Check() error {
	if _, err := ParseNetwork(string(p.Network)); err != nil {
		return err
	}
	if len(p.ConnectTCP) > 0 && p.Network != NetworkAny {
		return fmt.Errorf("connect_tcp needs network = \"any\" (network is %q)", p.Network)
	}
	for _, list := range []struct {
		name  string
		paths []string
	}{{"read", p.Read}, {"write", p.Write}} {
		for _, g := range list.paths {
			if !filepath.IsAbs(g) {
				return fmt.Errorf("%s path %q is not absolute", list.name, g)
			}
			g := filepath.Clean(g)
			for _, d := range p.Deny {
				if d == "" {
					continue
				}
				d = filepath.Clean(d)
				if within(d, g) || (within(g, d) && !p.excepted(g)) {
					return fmt.Errorf("%s path %q would expose %q, which no sandboxed program may reach", list.name, g, d)
				}
			}
		}
	}
	return nil
}

// excepted reports whether g lies in a DenyExcept path.
func (p Policy) excepted(g string) bool {
	for _, e := range p.DenyExcept {
		if e != "" && within(g, filepath.Clean(e)) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// Covers reports whether the policy lets the program read (write false)
// or write (write true) path, so that a "Permission denied" on it can be
// attributed to the sandbox.
func (p Policy) Covers(path string, write bool) bool {
	path = filepath.Clean(path)
	for _, w := range p.Write {
		if within(path, w) {
			return true
		}
	}
	if write {
		return path == "/dev/null" || path == "/dev/zero" || path == "/dev/full"
	}
	for _, r := range p.Read {
		if within(path, r) {
			return true
		}
	}
	for _, r := range SystemRead {
		if r == "/etc" {
			continue
		}
		if within(path, r) {
			return true
		}
	}
	if within(path, "/etc") {
		for _, s := range SecretEtc {
			if within(path, "/etc/"+s) {
				return false
			}
		}
		return true
	}
	return within(path, "/dev")
}

// Mechanisms is what this kernel and process can enforce.
type Mechanisms struct {
	OS string
	// LandlockABI is the Landlock ABI version, 0 when Landlock is off.
	LandlockABI int
	// UserNS says whether this process may create user namespaces (and
	// with them PID and network namespaces) without privilege.
	UserNS bool
	// PidsCgroup is the writable pids cgroup directory sandboxes are
	// made under, empty when there is none.
	PidsCgroup string
	// Root says the daemon runs as uid 0, so RLIMIT_NPROC does not bind.
	Root bool
	// Problems explains each missing mechanism.
	Problems []string
}

// Enforced is what a policy actually gets on this machine.
type Enforced struct {
	Filesystem bool // Landlock filesystem allowlist
	PIDNS      bool // own PID namespace: no view of the daemon, all killed at the end
	NetNS      bool // own network namespace (none, loopback)
	TCPRules   bool // Landlock TCP connect/bind rules
	Scoping    bool // Landlock signal and abstract-socket scoping
	ProcLimit  string
	// Missing names each part of the policy this machine cannot
	// enforce, in words for logs, doctor and the dashboard.
	Missing []string
}

// Enforce computes what the policy gets given the mechanisms.
func (m Mechanisms) Enforce(p Policy) Enforced {
	var e Enforced
	e.Filesystem = m.LandlockABI >= 1
	if !e.Filesystem {
		e.Missing = append(e.Missing, "filesystem allowlist (no Landlock): the program reads and writes all the daemon's user can")
	}
	e.PIDNS = m.UserNS
	if !e.PIDNS {
		e.Missing = append(e.Missing, "PID namespace (no user namespaces): processes it leaves behind may outlive it, and it sees the daemon's processes")
	}
	e.Scoping = m.LandlockABI >= 6
	if !e.Scoping && m.LandlockABI >= 1 {
		e.Missing = append(e.Missing, "signal and abstract-socket scoping (Landlock ABI < 6)")
	}
	e.TCPRules = m.LandlockABI >= 4 && (p.Network == NetworkNone || len(p.ConnectTCP) > 0)
	switch p.Network {
	case NetworkNone, NetworkLoopback:
		e.NetNS = m.UserNS
		if !e.NetNS {
			if e.TCPRules && p.Network == NetworkNone {
				e.Missing = append(e.Missing, "network namespace: only TCP connect/bind is refused (by Landlock), UDP and unix sockets are open")
			} else {
				e.Missing = append(e.Missing, "network "+string(p.Network)+": no network namespace, the host's network is reachable")
			}
		}
	case NetworkAny:
		if len(p.ConnectTCP) > 0 && !e.TCPRules {
			e.Missing = append(e.Missing, "connect_tcp (Landlock ABI < 4): every TCP port is reachable")
		}
	}
	if p.MaxProcs > 0 {
		switch {
		case m.PidsCgroup != "":
			e.ProcLimit = "pids cgroup"
		case !m.Root && m.UserNS:
			e.ProcLimit = "RLIMIT_NPROC in the sandbox's user namespace"
		case !m.Root:
			e.ProcLimit = "RLIMIT_NPROC (counted across all the daemon user's processes)"
		default:
			e.Missing = append(e.Missing, "process limit (root ignores RLIMIT_NPROC and no pids cgroup is writable)")
		}
	}
	return e
}

// Summary describes an Enforced in one line.
func (e Enforced) Summary() string {
	var on []string
	if e.Filesystem {
		on = append(on, "filesystem")
	}
	if e.PIDNS {
		on = append(on, "pid-ns")
	}
	if e.NetNS {
		on = append(on, "net-ns")
	}
	if e.TCPRules {
		on = append(on, "tcp-rules")
	}
	if e.Scoping {
		on = append(on, "ipc-scoping")
	}
	if e.ProcLimit != "" {
		on = append(on, "proc-limit")
	}
	if len(on) == 0 {
		return "nothing enforced"
	}
	return strings.Join(on, ", ")
}

// ErrUnavailable is wrapped when a policy cannot be enforced here and
// the configuration requires it.
var ErrUnavailable = errors.New("sandbox unavailable")
