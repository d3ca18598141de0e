package proctree

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Proc
		ok   bool
	}{
		{"plain", "1234 (sleep) S 1 1234 1234 0 -1 4194560 100\n", Proc{Pid: 1234, PPid: 1, Pgid: 1234, State: 'S'}, true},
		{"name with spaces and parentheses", "42 (a) b (c) ) Z 7 8 9", Proc{Pid: 42, PPid: 7, Pgid: 8, State: 'Z'}, true},
		{"name with a newline", "5 (x\ny) R 3 4 5", Proc{Pid: 5, PPid: 3, Pgid: 4, State: 'R'}, true},
		{"empty name", "6 () D 0 0", Proc{Pid: 6, PPid: 0, Pgid: 0, State: 'D'}, true},
		{"empty", "", Proc{}, false},
		{"no parentheses", "9 sleep S 1 2", Proc{}, false},
		{"no closing parenthesis", "9 (sleep S 1 2", Proc{}, false},
		{"no pid", "(x) S 1 2", Proc{}, false},
		{"pid not a number", "x9 (x) S 1 2", Proc{}, false},
		{"too few fields", "9 (x) S 1", Proc{}, false},
		{"ppid not a number", "9 (x) S a 2", Proc{}, false},
		{"pgid not a number", "9 (x) S 1 b", Proc{}, false},
		{"state of two letters", "9 (x) SS 1 2", Proc{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.line))
			if (err == nil) != tc.ok {
				t.Fatalf("parseStat(%q) error %v, want ok %v", tc.line, err, tc.ok)
			}
			if got != tc.want {
				t.Errorf("parseStat(%q) = %v, want %v", tc.line, got, tc.want)
			}
		})
	}
}

// FuzzParseStat checks that no input panics the parser and that a line
// built the way the kernel builds it, around any executable name, gives
// back its fields.
func FuzzParseStat(f *testing.F) {
	f.Add("sleep", byte('S'), uint32(1234), uint32(1), uint32(1234), []byte("1 (init) S 0 1 1"))
	f.Add("a) b (c", byte('Z'), uint32(7), uint32(8), uint32(9), []byte("x (y"))
	f.Add(") R 1 2 3", byte('R'), uint32(1), uint32(0), uint32(0), []byte(""))
	f.Fuzz(func(t *testing.T, comm string, state byte, pid, ppid, pgid uint32, raw []byte) {
		_, _ = parseStat(raw)

		if strings.ContainsRune(comm, 0) {
			return // the kernel never reports a NUL in a name
		}
		state = 'A' + state%26
		line := fmt.Sprintf("%d (%s) %c %d %d 0 -1 4194560 100 0\n", pid, comm, state, ppid, pgid)
		got, err := parseStat([]byte(line))
		want := Proc{Pid: int(pid), PPid: int(ppid), Pgid: int(pgid), State: state}
		if err != nil || got != want {
			t.Fatalf("parseStat(%q) = %v, %v; want %v", line, got, err, want)
		}
	})
}

func TestStat(t *testing.T) {
	t.Run("self", func(t *testing.T) {
		p, err := Stat(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		want := Proc{Pid: os.Getpid(), PPid: os.Getppid(), Pgid: syscall.Getpgrp(), State: p.State}
		if p != want || p.Zombie() {
			t.Errorf("Stat(self) = %v, want %v, not a zombie", p, want)
		}
	})
	t.Run("reaped process", func(t *testing.T) {
		cmd := exec.Command("/bin/sh", "-c", "exit 0")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		if _, err := Stat(pid); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Stat(%d) of a reaped process: error %v, want os.ErrNotExist", pid, err)
		}
		if Alive(pid) {
			t.Errorf("Alive(%d) of a reaped process", pid)
		}
	})
}

// tree is a shell started in a process group of its own, running script,
// which reports the pids of what it starts as "label pid" lines.
type tree struct {
	cmd   *exec.Cmd
	root  int
	pids  map[string]int
	stdin *os.File // closing it ends a script waiting in `read`
	done  chan struct{}
}

