package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
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

// procStat is the part of /proc/PID/stat the bench needs.
type procStat struct {
	pid, ppid, pgid int
	state           byte
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may contain anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 3 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return procStat{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0]}, true
}

func allStats() []procStat {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procStat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// descendants returns every live descendant of pid.
func descendants(pid int) []int {
	children := map[int][]int{}
	for _, st := range allStats() {
		if st.state != 'Z' {
			children[st.ppid] = append(children[st.ppid], st.pid)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state != 'Z'
}

// terminate sends SIGTERM to pid's group and to the groups of desc.
func terminate(pid int, desc []int) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	for _, d := range desc {
		if st, ok := readStat(d); ok && st.pgid != pid {
			_ = syscall.Kill(-st.pgid, syscall.SIGTERM)
		}
	}
}

// killTree sends SIGKILL to pid's group, to desc and to their groups,
// and to any descendant that appeared since desc was taken.
func killTree(pid int, desc []int) {
	all := append(append([]int(nil), desc...), descendants(pid)...)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	for _, d := range all {
		if st, ok := readStat(d); ok {
			if st.pgid != pid && st.pgid > 1 {
				_ = syscall.Kill(-st.pgid, syscall.SIGKILL)
			}
			_ = syscall.Kill(d, syscall.SIGKILL)
		}
	}
}

// killOrphans kills and reaps every process still parented to the
// bench: once every process the bench started has been stopped and
// waited for, those can only be orphans re-parented to it as subreaper,
// or zombies of adopted processes nobody waited for.
func killOrphans() {
	self := os.Getpid()
	for _, st := range allStats() {
		if st.ppid == self {
			_ = syscall.Kill(st.pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(st.pid, &ws, 0, nil)
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
