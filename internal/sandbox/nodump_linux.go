package sandbox

import "golang.org/x/sys/unix"

// NoDump marks the calling process non-dumpable: a process of the same
// user that is not confined (a program started with the sandbox off, or
// any other program of that user) can then not read its
// /proc/PID/environ, mem or fd without CAP_SYS_PTRACE, and it leaves no
// core dump holding its keys.
func NoDump() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