// startTree starts script and waits until it has reported every label.
// Whatever the test leaves running is killed at cleanup, without the code
// under test.
func startTree(t *testing.T, script string, labels ...string) *tree {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{cmd: cmd, root: cmd.Process.Pid, pids: map[string]int{}, stdin: inW, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(tr.done)
	}()
	t.Cleanup(func() {
		for _, pid := range tr.pids {
			if p, err := Stat(pid); err == nil && p.Pgid == pid {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = syscall.Kill(-tr.root, syscall.SIGKILL)
		<-tr.done
		inW.Close()
		outR.Close()
	})

	_ = outR.SetReadDeadline(time.Now().Add(10 * time.Second))
	sc := bufio.NewScanner(outR)
	for len(tr.pids) < len(labels) && sc.Scan() {
		label, pid, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || !slices.Contains(labels, label) {
			t.Fatalf("unexpected output %q", sc.Text())
		}
		tr.pids[label] = n
	}
	if len(tr.pids) < len(labels) {
		t.Fatalf("the script reported %v, want %v: %v", tr.pids, labels, sc.Err())
	}
	return tr
}

// The tree of most tests: a child in the root's group, and a shell that
// moved to a session (and group) of its own with a child of its own.
// trap is prepended to both shells. The root exits when its stdin is
// closed.
func treeScript(trap string) string {
	return trap + `
sleep 60 & echo child $!
setsid sh -c '` + trap + ` sleep 60 & echo grandchild $!; wait' & echo escaped $!
read x`
}

// waitGone waits until none of pids is alive and returns those that
// still are when the timeout passes.
func waitGone(pids []int, timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		for _, pid := range pids {
			if Alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDescendantsAndGroup(t *testing.T) {
	tr := startTree(t, treeScript(""), "child", "escaped", "grandchild")
	root, child, escaped, grand := tr.root, tr.pids["child"], tr.pids["escaped"], tr.pids["grandchild"]

	desc := Descendants(root)
	want := []Proc{
		{Pid: child, PPid: root, Pgid: root},
		{Pid: escaped, PPid: root, Pgid: escaped},
		{Pid: grand, PPid: escaped, Pgid: escaped},
	}
	if len(desc) != len(want) {
		t.Fatalf("Descendants(root) = %v, want %v", desc, want)
	}
	// Children come before grandchildren; the order among siblings is
	// /proc's.
	if desc[2].Pid != grand {
		t.Errorf("Descendants(root) = %v: the grandchild %d should come last", desc, grand)
	}
	for _, w := range want {
		i := slices.IndexFunc(desc, func(p Proc) bool { return p.Pid == w.Pid })
		if i < 0 || desc[i].PPid != w.PPid || desc[i].Pgid != w.Pgid || desc[i].Zombie() {
			t.Errorf("Descendants(root) = %v: want a live %v", desc, w)
		}
	}
	if d := Descendants(child); len(d) != 0 {
		t.Errorf("Descendants(child) = %v, want none", d)
	}
	if d := Descendants(escaped); !slices.Equal(Pids(d), []int{grand}) {
		t.Errorf("Descendants(escaped) = %v, want only %d", d, grand)
	}

	groups := []struct {
		name string
		pgid int
		want []int
	}{
		{"root's group", root, []int{root, child}},
		{"escaped group", escaped, []int{escaped, grand}},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			got := Pids(Group(g.pgid))
			slices.Sort(got)
			slices.Sort(g.want)
			if !slices.Equal(got, g.want) {
				t.Errorf("Group(%d) = %v, want %v", g.pgid, got, g.want)
			}
		})
	}
}

func TestZombiesCountAsGone(t *testing.T) {
	// sh starts a child that exits at once, then becomes a sleep, which
	// never reaps it.
	tr := startTree(t, `sleep 0 & echo zombie $!; exec sleep 60`, "zombie")
	z := tr.pids["zombie"]
	deadline := time.Now().Add(5 * time.Second)
	for {
		if p, err := Stat(z); err == nil && p.Zombie() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not become a zombie", z)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if Alive(z) {
		t.Errorf("Alive(%d) of a zombie", z)
	}
	if !Alive(tr.root) {
		t.Errorf("Alive(%d) of the sleeping parent is false", tr.root)
	}
	if d := Descendants(tr.root); len(d) != 0 {
		t.Errorf("Descendants = %v, want none (the zombie is not live)", d)
	}
	if g := Group(tr.root); !slices.Equal(Pids(g), []int{tr.root}) {
		t.Errorf("Group = %v, want only the parent", g)
	}
	if !slices.ContainsFunc(All(), func(p Proc) bool { return p.Pid == z && p.Zombie() && p.PPid == tr.root }) {
		t.Errorf("All() lacks the zombie %d", z)
	}
}

func TestTerminateAndKillTree(t *testing.T) {
	t.Run("terminate reaches every group", func(t *testing.T) {
		tr := startTree(t, treeScript(""), "child", "escaped", "grandchild")
		all := []int{tr.root, tr.pids["child"], tr.pids["escaped"], tr.pids["grandchild"]}
		Terminate(tr.root, Descendants(tr.root))
		if left := waitGone(all, 5*time.Second); len(left) > 0 {
			t.Fatalf("alive after Terminate: %v", left)
		}
	})

	t.Run("kill tree reaches what ignores SIGTERM", func(t *testing.T) {
		tr := startTree(t, treeScript(`trap "" TERM;`), "child", "escaped", "grandchild")
		all := []int{tr.root, tr.pids["child"], tr.pids["escaped"], tr.pids["grandchild"]}
		desc := Descendants(tr.root)
		Terminate(tr.root, desc)
		// Terminate must not have killed: the tree ignores SIGTERM.
		select {
		case <-tr.done:
			t.Fatal("the root ended on SIGTERM, which it ignores")
		case <-time.After(100 * time.Millisecond):
		}
		if left := waitGone(all, 0); len(left) != len(all) {
			t.Fatalf("after Terminate only %v of %v are alive, want all", left, all)
		}
		KillTree(tr.root, desc)
		if left := waitGone(all, 5*time.Second); len(left) > 0 {
			t.Fatalf("alive after KillTree: %v", left)
		}
	})

	t.Run("kill tree of a dead leader", func(t *testing.T) {
		tr := startTree(t, treeScript(`trap "" TERM;`), "child", "escaped", "grandchild")
		known := Descendants(tr.root)
		// The leader exits: its child stays in its group, the escaped
		// shell is orphaned and can be found only through known.
		tr.stdin.Close()
		select {
		case <-tr.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the root did not exit")
		}
		orphans := []int{tr.pids["child"], tr.pids["escaped"], tr.pids["grandchild"]}
		if left := waitGone(orphans, 0); len(left) != len(orphans) {
			t.Fatalf("only %v of %v outlived the leader, want all", left, orphans)
		}
		KillTree(tr.root, known)
		if left := waitGone(orphans, 5*time.Second); len(left) > 0 {
			t.Fatalf("alive after KillTree: %v", left)
		}
	})
}
