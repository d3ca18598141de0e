package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

var (
	probeOnce sync.Once
	probed    Mechanisms
)

// Probe reports what this kernel and process can enforce. It is run
// once and remembered: it starts one trampoline to learn whether user
// namespaces really work (sysctls, AppArmor and seccomp policies can
// each refuse them, so reading one knob would not do).
func Probe() Mechanisms {
	probeOnce.Do(func() { probed = probe() })
	return probed
}

func probe() Mechanisms {
	m := Mechanisms{OS: "linux", Root: os.Geteuid() == 0}
	if v, err := landlockABI(); err == nil {
		m.LandlockABI = v
	} else {
		m.Problems = append(m.Problems, fmt.Sprintf("Landlock is not available: %v (kernel < 5.13, or \"landlock\" missing from the lsm= boot parameter)", err))
	}
	if err := probeUserNS(); err != nil {
		m.Problems = append(m.Problems, fmt.Sprintf("unprivileged user namespaces are refused: %v (kernel.unprivileged_userns_clone, user.max_user_namespaces or an AppArmor/seccomp policy)", err))
	} else {
		m.UserNS = true
	}
	if dir, err := pidsCgroupBase(); err == nil {
		m.PidsCgroup = dir
	} else if m.Root {
		m.Problems = append(m.Problems, fmt.Sprintf("no writable pids cgroup: %v", err))
	}
	return m
}

// probeUserNS starts the trampoline in probe mode inside the namespaces
// a sandbox uses.
func probeUserNS() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Args = []string{"agentd-sandbox-probe"}
	cmd.Env = []string{markerEnv + "=probe"}
	cmd.SysProcAttr = nsAttr(true)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// nsAttr is the SysProcAttr of a trampoline in its own namespaces: the
// daemon's uid and gid become root inside, which gives the trampoline
// the capabilities it needs in its own namespaces (to bring a loopback
// up) until it drops them all before exec.
func nsAttr(netns bool) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID)
	if netns {
		flags |= syscall.CLONE_NEWNET
	}
	return &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
}

// pidsCgroupBase finds the daemon's own pids cgroup directory when it
// can make children in it: cgroup v1's pids hierarchy, or a cgroup v2
// one whose subtree has the pids controller enabled (delegated).
func pidsCgroupBase() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	var candidates []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case hasField(parts[1], "pids"):
			candidates = append(candidates, filepath.Join("/sys/fs/cgroup/pids", parts[2]))
		case parts[0] == "0" && parts[1] == "":
			for _, mnt := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
				dir := filepath.Join(mnt, parts[2])
				b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
				if err == nil && hasField(strings.ReplaceAll(string(b), " ", ","), "pids") {
					candidates = append(candidates, dir)
				}
			}
		}
	}
	for _, dir := range candidates {
		test := filepath.Join(dir, fmt.Sprintf("agentd-probe-%d", os.Getpid()))
		if err := os.Mkdir(test, 0o755); err != nil {
			continue
		}
		_, statErr := os.Stat(filepath.Join(test, "pids.max"))
		_ = os.Remove(test)
		if statErr == nil {
			return dir, nil
		}
	}
	if len(candidates) == 0 {
		return "", fmt.Errorf("no pids controller in /proc/self/cgroup")
	}
	return "", fmt.Errorf("cannot create a child cgroup under %s", strings.Join(candidates, ", "))
}

func hasField(list, name string) bool {
	for _, f := range strings.Split(strings.TrimSpace(list), ",") {
		if f == name {
			return true
		}
	}
	return false
}
