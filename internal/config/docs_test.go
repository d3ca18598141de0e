package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/manifest"
)

// docSections derives, from the Go types by reflection, every table of
// the config file and the keys it takes. Sections are named as docs
// headings name them: "" for the top level, "providers.NAME" for a map
// of tables, "mcp_servers" for an array of tables.
func docSections() map[string][]string {
	out := make(map[string][]string)
	var walk func(section string, t reflect.Type)
	walk = func(section string, t reflect.Type) {
		if _, ok := out[section]; !ok {
			out[section] = nil // a table with only sub-tables still has a section
		}
		for _, f := range tomlFields(t) {
			ft := f.typ
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			sub := f.name
			if section != "" {
				sub = section + "." + f.name
			}
			switch {
			case ft.Kind() == reflect.Struct && ft != secretType:
				walk(sub, ft)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(sub, ft.Elem())
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				walk(sub+".NAME", ft.Elem())
			default:
				out[section] = append(out[section], f.name)
			}
		}
	}
	walk("", reflect.TypeFor[Config]())
	return out
}

// docKeys reads docs/config.md: headings holding `[table]` or
// `[[table]]` (or "Top-level keys") open a section; table rows whose
// first cell is `key` list its keys.
func docKeys(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "config.md"))
	if err != nil {
		t.Fatalf("read docs: %v", err)
	}
	out := make(map[string][]string)
	section, in := "", false
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "#") {
			in = true
			switch {
			case strings.Contains(line, "Top-level keys"):
				section = ""
			case strings.Contains(line, "`["):
				s := line[strings.Index(line, "`[")+1:]
				s = s[:strings.Index(s, "`")]
				section = strings.Trim(s, "[]")
			default:
				in = false
			}
			if in {
				if _, dup := out[section]; dup {
					t.Errorf("docs/config.md: section %q appears twice", section)
				}
				out[section] = nil
			}
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		key := strings.TrimPrefix(line, "| `")
		key = key[:strings.Index(key, "`")]
		out[section] = append(out[section], key)
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// TestDocsListEveryKey fails when docs/config.md misses a key the types
// accept, or documents one they do not.
func TestDocsListEveryKey(t *testing.T) {
	want := docSections()
	got := docKeys(t)
	for _, name := range sortedStringKeys(want) {
		keys, ok := got[name]
		if !ok {
			t.Errorf("docs/config.md has no section for [%s] (keys %v)", name, want[name])
			continue
		}
		for _, k := range want[name] {
			if !slices.Contains(keys, k) {
				t.Errorf("docs/config.md: [%s] does not document key %q", name, k)
			}
		}
		for _, k := range keys {
			if !slices.Contains(want[name], k) {
				t.Errorf("docs/config.md: [%s] documents %q, which the config does not accept", name, k)
			}
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/config.md documents section [%s], which the config does not have", name)
		}
	}
}

// TestDocSectionsCoverManifest keeps the reflection walk honest: agent
// manifests are documented through [[agents]], so every manifest key must
// be there.
func TestDocSectionsCoverManifest(t *testing.T) {
	var want []string
	for _, f := range tomlFields(reflect.TypeFor[manifest.Manifest]()) {
		if f.name != "skills" && f.name != "expose" {
			want = append(want, f.name)
		}
	}
	got := append([]string(nil), docSections()["agents"]...)
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("agents section keys = %v, want %v", got, want)
	}
}
