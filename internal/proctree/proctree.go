// Package proctree finds the processes descended from a pid and signals
// them as a tree. Harnesses that start process trees (the bench, the
// reliability tests) use it to make sure, and to prove, that nothing they
// started outlives them, including processes that left their parent's
// process group or ignore SIGTERM.
//
// On Linux it walks /proc. Elsewhere there is no portable way to list a
// process's children, so it knows only the pid it is given: Descendants,
// Group and All find nothing, and Terminate and KillTree signal the leader
// alone.
//
// A walk is a snapshot, not a transaction: a process forked while /proc is
// read may be missed. Callers that must leave nothing behind take the
// snapshot before signalling (KillTree does) and check again afterwards.
package proctree

import "fmt"

// Proc is one process as /proc/PID/stat describes it.
type Proc struct {
	Pid  int
	PPid int // the parent; 1 (or a subreaper) once the parent has died
	Pgid int // the process group
	// State is the state letter of proc(5): 'R' running, 'S' sleeping,
	// 'Z' zombie, ...
	State byte
}

// Zombie reports whether p has exited and waits to be reaped. A zombie
// holds nothing but its pid, so for every check here it counts as gone.
func (p Proc) Zombie() bool { return p.State == 'Z' }

// String describes p for test failures and logs.
func (p Proc) String() string {
	return fmt.Sprintf("pid %d (ppid %d, pgid %d, state %c)", p.Pid, p.PPid, p.Pgid, p.State)
}

// Pids returns the pids of procs, in order.
func Pids(procs []Proc) []int {
	out := make([]int, len(procs))
	for i, p := range procs {
		out[i] = p.Pid
	}
	return out
}
