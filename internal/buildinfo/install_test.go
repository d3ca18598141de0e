package buildinfo

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
// is a proxy too: nothing is fetched from the network. (Run once after
// `go mod download` so that the cache holds every dependency.)
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
	const path, version = "github.com/agentd/agentd", "v0.1.0"
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
	deps := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	modcache, gobin := filepath.Join(tmp, "modcache"), filepath.Join(tmp, "bin")
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(deps),
		"GOMODCACHE="+modcache, "GOBIN="+gobin,
		// agentd's own version has no checksum anywhere, and the
		// dependencies come from a cache that verified them when it
		// downloaded them; CI cannot reach the checksum database.
		"GOSUMDB=off", "GOFLAGS=-mod=mod -trimpath",
		"GOTOOLCHAIN=local",
	)
	t.Cleanup(func() {
		// The module cache is read-only: go clean empties it.
		c := exec.Command(goBin, "clean", "-modcache")
		c.Env = env
		_ = c.Run()
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
