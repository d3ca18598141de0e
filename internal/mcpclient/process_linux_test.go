package mcpclient

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/proctree"
)

// pdeathsigParentEnv marks the test binary re-executed to play the
// daemon in TestStdioServerDiesWithTheDaemon.
const pdeathsigParentEnv = "AGENTD_MCPCLIENT_TEST_PDEATHSIG_PARENT"

// TestHelperPdeathsigParent is no test of its own: re-executed by
// TestStdioServerDiesWithTheDaemon, it plays the daemon. It starts,
// through startProcess, a stdio server that reads nothing (so never sees
// EOF) and ignores SIGTERM and SIGHUP, prints its pid and waits to be
// killed.
func TestHelperPdeathsigParent(t *testing.T) {
	if os.Getenv(pdeathsigParentEnv) != "1" {
		t.Skip("helper process of TestStdioServerDiesWithTheDaemon")
	}
	cfg := config.MCPServer{Name: "stubborn", Transport: config.MCPTransport{
		Type:    TransportStdio,
		Command: "/bin/sh",
		Args:    []string{"-c", `trap "" TERM HUP; while :; do sleep 1; done`},
	}}
	env := childEnv(nil, os.LookupEnv, "")
	p, err := startProcess(cfg, env, time.Second, slog.New(slog.DiscardHandler), func(s string) string { return s }, confinement{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("server %d\n", p.cmd.Process.Pid)
	// Killed before this returns; should the test die first, its end of
	// our stdin closes and this one ends too.
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// TestStdioServerDiesWithTheDaemon SIGKILLs a process that started a
// stubborn stdio server through startProcess, so that stop never runs,
// and checks that the kernel kills the server.
func TestStdioServerDiesWithTheDaemon(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^TestHelperPdeathsigParent$", "-test.count=1")
	parent.Env = append(os.Environ(), pdeathsigParentEnv+"=1")
	var stderr bytes.Buffer
	parent.Stderr = &stderr
	stdin, err := parent.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	parent.Stdout = outW
	err = parent.Start()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- parent.Wait() }()

	var server int
	t.Cleanup(func() {
		// Whatever the outcome, leave nothing running.
		if server > 0 {
			_ = syscall.Kill(-server, syscall.SIGKILL)
		}
		_ = parent.Process.Kill()
		stdin.Close()
		outR.Close()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			t.Error("the helper was not reaped")
		}
	})

	_ = outR.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(outR).ReadString('\n')
	if s, ok := strings.CutPrefix(strings.TrimSpace(line), "server "); ok {
		server, _ = strconv.Atoi(s)
	}
	if server <= 0 {
		t.Fatalf("the helper printed %q (%v); stderr: %s", line, err, stderr.String())
	}
	st, err := proctree.Stat(server)
	if err != nil || st.PPid != parent.Process.Pid || st.Pgid != server || st.Zombie() {
		t.Fatalf("server %v (%v): want a live child of the helper %d in a group of its own", st, err, parent.Process.Pid)
	}

	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := <-waited; !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the helper ended with %v, want killed by SIGKILL", err)
	}
	waited <- nil // for the cleanup

	// A zombie counts as gone: its new parent may be slow to reap it.
	deadline := time.Now().Add(5 * time.Second)
	for proctree.Alive(server) {
		if time.Now().After(deadline) {
			st, _ := proctree.Stat(server)
			t.Fatalf("the server outlived its SIGKILLed parent by 5 s: %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
