package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad: arbitrary bytes as config.toml never panic, and the result
// is either a Config that validates again or a list of problems that
// each name a file. The seed corpus is testdata/fuzz/FuzzLoad plus the
// default file and the seed blocks.
func FuzzLoad(f *testing.F) {
	f.Add(DefaultFile())
	seeds, _ := filepath.Glob(filepath.Join("testdata", "seeds", "*.toml"))
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	home := filepath.Join(f.TempDir(), "home") // no agents directory
	file := filepath.Join(home, "config.toml")
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := load(home, file, true, data, fakeEnv(map[string]string{"K": "v"}))
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not an ErrorList: %v", err)
			}
			for _, e := range list {
				if e.File == "" || !strings.Contains(e.Error(), e.File) {
					t.Fatalf("problem without a file: %#v", e)
				}
			}
			return
		}
		if cfg == nil {
			t.Fatal("nil Config without an error")
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("loaded config fails Validate: %v", err)
		}
	})
}
