package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/sandbox"
)

// canary is set in this process's environment, standing for the
// daemon's secrets: no confined command may ever print it.
const canaryName, canaryValue = "AGENTD_TEST_CANARY", "canary-7f3a9c1e"

// sandboxed returns shell options confined as the daemon confines them,
// with AGENTD_HOME (holding agentd.db) denied. It fails under
// AGENTD_INTEROP=1 (CI) when a mechanism is missing, else skips.
func sandboxed(t *testing.T, pol sandbox.Policy) (ShellOptions, string, *atomic.Int64) {
	t.Helper()
	m := sandbox.Probe()
	if m.LandlockABI < 6 || !m.UserNS || (m.Root && m.PidsCgroup == "") {
		msg := fmt.Sprintf("sandbox mechanisms missing here: %v", m.Problems)
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Setenv(canaryName, canaryValue)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "agentd.db"), []byte("every principal's conversations"), 0o600); err != nil {
		t.Fatal(err)
	}
	refusals := &atomic.Int64{}
	l := &sandbox.Launcher{Mechanisms: m, Refused: func(context.Context, string, string) { refusals.Add(1) }}
	pol.Deny = append(pol.Deny, home)
	if pol.Network == "" {
		pol.Network = sandbox.NetworkNone
	}
	return ShellOptions{Timeout: 15 * time.Second, Sandbox: l, Policy: func(string, string) sandbox.Policy { return pol }}, home, refusals
}

func TestShellSandboxKeepsDaemonSecrets(t *testing.T) {
	opts, home, refusals := sandboxed(t, sandbox.Policy{MaxProcs: 64, MemoryBytes: 512 << 20})
	ws := t.TempDir()
	outside := t.TempDir()
	db := filepath.Join(home, "agentd.db")
	pid := strconv.Itoa(os.Getpid())
	tests := []struct {
		name, command string
		mustNot       []string
		must          []string
	}{
		{"environ of the parent", `tr '\0' '\n' < /proc/$PPID/environ; echo "ppid=$PPID"`, []string{canaryValue}, []string{"ppid=0"}},
		{"environ of the daemon by pid", "tr '\\0' '\\n' < /proc/" + pid + "/environ", []string{canaryValue}, []string{"Permission denied"}},
		{"mem and fds of the daemon", "head -c 16 /proc/" + pid + "/mem; ls -l /proc/" + pid + "/fd", []string{"agentd.db"}, []string{"Permission denied"}},
		{"own environment", "env", []string{canaryValue}, []string{"HOME=" + ws}},
		{"the store", "cat " + db, []string{"conversations"}, []string{"permission denied by the sandbox: read " + db}},
		{"a write outside", "echo x > " + filepath.Join(outside, "x"), nil, []string{"permission denied by the sandbox: write " + filepath.Join(outside, "x")}},
		{"the workspace", "echo inside > f && cat f", nil, []string{"inside\n[exit code 0]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := shellCall(t.Context(), t, opts, ws, tc.command)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.mustNot {
				if strings.Contains(res.Content, s) {
					t.Errorf("output holds %q:\n%s", s, res.Content)
				}
			}
			for _, s := range tc.must {
				if !strings.Contains(res.Content, s) {
					t.Errorf("output lacks %q:\n%s", s, res.Content)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a file was written outside the workspace")
	}
	if refusals.Load() < 2 {
		t.Errorf("refusals counted = %d, want at least the store read and the outside write", refusals.Load())
	}
}

func TestShellSandboxEndsEscapedBackgroundJobs(t *testing.T) {
	opts, _, _ := sandboxed(t, sandbox.Policy{MaxProcs: 64})
	ws := t.TempDir()
	marker := strconv.Itoa(200000 + int(time.Now().UnixNano()%100000))
	res, _, err := shellCall(t.Context(), t, opts, ws, "setsid sleep "+marker+" >/dev/null 2>&1 & (nohup sleep "+marker+" >/dev/null 2>&1 &) ; echo started")
	if err != nil || !strings.Contains(res.Content, "started") {
		t.Fatalf("call: %v %q", err, res.Content)
	}
	deadline := time.Now().Add(2 * time.Second)
	for sleepers(t, marker) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d background sleep %s still running 2s after the call ended", sleepers(t, marker), marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sleepers counts live "sleep marker" processes on the host.
func sleepers(t *testing.T, marker string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || string(cmdline) != "sleep\x00"+marker+"\x00" {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		n++
	}
	return n
}

func TestShellSandboxStopsForkBombAndMemoryHog(t *testing.T) {
	opts, _, _ := sandboxed(t, sandbox.Policy{MaxProcs: 48, MemoryBytes: 256 << 20, CPUSeconds: 20})
	ws := t.TempDir()
	start := time.Now()
	res, _, err := shellCall(t.Context(), t, opts, ws, `bomb() { bomb | bomb & }; bomb; sleep 2; echo bombed`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "fork") {
		t.Errorf("fork bomb: no refused fork in %.300q", res.Content)
	}
	res, out, err := shellCall(t.Context(), t, opts, ws, `awk 'BEGIN { s = "xxxxxxxxxxxxxxxx"; while (1) s = s s }'`)
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode == 0 || out.TimedOut {
		t.Errorf("memory hog: exit %d timed out %v: %.300q", out.ExitCode, out.TimedOut, res.Content)
	}
	// The tool (and this process, standing for the daemon) still serve.
	res, _, err = shellCall(t.Context(), t, opts, ws, "echo alive")
	if err != nil || !strings.Contains(res.Content, "alive\n[exit code 0]") {
		t.Fatalf("after the bomb: %v %q", err, res.Content)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestShellSandboxRequiredRefusesWhatCannotBeEnforced(t *testing.T) {
	var refused atomic.Int64
	l := &sandbox.Launcher{Mechanisms: sandbox.Mechanisms{OS: "linux"}, Refused: func(context.Context, string, string) { refused.Add(1) }}
	opts := ShellOptions{Sandbox: l}
	res, _, err := shellCall(t.Context(), t, opts, t.TempDir(), "echo should-not-run")
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || strings.Contains(res.Content, "should-not-run") || !strings.Contains(res.Content, "cannot enforce filesystem allowlist") {
		t.Errorf("result %+v", res)
	}
	if refused.Load() != 1 {
		t.Errorf("refusals = %d, want 1", refused.Load())
	}
}
