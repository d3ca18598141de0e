//go:build unix && !linux

package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that the server
// and everything it spawns can be signalled at once. There is no parent
// death signal here: a server outlives a daemon killed with SIGKILL until
// it notices EOF on its stdin.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
