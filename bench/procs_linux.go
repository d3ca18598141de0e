package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentd/agentd/internal/proctree"
)

// ownGroup puts cmd in a process group of its own (so one signal reaches
// everything it spawns) and asks the kernel to kill it if the bench dies
// without cleaning up (SIGKILL of the bench itself).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// becomeSubreaper makes orphaned descendants re-parent to the bench
// rather than to init, so killOrphans can find them.
func becomeSubreaper() {
	const prSetChildSubreaper = 36
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// killOrphans kills and reaps every process still parented to the
// bench: once every process the bench started has been stopped and
// waited for, those can only be orphans re-parented to it as subreaper,
// or zombies of adopted processes nobody waited for.
func killOrphans() {
	self := os.Getpid()
	for _, p := range proctree.All() {
		if p.PPid == self {
			_ = syscall.Kill(p.Pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.Pid, &ws, 0, nil)
		}
	}
}

// rssKB returns the resident set size of pid (VmRSS), in kB. Children
// are separate processes and are not included.
func rssKB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read rss of pid %d: %w", pid, err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("pid %d: no VmRSS in /proc status", pid)
}

// fdCount returns how many file descriptors pid has open.
func fdCount(pid int) (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("count fds of pid %d: %w", pid, err)
	}
	return len(ents), nil
}

// threadCount returns the number of OS threads of pid.
func threadCount(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read threads of pid %d: %w", pid, err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("pid %d: no Threads in /proc status", pid)
}

// cpuTime returns the CPU time pid has used so far, user and system, its
// threads included and its children not (utime and stime of /proc stat,
// in clock ticks of 10 ms).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu time of pid %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces: fields are counted
	// after its closing parenthesis, from field 3.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("pid %d: /proc stat has no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("pid %d: short /proc stat", pid)
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime: fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("pid %d: /proc stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
