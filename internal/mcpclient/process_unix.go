//go:build unix

package mcpclient

import "syscall"

// stdioSupported says whether stdio servers can be run (and killed) here.
const stdioSupported = true

// ownGroup, which starts a server in a process group of its own, is in
// process_linux.go and process_nolinux.go: Linux can also tie the server's
// life to the daemon's.

type groupSignal int

const (
	sigTerm groupSignal = iota
	sigKill
)

// signalGroup signals every process of group pgid.
func signalGroup(pgid int, sig groupSignal) error {
	s := syscall.SIGTERM
	if sig == sigKill {
		s = syscall.SIGKILL
	}
	return syscall.Kill(-pgid, s)
}
