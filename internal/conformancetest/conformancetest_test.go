package conformancetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	b := &Baseline{Side: "server", Expected: []Entry{
		{Scenario: "s", Check: "c1", Error: "did not declare", Why: "w"},
		{Scenario: "s", Check: "c2", Error: "gone", Why: "fixed since"},
	}}
	tests := []struct {
		name     string
		failures []Failure
		want     []string // substrings, one per problem, in order
	}{
		{"as expected, one entry fixed", []Failure{{"s", "c1", "client did not declare sampling"}}, []string{"s / c2 passes now"}},
		{"reason changed", []Failure{{"s", "c1", "timeout"}, {"s", "c2", "still gone"}}, []string{"s / c1 fails for another reason"}},
		{"unexpected check in a listed scenario", []Failure{{"s", "c1", "did not declare"}, {"s", "c2", "gone"}, {"s", "c3", "boom"}}, []string{"unexpected failure s / c3: boom"}},
		{"all expected", []Failure{{"s", "c1", "did not declare x"}, {"s", "c2", "gone"}}, nil},
		{"a message where none was", []Failure{{"s", "c1", "did not declare"}, {"s", "c2", "gone"}, {"s", "c3", "now says why"}}, []string{"unexpected failure s / c3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(b, tt.failures)
			if len(got) != len(tt.want) {
				t.Fatalf("problems %q, want %d", got, len(tt.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %q, want it to say %q", got[i], tt.want[i])
				}
			}
		})
	}
}

// TestReadResults reads the suite's -o layout: a directory per scenario
// run, named side-scenario-timestamp, holding checks.json.
func TestReadResults(t *testing.T) {
	dir := t.TempDir()
	write := func(sub, body string) {
		p := filepath.Join(dir, sub)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "checks.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("server-server-stateless-2026-11-27T19-33-11-614Z", `[{"id":"a","status":"SUCCESS"},{"id":"b","status":"FAILURE","errorMessage":"no"},{"id":"c","status":"WARNING","errorMessage":"should"}]`)
	write("server-tasks-lifecycle-2026-11-27T19-33-16-282Z", `[{"id":"t","status":"FAILURE","errorMessage":"unknown tool"}]`)
	b := &Baseline{Side: "server"}
	got, files, err := b.ReadResults(dir, func(s string) bool { return strings.HasPrefix(s, "tasks-") })
	if err != nil {
		t.Fatal(err)
	}
	if files != 1 || len(got) != 2 || got[0] != (Failure{"server-stateless", "b", "no"}) || got[1] != (Failure{"server-stateless", "c", "should"}) {
		t.Fatalf("got %+v from %d files", got, files)
	}
	c := &Baseline{Side: "client"}
	cdir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cdir, "auth", "metadata-default-2026-11-27T19-39-18-612Z"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cdir, "auth", "metadata-default-2026-11-27T19-39-18-612Z", "checks.json"), []byte(`[{"id":"x","status":"FAILURE","errorMessage":"m"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.ReadResults(cdir, nil); err != nil || len(got) != 1 || got[0].Scenario != "auth/metadata-default" {
		t.Errorf("a nested client scenario: %+v %v", got, err)
	}
	write("elsewhere", `[]`)
	if _, _, err := b.ReadResults(dir, nil); err == nil {
		t.Error("a directory the suite does not write was read without complaint")
	}
}

func TestLoadRefusesIncompleteEntries(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.json")
	for body, ok := range map[string]bool{
		`{"side":"server","expected":[{"scenario":"s","check":"c","error":"e","why":"w"}]}`: true,
		`{"side":"server","expected":[{"scenario":"s","check":"c","error":"e"}]}`:           false,
		`{"side":"server","expected":[{"scenario":"s","check":"c","why":"w"}]}`:             true,
		`{"side":"both","expected":[]}`:                                                     false,
		`{"side":"server","expected":[],"extra":1}`:                                         false,
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); (err == nil) != ok {
			t.Errorf("Load(%s): %v", body, err)
		}
	}
}
