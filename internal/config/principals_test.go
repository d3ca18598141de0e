package config

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrincipalKeys(t *testing.T) {
	hash := sha256.Sum256([]byte("partner-key"))
	body := `api_key_env = "ADMIN_KEY"

[[principals]]
name = "ci-bot"
key_env = "CI_KEY"
agents = ["reviewer"]
tools = ["file_read"]

[[principals]]
name = "partner"
key_sha256 = "` + strings.ToUpper(hex.EncodeToString(hash[:])) + `"
agents = ["public-*"]

[[principals]]
name = "ops"
key_env = "OPS_KEY"
admin = true
`
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ADMIN_KEY": "admin-key", "CI_KEY": "ci-key", "OPS_KEY": "ops-key"}
	cfg, err := Load(LoadOptions{Path: path, Home: home, LookupEnv: fakeEnv(env)})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cfg.PrincipalKeys()
	if err != nil {
		t.Fatal(err)
	}
	if keys.Len() != 4 {
		t.Fatalf("%d keys, want 4", keys.Len())
	}
	for _, tt := range []struct {
		key, name          string
		admin, agent, tool bool
	}{
		{"admin-key", "admin", true, true, true},
		{"ci-key", "ci-bot", false, true, true},
		{"partner-key", "partner", false, false, false},
		{"ops-key", "ops", true, true, true},
	} {
		p, ok := keys.Lookup(tt.key)
		if !ok || p.Name != tt.name || p.Admin != tt.admin || p.MayRunAgent("reviewer") != tt.agent || p.MayCallTool("file_read") != tt.tool {
			t.Errorf("key of %s: %+v, %v", tt.name, p, ok)
		}
	}
	if _, ok := keys.Lookup("wrong"); ok {
		t.Fatal("a wrong key resolved")
	}

	// A principal whose key variable is unset cannot log in: say so at
	// start, naming the field and the variable.
	delete(env, "CI_KEY")
	cfg, err = Load(LoadOptions{Path: path, Home: home, LookupEnv: fakeEnv(env)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.PrincipalKeys(); err == nil || !strings.Contains(err.Error(), "principals[0].key_env") || !strings.Contains(err.Error(), "CI_KEY") {
		t.Fatalf("unset key_env: %v", err)
	}
	if cfg, err := loadString(t, ""); err != nil {
		t.Fatal(err)
	} else if keys, err := cfg.PrincipalKeys(); err != nil || keys.Len() != 0 {
		t.Fatalf("no keys configured: %d keys, %v", keys.Len(), err)
	}
}
