package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireMechanisms fails (under AGENTD_INTEROP=1, as in CI) or skips
// when this machine lacks what the test proves.
func requireMechanisms(t *testing.T) Mechanisms {
	t.Helper()
	m := Probe()
	var missing []string
	if m.LandlockABI < 6 {
		missing = append(missing, fmt.Sprintf("Landlock ABI >= 6 (have %d)", m.LandlockABI))
	}
	if !m.UserNS {
		missing = append(missing, "unprivileged user namespaces")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("sandbox mechanisms missing: %s; problems: %v", strings.Join(missing, ", "), m.Problems)
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return m
}

// run runs sh -c script confined by p and returns its combined output
// and exit code.
func run(t *testing.T, m Mechanisms, p Policy, dir, script string) (string, int) {
	t.Helper()
	c, err := Command(t.Context(), m, p, "/bin/sh", []string{"sh", "-c", script}, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c.Stdout, c.Stderr, c.Dir = &out, &out, dir
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	err = c.Wait()
	c.Done()
	code := 0
	if err != nil {
		code = c.ProcessState.ExitCode()
		if code == 0 {
			code = -1
		}
	}
	return out.String(), code
}

func TestConfinedFilesystem(t *testing.T) {
	m := requireMechanisms(t)
	home := t.TempDir()
	secret := filepath.Join(home, "agentd.db")
	if err := os.WriteFile(secret, []byte("conversations"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	outside := t.TempDir()
	p := Policy{Write: []string{ws}, Network: NetworkNone, Deny: []string{home}}

	tests := []struct {
		name, script string
		wantCode     int
		wantOut      string
	}{
		{"system readable", "cat /etc/hostname >/dev/null && ls /usr/bin >/dev/null && echo ok", 0, "ok"},
		{"workspace writable", "echo hi > w.txt && cat w.txt", 0, "hi"},
		{"home unreadable", "cat " + secret, 1, "Permission denied"},
		{"home unlistable", "ls " + home, 2, "Permission denied"},
		{"outside unwritable", "echo x > " + filepath.Join(outside, "x"), 2, "Permission denied"},
		{"shadow unreadable", "cat /etc/shadow", 1, "Permission denied"},
		{"daemon environ unreadable", "cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ", 1, "Permission denied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code := run(t, m, p, ws, tc.script)
			if code != tc.wantCode || !strings.Contains(out, tc.wantOut) {
				t.Errorf("code %d output %q; want code %d containing %q", code, out, tc.wantCode, tc.wantOut)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a file was written outside the workspace")
	}
}

func TestDenyRefusesOverlappingGrant(t *testing.T) {
	tests := []struct {
		name    string
		p       Policy
		wantErr string
	}{
		{"root", Policy{Read: []string{"/"}, Network: NetworkAny, Deny: []string{"/var/lib/agentd"}}, `read path "/"`},
		{"inside", Policy{Write: []string{"/var/lib/agentd/oauth"}, Network: NetworkAny, Deny: []string{"/var/lib/agentd"}}, "write path"},
		{"relative", Policy{Read: []string{"data"}, Network: NetworkAny}, "not absolute"},
		{"bad network", Policy{Network: "lan"}, `network "lan"`},
		{"ports without any", Policy{Network: NetworkNone, ConnectTCP: []uint16{443}}, "connect_tcp"},
		{"sibling ok", Policy{Read: []string{"/var/lib/agentd2"}, Network: NetworkAny, Deny: []string{"/var/lib/agentd"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Check()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Check = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestPIDNamespaceEndsBackgroundProcesses(t *testing.T) {
	m := requireMechanisms(t)
	ws := t.TempDir()
	p := Policy{Write: []string{ws}, Network: NetworkNone}
	// The background job writes its pid as the host sees it: none, since
	// it cannot see the host's pid numbering. Record the namespace pid
	// and look for the process by its unique argument instead.
	marker := fmt.Sprintf("%d", time.Now().UnixNano()%100000+100000)
	out, code := run(t, m, p, ws, "setsid sleep "+marker+" </dev/null >/dev/null 2>&1 & echo $$")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if strings.TrimSpace(out) != "1" {
		t.Errorf("the shell's pid in its namespace = %q, want 1", strings.TrimSpace(out))
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		if !sleeperAlive(t, marker) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("setsid sleep %s still running 2s after the command ended", marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sleeperAlive looks through /proc for a live "sleep marker".
func sleeperAlive(t *testing.T, marker string) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Equal(cmdline, []byte("sleep\x00"+marker+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		return true
	}
	return false
}

func TestNetworkNoneCannotReachLoopbackListener(t *testing.T) {
	m := requireMechanisms(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	accepted := make(chan struct{}, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	// bash's /dev/tcp is not in dash; use the listener's port with a
	// program every system has: the test binary's own shell has none,
	// so probe with perl, which Debian's base system ships.
	script := fmt.Sprintf(`perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr=>"127.0.0.1:%d", Timeout=>2) or die "connect: $!\n"; print "connected\n"'`, port)
	ws := t.TempDir()
	for _, tc := range []struct {
		net  Network
		want string
	}{
		{NetworkNone, "connect:"},
		{NetworkLoopback, "connect:"},
		{NetworkAny, "connected"},
	} {
		t.Run(string(tc.net), func(t *testing.T) {
			out, _ := run(t, m, Policy{Write: []string{ws}, Network: tc.net}, ws, script)
			if !strings.Contains(out, tc.want) {
				t.Errorf("output %q, want %q", out, tc.want)
			}
		})
	}
	select {
	case <-accepted:
	case <-time.After(2 * time.Second):
		t.Error("the unconfined (any) connection never arrived")
	}
}

func TestLimitsStopForkBombAndMemoryHog(t *testing.T) {
	m := requireMechanisms(t)
	if m.Root && m.PidsCgroup == "" {
		msg := "root without a writable pids cgroup: no process limit binds (docs/security.md, Limits)"
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ws := t.TempDir()
	p := Policy{Write: []string{ws}, Network: NetworkNone, MaxProcs: 32, MemoryBytes: 256 << 20, CPUSeconds: 10}
	start := time.Now()
	out, code := run(t, m, p, ws, `bomb() { bomb | bomb & }; bomb; sleep 1; echo survived`)
	if time.Since(start) > 20*time.Second {
		t.Errorf("fork bomb took %s", time.Since(start))
	}
	if !strings.Contains(out, "fork") && !strings.Contains(out, "Resource temporarily unavailable") && !strings.Contains(out, "Cannot fork") {
		t.Errorf("fork bomb output shows no refused fork (code %d): %.300q", code, out)
	}
	out, code = run(t, m, p, ws, `awk 'BEGIN { s = "xxxxxxxxxxxxxxxx"; while (1) s = s s }'`)
	if code == 0 {
		t.Errorf("memory hog exited 0: %q", out)
	}
}

// TestConnectTCPAllowsOnlyListedPorts: with network "any" and a port
// list, Landlock's TCP rules let the program reach the listed port and
// refuse every other one.
func TestConnectTCPAllowsOnlyListedPorts(t *testing.T) {
	m := requireMechanisms(t)
	listen := func() int {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return ln.Addr().(*net.TCPAddr).Port
	}
	allowed, other := listen(), listen()
	connect := func(port int) string {
		return fmt.Sprintf(`perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr=>"127.0.0.1:%d", Timeout=>2) or die "connect %d: $!\n"; print "connected %d\n"'`, port, port, port)
	}
	ws := t.TempDir()
	p := Policy{Write: []string{ws}, Network: NetworkAny, ConnectTCP: []uint16{uint16(allowed)}}
	out, _ := run(t, m, p, ws, connect(allowed)+"; "+connect(other))
	if want := fmt.Sprintf("connected %d", allowed); !strings.Contains(out, want) {
		t.Errorf("output %q, want %q", out, want)
	}
	if want := fmt.Sprintf("connect %d: Permission denied", other); !strings.Contains(out, want) {
		t.Errorf("output %q, want %q", out, want)
	}
}

// TestRulesetBuildsAtEveryABI: the ruleset cut to each ABI version up to
// the kernel's is one the kernel accepts (the attribute's size and the
// rights follow the version), and ABI 0 restricts nothing.
func TestRulesetBuildsAtEveryABI(t *testing.T) {
	m := requireMechanisms(t)
	ws := t.TempDir()
	r := landlockRules(spec{Policy: Policy{Write: []string{ws}, Read: []string{"/nonexistent/x"}, Network: NetworkAny, ConnectTCP: []uint16{443}}})
	for abi := 0; abi <= m.LandlockABI; abi++ {
		fd, flags, err := r.build(abi)
		if err != nil {
			t.Fatalf("ABI %d: %v", abi, err)
		}
		if abi == 0 {
			if fd != -1 {
				t.Errorf("ABI 0: fd %d, want -1 (nothing to restrict)", fd)
			}
			continue
		}
		if fd < 0 {
			t.Errorf("ABI %d: no ruleset", abi)
			continue
		}
		closeFD(fd)
		if logs := flags != 0; logs != (abi >= 7) {
			t.Errorf("ABI %d: restrict flags %#x", abi, flags)
		}
	}
}

// TestExecUnderTightLimits: a memory limit below what the trampoline (a
// Go process) has mapped itself still runs the program: the limit is for
// the program, and nothing between setting it and exec allocates. And the
// program gets the usual soft RLIMIT_NOFILE, not the one Go raised for
// itself.
func TestExecUnderTightLimits(t *testing.T) {
	m := requireMechanisms(t)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	const limit = 4 << 20
	var vmData int
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmData:"); ok {
			vmData, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	if vmData*1024 <= limit {
		t.Fatalf("this process maps %d kB of data, not more than the %d kB limit the test needs to be below", vmData, limit>>10)
	}
	p := Policy{Network: NetworkNone, MaxProcs: 32, MemoryBytes: limit}
	for i := range 20 {
		if out, code := run(t, m, p, t.TempDir(), "echo ok"); code != 0 || out != "ok\n" {
			t.Fatalf("run %d under a %d MiB limit: exit %d: %q", i, limit>>20, code, out)
		}
	}

	// A daemon started with a soft limit below the hard one: Go raises
	// its own (and the trampoline's); the program gets at most 1024 (see prepareExec).
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	if saved.Max < 2048 {
		t.Skipf("hard RLIMIT_NOFILE %d: too low to lower the soft one below it", saved.Max)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 512, Max: saved.Max}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved) })
	out, code := run(t, m, Policy{Network: NetworkNone}, t.TempDir(), "ulimit -n; ulimit -Hn")
	var soft, hard uint64
	if _, err := fmt.Sscan(out, &soft, &hard); err != nil || code != 0 || soft > 1024 || hard != saved.Max {
		t.Fatalf("the program's RLIMIT_NOFILE soft and hard: exit %d: %q, want at most 1024 and %d", code, out, saved.Max)
	}
}
