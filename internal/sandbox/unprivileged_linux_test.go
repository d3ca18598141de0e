package sandbox

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnprivilegedDaemon reruns this package's confinement tests as an
// unprivileged user (nobody), the way most daemons run: there the user
// namespace is what makes the PID and network namespaces possible, and
// RLIMIT_NPROC in it (no writable cgroup) is the process limit. Run as
// root only, with setpriv (util-linux).
func TestUnprivilegedDaemon(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged: the other tests cover this path")
	}
	if os.Getenv("AGENTD_SANDBOX_UNPRIVILEGED_CHILD") != "" {
		t.Skip("the child run")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatal("setpriv (util-linux) is needed to run the tests unprivileged")
		}
		t.Skip("no setpriv")
	}
	// A copy of this binary, and a TMPDIR, that nobody can reach.
	dir, err := os.MkdirTemp("", "agentd-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	copyFile(t, self, bin)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run", "^(TestConfinedFilesystem|TestPIDNamespaceEndsBackgroundProcesses|TestNetworkNoneCannotReachLoopbackListener|TestLimitsStopForkBombAndMemoryHog)$", "-test.v", "-test.count=1")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + dir, "HOME=" + dir, "AGENTD_INTEROP=1", "AGENTD_SANDBOX_UNPRIVILEGED_CHILD=1"}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	for _, name := range []string{"TestConfinedFilesystem", "TestPIDNamespaceEndsBackgroundProcesses", "TestNetworkNoneCannotReachLoopbackListener", "TestLimitsStopForkBombAndMemoryHog"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as nobody:\n%s", name, out)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
