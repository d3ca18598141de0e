package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
)

// TestDiffConfig: the keys a reload compares are named as in the file,
// one level into tables; setKey copies exactly the named key.
func TestDiffConfig(t *testing.T) {
	base := func() *config.Config {
		return &config.Config{Listen: "127.0.0.1:4200", Limits: config.Limits{RatePerSec: 50, Burst: 100, MaxBodyBytes: 10}}
	}
	tests := []struct {
		name string
		edit func(*config.Config)
		want []string
	}{
		{"nothing", func(*config.Config) {}, nil},
		{"an agent", func(c *config.Config) { c.Agents = []manifest.Manifest{{Name: "beta"}} }, []string{"agents"}},
		{"limits", func(c *config.Config) { c.Limits.Burst = 9; c.Limits.MaxBodyBytes = 11 }, []string{"limits.burst", "limits.max_body_bytes"}},
		{"listen and a secret", func(c *config.Config) { c.Listen = ":1"; c.APIKey = "s" }, []string{"listen", "api_key"}},
		{"a2a path", func(c *config.Config) { c.A2A.ListenPath = "/x" }, []string{"a2a.listen_path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base(), base()
			tt.edit(b)
			got := diffConfig(a, b)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("diff %v, want %v", got, tt.want)
			}
			// Copying every changed key makes a equal to b.
			for _, k := range got {
				setKey(a, b, k)
			}
			if rest := diffConfig(a, b); len(rest) != 0 {
				t.Errorf("after setKey of %v still differs in %v", got, rest)
			}
		})
	}
}

// TestReloadPrincipals: a reload through the API changes the principals
// the admission layer resolves from the next request; the dashboard
// sessions of a changed principal end (they held its old rights), those
// of an unchanged one stay; a removed principal's key is refused.
func TestReloadPrincipals(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	v1 := fmt.Sprintf(`api_key_env = "ADMIN_KEY"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "a"
provider = "fake"
model = "m"

[[principals]]
name = "alice"
key_env = "ALICE_KEY"
agents = ["a"]

[[principals]]
name = "bob"
key_env = "BOB_KEY"
agents = ["a"]
`, model.URL)
	d, srv := testDaemon(t, v1, map[string]string{"ADMIN_KEY": "k-admin", "ALICE_KEY": "k-alice", "BOB_KEY": "k-bob"})
	do := func(method, path, body string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	login := func(key string) string {
		t.Helper()
		resp, body := do("POST", "/api/ui/login", `{"key":"`+key+`"}`)
		if resp.StatusCode != 200 || len(resp.Cookies()) != 1 {
			t.Fatalf("login: %d %s", resp.StatusCode, body)
		}
		return resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value
	}
	reload := func(text string) ReloadReport {
		t.Helper()
		if err := os.WriteFile(d.Config().File, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		resp, body := do("POST", "/api/admin/reload", "{}", "Authorization", "Bearer k-admin")
		var rep ReloadReport
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &rep) != nil {
			t.Fatalf("reload: %d %s", resp.StatusCode, body)
		}
		return rep
	}
	aliceCookie, bobCookie := login("k-alice"), login("k-bob")

	// alice gains agent b: her next request has it; her dashboard
	// session ends, bob's stays.
	rep := reload(strings.Replace(v1, "name = \"alice\"\nkey_env = \"ALICE_KEY\"\nagents = [\"a\"]", "name = \"alice\"\nkey_env = \"ALICE_KEY\"\nagents = [\"a\", \"b\"]", 1))
	if !slices.Equal(rep.Applied, []string{"principals"}) || len(rep.Restart) != 0 {
		t.Fatalf("report %+v, want principals applied only", rep)
	}
	if resp, _ := do("GET", "/api/ui/session", "", "Cookie", aliceCookie); resp.StatusCode != 401 {
		t.Errorf("alice's dashboard session after her rights changed: %d, want 401", resp.StatusCode)
	}
	if resp, _ := do("GET", "/api/ui/session", "", "Cookie", bobCookie); resp.StatusCode != 200 {
		t.Errorf("bob's dashboard session, bob unchanged: %d, want 200", resp.StatusCode)
	}
	if resp, body := do("GET", "/api/ui/session", "", "Cookie", login("k-alice")); resp.StatusCode != 200 || !strings.Contains(body, `"b"`) {
		t.Errorf("alice logged in again: %d %s; want her new agents", resp.StatusCode, body)
	}

	// bob removed: his key is refused, his session ended.
	i := strings.Index(v1, "[[principals]]\nname = \"bob\"")
	reload(v1[:i])
	if resp, _ := do("GET", "/api/agents", "", "Authorization", "Bearer k-bob"); resp.StatusCode != 401 {
		t.Errorf("bob's key after his removal: %d, want 401", resp.StatusCode)
	}
	if resp, _ := do("GET", "/api/ui/session", "", "Cookie", bobCookie); resp.StatusCode != 401 {
		t.Errorf("bob's dashboard session after his removal: %d, want 401", resp.StatusCode)
	}
	if resp, _ := do("GET", "/api/agents", "", "Authorization", "Bearer k-alice"); resp.StatusCode != 200 {
		t.Errorf("alice's key: %d, want 200", resp.StatusCode)
	}
}
