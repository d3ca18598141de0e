package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKubernetesConfigLoads keeps the config.toml of
// deploy/kubernetes/configmap.yaml valid: it loads with the variables the
// Secret provides, as a replica on PostgreSQL with a session key.
func TestKubernetesConfigLoads(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The block scalar under "config.toml: |", indented four spaces.
	_, block, ok := strings.Cut(string(raw), "config.toml: |\n")
	if !ok {
		t.Fatal("configmap.yaml has no config.toml block")
	}
	var body strings.Builder
	for _, line := range strings.Split(block, "\n") {
		if line != "" && !strings.HasPrefix(line, "    ") {
			break
		}
		body.WriteString(strings.TrimPrefix(line, "    ") + "\n")
	}
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	env := fakeEnv(map[string]string{
		"AGENTD_API_KEY":      "k8s-key",
		"AGENTD_POSTGRES_URL": "postgres://agentd:pw@agentd-postgres:5432/agentd",
		"AGENTD_SESSION_KEY":  strings.Repeat("s", 48),
	})
	cfg, err := Load(LoadOptions{Path: path, Home: home, LookupEnv: env})
	if err != nil {
		t.Fatalf("the ConfigMap's config.toml does not load: %v\n%s", err, body.String())
	}
	if cfg.Store.Backend != BackendPostgres || cfg.Cluster.SessionKeyEnv != "AGENTD_SESSION_KEY" {
		t.Errorf("store %+v, cluster %+v: want postgres with a session key", cfg.Store, cfg.Cluster)
	}
	if keys, err := cfg.SessionKeys(); err != nil || len(keys) != 1 {
		t.Errorf("SessionKeys = %d, %v", len(keys), err)
	}
}

// TestSessionKeys: the session key variable holds one secret or several
// (rotation), each long enough; errors name the variable, not the value.
func TestSessionKeys(t *testing.T) {
	long := strings.Repeat("a", MinSessionKeyLen)
	for _, tc := range []struct {
		name, value string
		set         bool
		want        int
		err         string
	}{
		{"one", long, true, 1, ""},
		{"rotation", strings.Repeat("n", 40) + ", " + long, true, 2, ""},
		{"unset", "", false, 0, "AGENTD_SESSION_KEY is not set"},
		{"short", "hunter2", true, 0, "secret 1 in AGENTD_SESSION_KEY is 7 characters"},
		{"short second", long + ",x", true, 0, "secret 2 in AGENTD_SESSION_KEY is 1 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Cluster: Cluster{SessionKeyEnv: "AGENTD_SESSION_KEY"}}
			env := map[string]string{}
			if tc.set {
				env["AGENTD_SESSION_KEY"] = tc.value
			}
			c.lookupEnv = fakeEnv(env)
			keys, err := c.SessionKeys()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || (tc.value != "" && strings.Contains(err.Error(), tc.value)) {
					t.Fatalf("err = %v, want %q without the value", err, tc.err)
				}
				return
			}
			if err != nil || len(keys) != tc.want {
				t.Fatalf("SessionKeys = %d keys, %v; want %d", len(keys), err, tc.want)
			}
		})
	}
	if keys, err := (&Config{}).SessionKeys(); keys != nil || err != nil {
		t.Errorf("without session_key_env: %v, %v", keys, err)
	}
}
