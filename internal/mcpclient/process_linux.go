package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that the server
// and everything it spawns can be signalled at once, and has the kernel
// SIGKILL it if the daemon dies without stopping it (SIGKILL, OOM
// killer): stop never runs then, and a server that ignores EOF on stdin
// would otherwise run forever, re-parented to init.
//
// Pdeathsig fires when the OS thread that forked the child ends, not the
// process (go.dev/issue/27505). Go ends a thread only when a goroutine
// exits while locked to it, so startProcess forks from a goroutine that
// stays locked to its thread until the child is reaped: the thread cannot
// end under a live child, and cannot be handed to a goroutine that would
// end it. The kernel clears the setting when the server execs a set-user-ID
// program. It reaches only the direct child: what the server started keeps
// running unless it notices its parent or its stdin are gone.
//
// A sandboxed server's SysProcAttr already holds its namespaces: the
// fields are set on it, not replaced. There the server is also PID 1 of
// its own PID namespace, so its death kills everything it started.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
