package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestStartTakesProviderEndpointFromEnv: with the built-in providers (no
// base_url anywhere), the daemon reaches the model at the vendor's
// base-URL variable, as the vendors' own SDKs and CLIs do. The fakes are
// on loopback, which a configured base_url may be too.
func TestStartTakesProviderEndpointFromEnv(t *testing.T) {
	tests := []struct {
		provider, urlEnv, keyEnv string
		newServer                func(testing.TB, llmtest.Handler) *llmtest.Server
	}{
		{"openai", "OPENAI_BASE_URL", "OPENAI_API_KEY", llmtest.NewOpenAIServer},
		{"anthropic", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", llmtest.NewAnthropicServer},
		{"gemini", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", llmtest.NewGeminiServer},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			model := tt.newServer(t, llmtest.Always(llmtest.Reply{Text: "Hello from the endpoint in " + tt.urlEnv + "."}))
			home := t.TempDir()
			t.Setenv("AGENTD_HOME", home)
			t.Setenv(tt.urlEnv, model.URL)
			t.Setenv(tt.keyEnv, "sk-test-secret-123")
			addr := freeAddr(t)
			d := runDaemon(t, home, addr, fmt.Sprintf(`listen = %q
log_level = "debug"

[[agents]]
name = "assistant"
provider = %q
model = "test-model"
`, addr, tt.provider))
			code, out, errOut := d.run(t, "chat", "assistant", "hello")
			if code != 0 {
				t.Fatalf("chat exited %d: %s\n%s", code, errOut, d.log)
			}
			if !strings.Contains(out, "Hello from the endpoint in "+tt.urlEnv) {
				t.Fatalf("stdout %q\ndaemon log:\n%s", out, d.log)
			}
			if n := model.Count(); n != 1 {
				t.Fatalf("the fake at %s got %d requests", tt.urlEnv, n)
			}
			if k := model.Last().APIKey; k != "sk-test-secret-123" {
				t.Fatalf("provider sent key %q", k)
			}
			if !strings.Contains(d.log.String(), "env "+tt.urlEnv) {
				t.Errorf("the daemon log does not say the endpoint came from %s:\n%s", tt.urlEnv, d.log)
			}
		})
	}
}

// TestDoctorShowsProviderEndpoints: doctor says which endpoint each
// provider uses and where it came from: config file:line, the vendor's
// variable, or the vendor's default.
func TestDoctorShowsProviderEndpoints(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, nil)
	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	t.Setenv("OPENAI_BASE_URL", model.URL)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "https://gemini-proxy.example.com/")
	t.Setenv("GEMINI_API_KEY", "")
	closed := freeAddr(t) // nothing listens there
	file := filepath.Join(home, "config.toml")
	cfg := fmt.Sprintf(`listen = %q

[providers.openai]
api_key_env = "OPENAI_API_KEY"

[providers.anthropic]
api_key_env = "ANTHROPIC_API_KEY"

[providers.gemini]
api_key_env = "GEMINI_API_KEY"

[providers.local]
kind = "openai"
base_url = "http://%s/v1"

[[agents]]
name = "assistant"
provider = "openai"
model = "m"
`, freeAddr(t), closed)
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--config", file, "doctor"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("doctor exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	want := map[string]string{
		"provider openai":    "local server answers at " + model.URL + " (env OPENAI_BASE_URL)",
		"provider anthropic": "https://api.anthropic.com (vendor default); ANTHROPIC_API_KEY is set",
		"provider gemini":    "https://gemini-proxy.example.com/ (env GOOGLE_GEMINI_BASE_URL); GEMINI_API_KEY not set (unused)",
		"provider local":     "no server at http://" + closed + "/v1 (" + file + ":14) (unused)",
	}
	lines := strings.Split(out.String(), "\n")
	for label, detail := range want {
		found := false
		for _, l := range lines {
			if strings.Contains(l, label+" ") && strings.Contains(l, detail) {
				found = true
			}
		}
		if !found {
			t.Errorf("doctor output lacks %q: %q", label, detail)
		}
	}
	if t.Failed() {
		t.Logf("doctor output:\n%s", out.String())
	}
}
