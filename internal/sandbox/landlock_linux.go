package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// agentd talks to Landlock through its three system calls instead of
// through go-landlock. go-landlock's syscall package links
// libcap/psx, which wraps pthread_create with cgo so that a process can
// restrict all of its threads at once. The trampoline never needs that
// (it restricts the thread that then execs), and linking psx turned the
// whole daemon into an externally linked cgo binary whose start touches
// three times the file-backed pages: idle RSS 22 MB instead of 9 MB
// (docs/upstream.md, "go-landlock"). What agentd needs is small: a
// ruleset of handled rights cut to the kernel's ABI, path-beneath rules
// and TCP port rules.

// Access rights, from <linux/landlock.h> (via x/sys/unix).
const (
	llExecute   = unix.LANDLOCK_ACCESS_FS_EXECUTE
	llWriteFile = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	llReadFile  = unix.LANDLOCK_ACCESS_FS_READ_FILE
	llReadDir   = unix.LANDLOCK_ACCESS_FS_READ_DIR
	llTruncate  = unix.LANDLOCK_ACCESS_FS_TRUNCATE

	// llFileRights are the rights that apply to a file as opposed to a
	// directory: a rule on a file may only grant these (else EINVAL).
	llFileRights = llExecute | llWriteFile | llReadFile | llTruncate | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	llRead  = llExecute | llReadFile | llReadDir
	llWrite = llWriteFile | llTruncate |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM

	llBindTCP    = unix.LANDLOCK_ACCESS_NET_BIND_TCP
	llConnectTCP = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP

	llScoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL

	llRuleNetPort = 2 // LANDLOCK_RULE_NET_PORT
)

// llABI is what one Landlock ABI version can restrict. A ruleset is cut
// to the running kernel's entry: best effort, as the policy's
// explanation (Enforced) already says per mechanism.
type llABI struct {
	fs, net, scoped uint64
	logFlags        bool // LANDLOCK_RESTRICT_SELF_LOG_* (ABI 7)
}

// llABIs is indexed by ABI version (Documentation/userspace-api/landlock.rst).
var llABIs = []llABI{
	0:  {},
	1:  {fs: 1<<13 - 1},
	2:  {fs: 1<<14 - 1}, // REFER
	3:  {fs: 1<<15 - 1}, // TRUNCATE
	4:  {fs: 1<<15 - 1, net: 1<<2 - 1},
	5:  {fs: 1<<16 - 1, net: 1<<2 - 1}, // IOCTL_DEV
	6:  {fs: 1<<16 - 1, net: 1<<2 - 1, scoped: 1<<2 - 1},
	7:  {fs: 1<<16 - 1, net: 1<<2 - 1, scoped: 1<<2 - 1, logFlags: true},
	8:  {fs: 1<<16 - 1, net: 1<<2 - 1, scoped: 1<<2 - 1, logFlags: true},
	9:  {fs: 1<<17 - 1, net: 1<<2 - 1, scoped: 1<<2 - 1, logFlags: true}, // RESOLVE_UNIX
	10: {fs: 1<<17 - 1, net: 1<<4 - 1, scoped: 1<<2 - 1, logFlags: true}, // UDP
}

func abiInfo(v int) llABI {
	if v < 0 {
		v = 0
	}
	if v >= len(llABIs) {
		v = len(llABIs) - 1
	}
	return llABIs[v]
}

// landlockABI asks the kernel for its Landlock ABI version.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// llPath grants access beneath one path (a directory and everything
// in it, or one file).
type llPath struct {
	path   string
	access uint64
}

// llRuleset is what a trampoline restricts itself to before exec.
type llRuleset struct {
	fs, net, scoped uint64 // handled: refused unless a rule grants it
	paths           []llPath
	connectPorts    []uint16
}

// rulesetAttr is struct landlock_ruleset_attr up to scoped (ABI 6). The
// kernel takes a shorter struct from an older ABI's point of view and
// refuses fields it does not know unless they are zero, so the size is
// cut to the fields the kernel knows.
type rulesetAttr struct {
	fs, net, scoped uint64
}

// pathBeneathAttr is the packed struct landlock_path_beneath_attr.
type pathBeneathAttr [12]byte

// netPortAttr is struct landlock_net_port_attr.
type netPortAttr struct {
	access, port uint64
}

// build creates the ruleset on a kernel of ABI version abi, cut to what
// that version can restrict. It returns the ruleset's descriptor (close
// it after landlock_restrict_self) and the flags to restrict with; fd
// is -1 when nothing is left to restrict. Paths that do not exist are
// skipped: a grant of something missing grants nothing.
func (r llRuleset) build(abi int) (fd int, flags uint32, err error) {
	info := abiInfo(abi)
	attr := rulesetAttr{fs: r.fs & info.fs, net: r.net & info.net, scoped: r.scoped & info.scoped}
	if attr == (rulesetAttr{}) {
		return -1, 0, nil
	}
	size := unsafe.Sizeof(attr)
	switch {
	case abi < 4:
		size = unsafe.Offsetof(attr.net)
	case abi < 6:
		size = unsafe.Offsetof(attr.scoped)
	}
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return -1, 0, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	fd = int(v)
	for _, p := range r.paths {
		if err := addPath(fd, p.path, p.access&attr.fs); err != nil {
			unix.Close(fd)
			return -1, 0, err
		}
	}
	if attr.net&llConnectTCP != 0 {
		for _, port := range r.connectPorts {
			rule := netPortAttr{access: llConnectTCP, port: uint64(port)}
			if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), llRuleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
				unix.Close(fd)
				return -1, 0, fmt.Errorf("landlock_add_rule tcp port %d: %w", port, errno)
			}
		}
	}
	if info.logFlags {
		// Denials of the program exec'd next are what an operator
		// wants in the audit log, not the trampoline's own.
		flags = unix.LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
	}
	return fd, flags, nil
}

func addPath(rulesetFD int, path string, access uint64) error {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock rule for %s: %w", path, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("landlock rule for %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFileRights
	}
	if access == 0 {
		return nil // a rule granting nothing is refused (ENOMSG) and means nothing
	}
	var attr pathBeneathAttr
	binary.NativeEndian.PutUint64(attr[0:8], access)
	binary.NativeEndian.PutUint32(attr[8:12], uint32(int32(pfd)))
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFD), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock rule for %s: landlock_add_rule: %w", path, errno)
	}
	return nil
}

// restrictSelf enforces the ruleset on the calling thread, which must
// be locked to its goroutine and exec next: the exec'd program keeps
// the restriction, and no other thread of the trampoline matters.
func restrictSelf(fd int, flags uint32) error {
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), uintptr(flags), 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

func closeFD(fd int) { unix.Close(fd) }
