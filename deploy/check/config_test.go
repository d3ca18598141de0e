package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestShippedConfigsLoad: the config.toml the chart renders by default,
// and the one in deploy/kubernetes/configmap.yaml, pass agentd's own
// validation (`agentd doctor`, built from this repository): a key the
// daemon does not know, or a wrong type, would stop every replica at
// start.
func TestShippedConfigsLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agentd")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "agentd")
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goBin, "build", "-C", "../..", "-o", bin, "./cmd/agentd").CombinedOutput(); err != nil {
		t.Fatalf("build agentd: %v\n%s", err, out)
	}

	configs := map[string]string{}
	cm := get[corev1.ConfigMap](t, objects(t, secretsSet), "v1/ConfigMap agentd")
	configs["the chart's"] = cm.Data["config.toml"]
	data, err := os.ReadFile("../kubernetes/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range decodeAll(t, "configmap.yaml", data) {
		if c, ok := o.v.(*corev1.ConfigMap); ok {
			configs["deploy/kubernetes's"] = c.Data["config.toml"]
		}
	}
	if len(configs) != 2 {
		t.Fatalf("found %d configs, want 2", len(configs))
	}
	for name, toml := range configs {
		path := filepath.Join(dir, strings.ReplaceAll(name, "/", "_")+".toml")
		if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--config", path, "doctor")
		// Only what doctor needs: a home of its own, no keys (the store
		// check then fails, naming the variable; the config check is
		// what this test reads).
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "AGENTD_HOME=" + filepath.Join(dir, "home")}
		out, _ := cmd.CombinedOutput()
		first, _, _ := strings.Cut(string(out), "\n")
		if !strings.HasPrefix(first, "[ok  ] config") {
			t.Errorf("%s config.toml does not load: %s\n%s", name, first, toml)
		}
	}
}
