package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// init runs the trampoline when the marker says this process is one. It
// never returns then: it execs the target or exits 126. See the package
// doc for why this is init and not a call from main.
func init() {
	mode, ok := os.LookupEnv(markerEnv)
	if !ok {
		return
	}
	if mode == "probe" {
		os.Exit(0)
	}
	// Landlock and prctl apply to the calling thread, which must then be
	// the one that execs.
	runtime.LockOSThread()
	err := trampoline()
	fmt.Fprintf(os.Stderr, "agentd sandbox: %v\n", err)
	os.Exit(126)
}

func trampoline() error {
	f := os.NewFile(specFD, "spec")
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	var s spec
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	if s.NetNS && s.Policy.Network == NetworkLoopback {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("bring up loopback: %w", err)
		}
	}
	fd := -1
	var flags uint32
	if s.Landlock >= 1 {
		cfg, rules := landlockRules(s)
		fd, flags, err = cfg.NewRulesetFD(rules...)
		if err != nil {
			return fmt.Errorf("landlock ruleset: %w", err)
		}
	}
	if s.InNS || os.Geteuid() == 0 {
		if err := dropCaps(); err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
	}
	if err := setLimits(s); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if fd >= 0 {
		if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
			return fmt.Errorf("landlock restrict: %w", err)
		}
		unix.Close(fd)
	}
	err = syscall.Exec(s.Path, s.Args, s.Env)
	return fmt.Errorf("exec %s: %w", s.Path, err)
}

// landlockRules is the ruleset of a spec: the system directories and the
// policy's paths on the filesystem, TCP rules, and IPC scoping.
func landlockRules(s spec) (landlock.Config, []landlock.Rule) {
	p := s.Policy
	var rules []landlock.Rule
	for _, d := range SystemRead {
		if d == "/etc" {
			rules = append(rules, etcRules("/etc", SecretEtc)...)
			continue
		}
		rules = append(rules, landlock.RODirs(d).IgnoreIfMissing())
	}
	rules = append(rules,
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full").IgnoreIfMissing(),
		landlock.ROFiles("/dev/urandom", "/dev/random").IgnoreIfMissing(),
	)
	for _, r := range p.Read {
		rules = append(rules, pathRule(r, false))
	}
	for _, w := range p.Write {
		rules = append(rules, pathRule(w, true))
	}
	fsSet := landlock.AccessFSSet(0)
	if s.Landlock >= 1 {
		fsSet = landlock.V11.HandledAccessFS
	}
	var netSet landlock.AccessNetSet
	switch {
	case p.Network == NetworkNone:
		// Own network namespace already; refusing TCP too covers a
		// kernel where the namespace was not possible.
		netSet = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)
	case p.Network == NetworkAny && len(p.ConnectTCP) > 0:
		netSet = landlock.AccessNetSet(ll.AccessNetConnectTCP)
		for _, port := range p.ConnectTCP {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	cfg := landlock.Config{HandledAccessFS: fsSet, HandledAccessNet: netSet, Scoped: landlock.V11.Scoped}
	return cfg.BestEffort().EnableLoggingForSubprocesses(), rules
}

// pathRule grants a configured path: a directory with everything
// beneath it, or one file.
func pathRule(p string, write bool) landlock.Rule {
	fi, err := os.Stat(p)
	dir := err != nil || fi.IsDir()
	switch {
	case write && dir:
		return landlock.RWDirs(p).IgnoreIfMissing()
	case write:
		return landlock.RWFiles(p).IgnoreIfMissing()
	case dir:
		return landlock.RODirs(p).IgnoreIfMissing()
	default:
		return landlock.ROFiles(p).IgnoreIfMissing()
	}
}

// etcRules grants dir entry by entry, leaving out the secrets (names
// relative to dir, possibly nested).
func etcRules(dir string, secrets []string) []landlock.Rule {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var rules []landlock.Rule
	for _, e := range entries {
		name := e.Name()
		var nested []string
		skip := false
		for _, s := range secrets {
			if s == name {
				skip = true
			}
			if rest, ok := strings.CutPrefix(s, name+"/"); ok {
				nested = append(nested, rest)
			}
		}
		if skip {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p) // follows links: the rule lands on the target
		if err != nil {
			continue
		}
		switch {
		case len(nested) > 0 && fi.IsDir():
			rules = append(rules, etcRules(p, nested)...)
		case fi.IsDir():
			rules = append(rules, landlock.RODirs(p).IgnoreIfMissing())
		default:
			rules = append(rules, landlock.ROFiles(p).IgnoreIfMissing())
		}
	}
	return rules
}

// dropCaps leaves the trampoline, root in its own user namespace, with
// no capability, now or after exec: the bounding set is emptied and
// securebits make uid 0 grant nothing on exec, locked so the target
// cannot undo it.
func dropCaps() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS locked, NO_CAP_AMBIENT_RAISE, each with its lock
	const keepCaps = 1 << 4
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits&^keepCaps, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// setLimits applies the policy's rlimits. They are set last before
// exec: RLIMIT_NPROC counts this Go process's threads too.
func setLimits(s spec) error {
	p := s.Policy
	set := func(name string, res int, v uint64) error {
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if err := set("RLIMIT_CORE", unix.RLIMIT_CORE, 0); err != nil {
		return err
	}
	if p.MemoryBytes > 0 {
		if err := set("RLIMIT_DATA", unix.RLIMIT_DATA, p.MemoryBytes); err != nil {
			return err
		}
	}
	if p.CPUSeconds > 0 {
		if err := set("RLIMIT_CPU", unix.RLIMIT_CPU, p.CPUSeconds); err != nil {
			return err
		}
	}
	if s.Nproc && p.MaxProcs > 0 {
		if err := set("RLIMIT_NPROC", unix.RLIMIT_NPROC, p.MaxProcs); err != nil {
			return err
		}
	}
	return nil
}

// loopbackUp sets lo up in the trampoline's own network namespace.
func loopbackUp() error {
	sock, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(sock)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(sock, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(sock, unix.SIOCSIFFLAGS, ifr)
}
