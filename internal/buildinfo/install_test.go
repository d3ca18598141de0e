package buildinfo

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// TestGoInstallFromModuleProxy proves that a user can install agentd
// with `go install github.com/agentd/agentd/cmd/agentd@VERSION`: the
// committed tree (HEAD) is made into a module zip as a proxy would serve
// a tag, laid out in a file:// GOPROXY directory, installed from it into
// an empty module cache, and the installed binary must report the
// version. cmd/go refuses to install a module whose go.mod has a
// replace directive, so this fails if one comes back.
//
// Dependencies come from the module cache's download directory, which
// is a proxy too: nothing is fetched from the network. The install uses
// that module cache too, so the dependencies' packages come from the
// build cache (go vet and go build compile them with the same flags) and
// only agentd's own are compiled. Each run installs a version of its own
// (a pre-release of Base numbered by the clock), removed from the module
// cache afterwards, so no run can pick up an earlier run's tree.
func TestGoInstallFromModuleProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agentd from a module zip")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil { // a directory, or a worktree's file
		t.Skip("not a git checkout: the module zip is made from the committed tree")
	}
	const path = "github.com/agentd/agentd"
	version := "v" + Base + "-installtest." + strconv.FormatInt(time.Now().UnixNano(), 10)
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	at := filepath.Join(proxy, path, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	// The committed tree, as a tag would have it (git archive: a
	// worktree's .git is a file, which zip.CreateFromVCS does not take).
	src := filepath.Join(tmp, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", "-c", `git -C "$1" archive HEAD | tar -x -C "$2"`, "sh", root, src).CombinedOutput(); err != nil {
		t.Fatalf("git archive HEAD: %v\n%s", err, out)
	}
	var zbuf bytes.Buffer
	if err := zip.CreateFromDir(&zbuf, module.Version{Path: path, Version: version}, src); err != nil {
		t.Fatalf("module zip of HEAD: %v", err)
	}
	gomod, err := exec.Command("git", "-C", root, "show", "HEAD:go.mod").Output()
	if err != nil {
		t.Fatalf("go.mod at HEAD: %v", err)
	}
	info, _ := json.Marshal(map[string]string{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
		version + ".zip":  zbuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	modcache := strings.TrimSpace(string(out))
	deps := filepath.Join(modcache, "cache", "download")
	gobin := filepath.Join(tmp, "bin")
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(deps),
		"GOBIN="+gobin,
		// agentd's own version has no checksum anywhere, and the
		// dependencies come from a cache that verified them when it
		// downloaded them; CI cannot reach the checksum database.
		"GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
	)
	t.Cleanup(func() {
		// This version's copies in the module cache (read-only, as the
		// go command leaves them).
		for _, p := range []string{filepath.Join(modcache, path+"@"+version), filepath.Join(deps, path, "@v")} {
			_ = filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					_ = os.Chmod(q, 0o755)
				}
				return nil
			})
		}
		_ = os.RemoveAll(filepath.Join(modcache, path+"@"+version))
		matches, _ := filepath.Glob(filepath.Join(deps, path, "@v", version+".*"))
		for _, m := range append(matches, filepath.Join(deps, path, "@v", "list")) {
			_ = os.Remove(m)
		}
	})
	install := exec.Command(goBin, "install", path+"/cmd/agentd@"+version)
	install.Env, install.Dir = env, tmp
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/agentd@%s: %v\n%s", path, version, err, out)
	}
	exe := filepath.Join(gobin, "agentd")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	got, err := exec.Command(exe, "--version").Output()
	if err != nil {
		t.Fatalf("agentd --version: %v", err)
	}
	if !strings.HasPrefix(string(got), "agentd "+version+"\n") || !strings.Contains(string(got), runtime.Version()) {
		t.Fatalf("the installed agentd says %q, want version %s built with %s", got, version, runtime.Version())
	}
}
