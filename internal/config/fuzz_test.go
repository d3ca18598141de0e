package config

import (
	"encoding/json"
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

// FuzzParseManifestTOML: an agents/*.toml file never panics the parser,
// and an accepted manifest is valid.
func FuzzParseManifestTOML(f *testing.F) {
	f.Add([]byte("name = \"a\"\nprovider = \"openai\"\nmodel = \"m\"\n"))
	f.Add([]byte("name = \"p\"\nkind = \"mcp_proxy\"\ntools = [\"mcp_*\"]\n[expose]\na2a = true\n"))
	f.Add([]byte("name = 1\n[[skills]]\nid = \"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifestTOML("agent.toml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "agent.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if verr := m.Validate(); verr != nil {
			t.Fatalf("accepted an invalid manifest: %v", verr)
		}
	})
}

// FuzzValidateMCPServer: a server registered through the API (JSON) never
// panics validation, and an accepted one names its transport correctly.
func FuzzValidateMCPServer(f *testing.F) {
	f.Add([]byte(`{"name":"e","transport":{"type":"stdio","command":"npx","args":["-y","x"]}}`))
	f.Add([]byte(`{"name":"h","transport":{"type":"http","url":"https://example.com/mcp"},"headers":{"Authorization":"${TOKEN}"}}`))
	f.Add([]byte(`{"name":"../x","transport":{"type":"sse","url":"ftp://x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s MCPServer
		if json.Unmarshal(data, &s) != nil {
			return
		}
		if ValidateMCPServer(s) != nil {
			return
		}
		switch s.Transport.Type {
		case "stdio":
			if s.Transport.Command == "" {
				t.Fatal("accepted a stdio server without a command")
			}
		case "http", "sse":
			if !strings.HasPrefix(s.Transport.URL, "http://") && !strings.HasPrefix(s.Transport.URL, "https://") {
				t.Fatalf("accepted a non-http url %q", s.Transport.URL)
			}
		default:
			t.Fatalf("accepted transport type %q", s.Transport.Type)
		}
	})
}
