package config

import (
	"testing"

	"github.com/BurntSushi/toml"
)

const locateDoc = `# comment [not.a.table]
title = "x # not a comment"   # comment
"quoted.key" = 1
'literal key' = 2
dotted.a.b = 3
multi = """
line 7
[not.a.table]
still = "string" """
lit = '''
[[fake]]
'''
arr = [
  1,
  [2, 3],   # nested
  { k = "v", n.m = 4 },
]
[tbl]
x = 1
[[aot]]
y = 1
[aot.sub]
z = 1
[[aot.inner]]
w = 1
[[aot]]
y = 2
[[aot.inner]]
w = 2
[[aot.inner]]
w = 3
[ "sp ace" . 'q' ]
esc = "\u00e9\"\\"
"\u00e9" = 5
inline = {
  a = 1,
  b = [ 1,
    2 ],
}
`

func TestLocateKeys(t *testing.T) {
	if _, err := toml.Decode(locateDoc, new(map[string]any)); err != nil {
		t.Fatalf("test document is not valid TOML: %v", err)
	}
	lines := locateKeys(locateDoc)
	want := map[string]int{
		"title":               2,
		`"quoted.key"`:        3,
		`"literal key"`:       4,
		"dotted":              5,
		"dotted.a.b":          5,
		"multi":               6,
		"lit":                 10,
		"arr":                 13,
		"arr[0]":              14,
		"arr[1]":              15,
		"arr[1][1]":           15,
		"arr[2]":              16,
		"arr[2].n.m":          16,
		"tbl":                 18,
		"tbl.x":               19,
		"aot":                 20,
		"aot[0]":              20,
		"aot[0].y":            21,
		"aot[0].sub.z":        23,
		"aot[0].inner[0]":     24,
		"aot[0].inner[0].w":   25,
		"aot[1]":              26,
		"aot[1].y":            27,
		"aot[1].inner[0].w":   29,
		"aot[1].inner[1]":     30,
		"aot[1].inner[1].w":   31,
		`"sp ace".q`:          32,
		`"sp ace".q.esc`:      33,
		`"sp ace".q."é"`:      34,
		`"sp ace".q.inline.b`: 37,
	}
	for path, line := range want {
		if got, ok := lines[path]; !ok || got != line {
			t.Errorf("line of %s = %d (found %v), want %d", path, got, ok, line)
		}
	}
	for _, absent := range []string{"not.a.table", "fake", "still"} {
		if _, ok := lines[absent]; ok {
			t.Errorf("%s was found inside a string or comment", absent)
		}
	}
	// Every key the parser sees is located.
	checkAllLocated(t, locateDoc)
}

// checkAllLocated asserts that every key and array element of a valid
// document has a line.
func checkAllLocated(t *testing.T, doc string) {
	t.Helper()
	var raw map[string]any
	if _, err := toml.Decode(doc, &raw); err != nil {
		return
	}
	lines := locateKeys(doc)
	var walk func(v any, p fieldPath)
	walk = func(v any, p fieldPath) {
		if len(p) > 0 {
			if _, ok := lines[p.String()]; !ok {
				t.Errorf("%s is not located in:\n%s", p, doc)
			}
		}
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(e, p.key(k))
			}
		case []map[string]any:
			for i, e := range v {
				walk(e, p.index(i))
			}
		case []any:
			for i, e := range v {
				walk(e, p.index(i))
			}
		}
	}
	walk(raw, nil)
}

// FuzzLocateKeys: the scanner never panics or loops on any input, and on
// every document the toml parser accepts it finds every key.
func FuzzLocateKeys(f *testing.F) {
	f.Add(locateDoc)
	f.Add("a = [[1], {b = 2}]\n[[x.y]]\n[x.y.z]\nk = 1")
	f.Add("\ufeffk = \"\"\"a\"\"\"\"\"\n")
	f.Add("a = 1979-05-27T07:32:00Z\nb = 1979-05-27 07:32:00\n")
	f.Fuzz(func(t *testing.T, doc string) {
		checkAllLocated(t, doc)
	})
}
