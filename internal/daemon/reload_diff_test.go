package daemon

import (
	"slices"
	"testing"

	"github.com/agentd/agentd/internal/config"
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
