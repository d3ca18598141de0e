package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorSandbox: doctor names the kernel's mechanisms and, per agent
// shell and stdio server, the network and what is enforced; a per-entry
// "off" fails the check, loudly.
func TestDoctorSandbox(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	t.Setenv("OPENAI_API_KEY", "sk-test") // so the sandbox line is the one failure
	file := filepath.Join(home, "config.toml")
	body := fmt.Sprintf(`listen = %q

[[agents]]
name = "coder"
provider = "openai"
model = "gpt-4o"

[sandbox.agents.coder]
network = "loopback"

[[mcp_servers]]
name = "loose"
[mcp_servers.transport]
type = "stdio"
command = "/bin/cat"
[mcp_servers.sandbox]
mode = "off"
`, freeAddr(t))
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--config", file, "doctor"}, strings.NewReader(""), &out, &errb)
	text := out.String() + errb.String()
	for _, want := range []string{
		"sandbox kernel",
		"Landlock",
		"sandbox shell coder    network loopback; enforced: ",
		`[FAIL] sandbox mcp loose      mode = "off": runs unconfined`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "[FAIL]") != 1 || code == 0 {
		t.Errorf("doctor exited 0 with a server's sandbox off:\n%s", text)
	}
}
