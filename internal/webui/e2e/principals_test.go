package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/daemon"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// ciKey is ci-bot's configured key in TestPrincipalsInBrowser.
const ciKey = "ci-bot-configured-key-0123456789"

// TestPrincipalsInBrowser runs interop/principals-e2e.mjs against a daemon
// with the operator's key and one ordinary principal: an admin mints a
// key for it in the Principals page, a client uses the key on /api, the
// admin revokes it (an in-page confirmation) and the key is refused; the
// audit page filters by a tool pattern and by principal.
func TestPrincipalsInBrowser(t *testing.T) {
	node, dir := peers(t)
	fake := llmtest.NewOpenAIServer(t, model)
	home := t.TempDir()
	toml := fmt.Sprintf(`listen = "127.0.0.1:0"
api_key = %q

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "assistant"
provider = "fake"
model = "scripted-model"
tools = ["agent_list"]

[[principals]]
name = "ci-bot"
key_sha256 = "%x"
agents = ["assistant"]
tools = ["agent_list"]
`, dashKey, fake.URL, sha256.Sum256([]byte(ciKey)))
	file := filepath.Join(home, "config.toml")
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: file, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, cfg, daemon.Options{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	l, err := d.Listen("")
	if err != nil {
		cancel()
		d.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		d.Close()
	})

	shots := os.Getenv("AGENTD_DASHBOARD_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if shots, err = filepath.Abs(shots); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithTimeout(context.Background(), 3*time.Minute)
	defer stop()
	cmd := exec.CommandContext(runCtx, node, filepath.Join(dir, "principals-e2e.mjs"))
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"AGENTD_URL=http://" + l.Addr().String(), "AGENTD_KEY=" + dashKey, "AGENTD_CI_KEY=" + ciKey,
		"CHROMIUM=" + chromium, "SHOTS=" + shots,
	}
	out, err := cmd.CombinedOutput()
	t.Logf("principals-e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the browser script failed: %v", err)
	}
	if !strings.Contains(string(out), "principals e2e: all steps passed") {
		t.Fatal("the browser script ended without reporting success")
	}
}
