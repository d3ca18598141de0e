package sandbox

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// NoDump marks the calling process non-dumpable: a process of the same
// user that is not confined (a program started with the sandbox off, or
// any other program of that user) can then not read its
// /proc/PID/environ, mem or fd without CAP_SYS_PTRACE, and it leaves no
// core dump holding its keys.
func NoDump() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// CatchesSIGTERM reports whether process pid has a SIGTERM handler
// (/proc/PID/status SigCgt). A confined program is PID 1 of its own PID
// namespace, where the kernel drops a signal from outside that has no
// handler instead of applying its default action: a server that does
// not catch SIGTERM would ignore it, so the caller may as well SIGKILL
// it at once. true when unsure.
func CatchesSIGTERM(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return true
			}
			return mask&(1<<(uint(unix.SIGTERM)-1)) != 0
		}
	}
	return true
}
