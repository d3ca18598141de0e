// Package conformancetest holds what agentd's runs of the official MCP
// conformance suites share: a baseline of expected failures where each
// entry names the scenario, the check that fails and the reason (a
// substring of the suite's own error message, and why agentd fails it),
// and the comparison of a run's checks against it.
//
// The suites' own --expected-failures file lists scenarios only, so a
// scenario in it could fail for another reason, or a second check in it
// start failing, unnoticed: one held-out run found a gateway executing a
// tool for a client that had not declared the capability it needs, filed
// under a scenario listed for a harmless warning. Here every failing
// check must match an entry, by check and message, and every entry must
// still fail.
package conformancetest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Entry is one expected failure.
type Entry struct {
	// Scenario is the suite's scenario name, Check the id of the check
	// in it that fails.
	Scenario string `json:"scenario"`
	Check    string `json:"check"`
	// Error is a substring of the check's error message as the suite
	// words it: a failure for another reason is not this entry's. Empty
	// means the suite gives the check no message, and must not start to.
	Error string `json:"error"`
	// Why is agentd's reason, for the reader.
	Why string `json:"why"`
}

// Baseline is a file of expected failures of one side of a suite.
type Baseline struct {
	// About says what run the baseline is for.
	About string `json:"about"`
	// Side is "server" or "client": the suite's subcommand.
	Side     string  `json:"side"`
	Expected []Entry `json:"expected"`
}

// Load reads a baseline and checks that every entry is complete.
func Load(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b Baseline
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if b.Side != "server" && b.Side != "client" {
		return nil, fmt.Errorf("%s: side %q, want server or client", path, b.Side)
	}
	for i, e := range b.Expected {
		if e.Scenario == "" || e.Check == "" || e.Why == "" {
			return nil, fmt.Errorf("%s: expected[%d]: scenario, check and why are required", path, i)
		}
	}
	return &b, nil
}

// WriteSuiteFile writes the suite's own --expected-failures file (YAML,
// scenario names of this side) for b to path, so that the suite's exit
// status follows the baseline too.
func (b *Baseline) WriteSuiteFile(path string) error {
	var names []string
	for _, e := range b.Expected {
		if !slices.Contains(names, e.Scenario) {
			names = append(names, e.Scenario)
		}
	}
	var s strings.Builder
	if len(names) == 0 {
		s.WriteString(b.Side + ": []\n")
	} else {
		s.WriteString(b.Side + ":\n")
		for _, n := range names {
			fmt.Fprintf(&s, "  - %q\n", n)
		}
	}
	return os.WriteFile(path, []byte(s.String()), 0o644)
}

// Failure is a failed check of a run.
type Failure struct {
	Scenario, Check, Error string
}

// resultDir is a scenario's result directory in the suite's -o layout:
// server-SCENARIO-TIMESTAMP for server scenarios, SCENARIO-TIMESTAMP for
// client ones, whose names may hold "/" (auth/metadata-default: nested
// directories); the timestamp anchors the end.
var resultDir = regexp.MustCompile(`^(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// ReadResults reads every checks.json below dir (the suite's -o) and
// returns the checks whose status is FAILURE or WARNING (a SHOULD the
// implementation does not do: the suite fails the scenario for it too),
// and how many scenarios it read. skip leaves out scenarios the suite
// runs but never scores.
func (b *Baseline) ReadResults(dir string, skip func(scenario string) bool) ([]Failure, int, error) {
	var out []Failure
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		m := resultDir.FindStringSubmatch(filepath.ToSlash(rel))
		if m == nil {
			return fmt.Errorf("%s: not a scenario's result directory", rel)
		}
		scenario := m[1]
		if b.Side == "server" {
			var ok bool
			if scenario, ok = strings.CutPrefix(scenario, "server-"); !ok {
				return fmt.Errorf("%s: not a server scenario's result directory", rel)
			}
		}
		if skip != nil && skip(scenario) {
			return nil
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				out = append(out, Failure{Scenario: scenario, Check: c.ID, Error: c.ErrorMessage})
			}
		}
		return nil
	})
	return out, files, err
}

// Compare returns what differs between a run's failures and the
// baseline: a failure no entry names, one whose message no longer holds
// its entry's error (its reason changed), and an entry that no longer
// fails (remove it).
func Compare(b *Baseline, failures []Failure) []string {
	var problems []string
	used := make([]bool, len(b.Expected))
	for _, f := range failures {
		i := slices.IndexFunc(b.Expected, func(e Entry) bool { return e.Scenario == f.Scenario && e.Check == f.Check })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("unexpected failure %s / %s: %s", f.Scenario, f.Check, f.Error))
			continue
		}
		used[i] = true
		if e := b.Expected[i]; !strings.Contains(f.Error, e.Error) || (e.Error == "") != (f.Error == "") {
			problems = append(problems, fmt.Sprintf("%s / %s fails for another reason: the baseline expects %q, the suite says %q", f.Scenario, f.Check, e.Error, f.Error))
		}
	}
	for i, e := range b.Expected {
		if !used[i] {
			problems = append(problems, fmt.Sprintf("%s / %s passes now: remove it from the baseline (it was: %s)", e.Scenario, e.Check, e.Why))
		}
	}
	return problems
}
