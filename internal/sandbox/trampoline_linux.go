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
	"unsafe"

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
		fd, flags, err = landlockRules(s).build(s.Landlock)
		if err != nil {
			return fmt.Errorf("landlock ruleset: %w", err)
		}
	}
	if s.InNS || os.Geteuid() == 0 {
		if err := dropCaps(); err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
	}
	// What exec needs is made before the limits. RLIMIT_DATA is meant for
	// the program, whose address space starts empty; this Go process's
	// own mappings may already exceed it (a race-built binary's always
	// do), and then any allocation that needs a new mapping is a fatal
	// "cannot allocate memory". syscall.Exec allocates its arguments, so
	// it is not used: exec below allocates nothing.
	ex, err := prepareExec(s)
	if err != nil {
		return err
	}
	if err := setLimits(s); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if fd >= 0 {
		if err := restrictSelf(fd, flags); err != nil {
			return err
		}
		unix.Close(fd)
	}
	ex.exec() // returns only if exec failed, having said why
	os.Exit(126)
	return nil
}

// preparedExec is an execve(2) whose arguments are in place.
type preparedExec struct {
	path       *byte
	argv, envv []*byte
	nofile     *unix.Rlimit // the soft RLIMIT_NOFILE to restore; nil: leave it
	failed     []byte       // "agentd sandbox: exec PATH: ", room for the reason
}

func prepareExec(s spec) (*preparedExec, error) {
	var ex preparedExec
	var err error
	if ex.path, err = syscall.BytePtrFromString(s.Path); err != nil {
		return nil, fmt.Errorf("exec %s: %w", s.Path, err)
	}
	if ex.argv, err = syscall.SlicePtrFromStrings(s.Args); err != nil {
		return nil, fmt.Errorf("exec %s: %w", s.Path, err)
	}
	if ex.envv, err = syscall.SlicePtrFromStrings(s.Env); err != nil {
		return nil, fmt.Errorf("exec %s: %w", s.Path, err)
	}
	// Go raises its own soft RLIMIT_NOFILE at start (to the hard limit
	// less one), and syscall.Exec lowers it again for the program: old
	// software sized for select(2), or that closes every descriptor up
	// to the limit, expects the usual soft limit. The original is not
	// exported; 1024 is the kernel's default, which it nearly always is.
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Max > 0 && lim.Cur == lim.Max-1 {
		ex.nofile = &unix.Rlimit{Cur: min(1024, lim.Cur), Max: lim.Max}
	}
	prefix := "agentd sandbox: exec " + s.Path + ": "
	ex.failed = append(make([]byte, 0, len(prefix)+128), prefix...)
	return &ex, nil
}

// exec replaces the process with the program. It allocates nothing; if
// the exec fails it writes why to stderr and returns.
func (ex *preparedExec) exec() {
	if ex.nofile != nil {
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, ex.nofile)
	}
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(ex.path)),
		uintptr(unsafe.Pointer(&ex.argv[0])), uintptr(unsafe.Pointer(&ex.envv[0])))
	msg := append(ex.failed, errno.Error()...) // within the capacity made for it
	msg = append(msg, '\n')
	_, _ = unix.Write(2, msg)
}

// landlockRules is the ruleset of a spec: the system directories and the
// policy's paths on the filesystem, TCP rules, and IPC scoping.
func landlockRules(s spec) llRuleset {
	p := s.Policy
	r := llRuleset{fs: abiInfo(len(llABIs)).fs, scoped: llScoped}
	for _, d := range SystemRead {
		if d == "/etc" {
			r.paths = append(r.paths, etcRules("/etc", SecretEtc)...)
			continue
		}
		r.paths = append(r.paths, llPath{d, llRead})
	}
	for _, f := range []string{"/dev/null", "/dev/zero", "/dev/full"} {
		r.paths = append(r.paths, llPath{f, llRead | llWrite})
	}
	for _, f := range []string{"/dev/urandom", "/dev/random"} {
		r.paths = append(r.paths, llPath{f, llRead})
	}
	for _, path := range p.Read {
		r.paths = append(r.paths, llPath{path, llRead})
	}
	for _, path := range p.Write {
		r.paths = append(r.paths, llPath{path, llRead | llWrite})
	}
	switch {
	case p.Network == NetworkNone:
		// Own network namespace already; refusing TCP too covers a
		// kernel where the namespace was not possible.
		r.net = llBindTCP | llConnectTCP
	case p.Network == NetworkAny && len(p.ConnectTCP) > 0:
		r.net = llConnectTCP
		r.connectPorts = p.ConnectTCP
	}
	return r
}

// etcRules grants dir entry by entry, leaving out the secrets (names
// relative to dir, possibly nested).
func etcRules(dir string, secrets []string) []llPath {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var rules []llPath
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
		if len(nested) > 0 && fi.IsDir() {
			rules = append(rules, etcRules(p, nested)...)
			continue
		}
		rules = append(rules, llPath{p, llRead})
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
