package proctree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
)

// Stat reads the process pid from /proc. The error wraps os.ErrNotExist
// when there is no such process (any more).
func Stat(pid int) (Proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, fmt.Errorf("stat process %d: %w", pid, err)
	}
	p, err := parseStat(b)
	if err != nil {
		return Proc{}, fmt.Errorf("stat process %d: %w", pid, err)
	}
	return p, nil
}

// errMalformed is what parseStat says of a line it cannot read.
var errMalformed = errors.New("malformed /proc stat line")

// parseStat decodes the fields of a /proc/PID/stat line that Proc holds.
// The line is "pid (comm) state ppid pgrp ...", where comm is the
// executable's name: up to 15 bytes of anything, spaces and parentheses
// included, so the fields are counted from the last ')'.
func parseStat(b []byte) (Proc, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return Proc{}, errMalformed
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return Proc{}, errMalformed
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return Proc{}, errMalformed
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return Proc{}, errMalformed
	}
	return Proc{Pid: pid, PPid: ppid, Pgid: pgid, State: f[0][0]}, nil
}

// All returns every process in /proc, zombies included (callers that reap
// orphans need those), or nil when /proc cannot be read. A process that
// ends while /proc is read is left out.
func All() []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := Stat(pid); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Descendants returns the live (not zombie) descendants of pid, children
// before grandchildren. A descendant whose parent has died is re-parented
// (to init or a subreaper) and is no longer found from pid: take the
// snapshot while the tree is whole.
func Descendants(pid int) []Proc {
	children := map[int][]Proc{}
	for _, p := range All() {
		if !p.Zombie() {
			children[p.PPid] = append(children[p.PPid], p)
		}
	}
	var out []Proc
	queue := []int{pid}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range children[parent] {
			out = append(out, c)
			queue = append(queue, c.Pid)
		}
	}
	return out
}

// Group returns the live processes of process group pgid.
func Group(pgid int) []Proc {
	var out []Proc
	for _, p := range All() {
		if p.Pgid == pgid && !p.Zombie() {
			out = append(out, p)
		}
	}
	return out
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	p, err := Stat(pid)
	return err == nil && !p.Zombie()
}

// Terminate asks a tree to end: SIGTERM to the process group that leader
// leads (it was started with Setpgid; to leader alone if it leads no
// group) and to the group of every process
// of known and of leader's current descendants, each group once. Groups
// rather than processes are signalled so that every process gets one
// SIGTERM, as from a terminal: a second one makes some programs abandon
// their graceful shutdown.
func Terminate(leader int, known []Proc) {
	signalTree(leader, known, syscall.SIGTERM, false)
}

// KillTree SIGKILLs a tree: the group that leader leads, every process of
// known and of leader's current descendants, and their groups. The group
// is killed even when leader has already died, which catches what it
// left in its group; known catches what left the group and was orphaned,
// so take it while the tree is whole.
func KillTree(leader int, known []Proc) {
	signalTree(leader, known, syscall.SIGKILL, true)
}

// signalTree sends sig to leader's group and to the groups of known and
// of leader's descendants, and, when each is set, to every one of those
// processes too (one that moved into a group of its own after the
// snapshot is then still reached). The signaller's own group is never
// signalled, whatever a descendant joined.
func signalTree(leader int, known []Proc, sig syscall.Signal, each bool) {
	// The walk comes first: once leader's group is signalled, its members
	// die and their children can no longer be found from leader.
	procs := append(slices.Clone(known), Descendants(leader)...)
	self := syscall.Getpgrp()
	signalled := map[int]bool{leader: true, self: true, 0: true, 1: true}
	if leader != self && leader > 1 {
		if err := syscall.Kill(-leader, sig); errors.Is(err, syscall.ESRCH) {
			// leader leads no group (or is gone): signal it alone.
			_ = syscall.Kill(leader, sig)
		}
	}
	seen := map[int]bool{}
	for _, k := range procs {
		if seen[k.Pid] {
			continue
		}
		seen[k.Pid] = true
		// Read again: the process may have changed group, or ended.
		p, err := Stat(k.Pid)
		if err != nil || p.Zombie() {
			continue
		}
		if !signalled[p.Pgid] {
			signalled[p.Pgid] = true
			_ = syscall.Kill(-p.Pgid, sig)
		}
		if each {
			_ = syscall.Kill(p.Pid, sig)
		}
	}
}
