package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOrigin: Config.Origin names the file read, or the one looked for,
// and how that place was chosen, so an MCP host's minimal environment
// (no AGENTD_HOME) can be diagnosed from agentd's log.
func TestOrigin(t *testing.T) {
	userHome := t.TempDir()
	agentdHome := t.TempDir()
	withFile := t.TempDir()
	writeFile(t, filepath.Join(withFile, "config.toml"), "")
	tests := []struct {
		name string
		opts LoadOptions
		want string
	}{
		{"no AGENTD_HOME and no file",
			LoadOptions{LookupEnv: fakeEnv(map[string]string{"HOME": userHome})},
			"no config file at " + filepath.Join(userHome, ".agentd", "config.toml") + " (AGENTD_HOME is not set, so ~/.agentd); built-in defaults apply"},
		{"AGENTD_HOME without a file",
			LoadOptions{LookupEnv: fakeEnv(map[string]string{"HOME": userHome, "AGENTD_HOME": agentdHome})},
			"no config file at " + filepath.Join(agentdHome, "config.toml") + " (AGENTD_HOME=" + agentdHome + "); built-in defaults apply"},
		{"AGENTD_HOME with a file",
			LoadOptions{LookupEnv: fakeEnv(map[string]string{"AGENTD_HOME": withFile})},
			"config file " + filepath.Join(withFile, "config.toml") + " (AGENTD_HOME=" + withFile + ")"},
		{"--config",
			LoadOptions{Path: filepath.Join(withFile, "config.toml"), LookupEnv: fakeEnv(map[string]string{"AGENTD_HOME": agentdHome})},
			"config file " + filepath.Join(withFile, "config.toml") + " (given with --config)"},
		{"home given by the caller",
			LoadOptions{Home: withFile, LookupEnv: fakeEnv(nil)},
			"config file " + filepath.Join(withFile, "config.toml") + " (in the agentd home given by the caller)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Origin(); got != tt.want {
				t.Errorf("Origin() = %q\nwant       %q", got, tt.want)
			}
		})
	}
	if got := (&Config{}).Origin(); !strings.Contains(got, "built in code") {
		t.Errorf("hand-built Origin() = %q", got)
	}
}
