//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"
)

// stdioSupported says whether stdio servers can be run (and killed) here.
const stdioSupported = true

type groupSignal int

const (
	sigTerm groupSignal = iota
	sigKill
)

// ownGroup starts cmd in a process group of its own, so that the server
// and everything it spawns can be signalled at once.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals every process of group pgid.
func signalGroup(pgid int, sig groupSignal) error {
	s := syscall.SIGTERM
	if sig == sigKill {
		s = syscall.SIGKILL
	}
	return syscall.Kill(-pgid, s)
}
