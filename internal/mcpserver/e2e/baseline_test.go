package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The suites judge a baseline by scenario: a scenario listed there may
// fail for any reason, so a check that starts failing in it for another
// reason, or stops failing, goes unnoticed (issue 30, item 2). Each entry
// of a baseline file therefore names, in comment lines the suites ignore,
// every check of the scenario that fails, with the status and the message
// the suite reports, and why:
//
//	server:
//	  - server-stateless
//	    # check sep-2575-server-sends-tools-list-changed-on-subscription WARNING "Mutated the tool list ..."
//	    # why: the fixture re-registers an identical tool; ...
//
// checkBaselineReasons reads the suite's results (its -o directory) and
// fails on a failing check no entry names, on a named check that no
// longer fails, and on one that fails with another status or message.

// baselineCheck is one check a baseline entry names.
type baselineCheck struct {
	scenario, id, status, message string
	line                          int
}

var checkLine = regexp.MustCompile(`^\s*#\s*check\s+(\S+)\s+(FAILURE|WARNING)\s+(".*")\s*$`)

// parseBaseline returns the checks each entry of file names, keyed by
// scenario; an entry without a check or without a why is an error.
func parseBaseline(file string) (map[string][]baselineCheck, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]baselineCheck{}
	why := map[string]bool{}
	var order []string
	cur := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "- "):
			cur = strings.TrimSpace(strings.SplitN(strings.TrimPrefix(trim, "- "), "#", 2)[0])
			out[cur] = nil
			order = append(order, cur)
		case cur != "" && checkLine.MatchString(line):
			m := checkLine.FindStringSubmatch(line)
			msg, err := strconv.Unquote(m[3])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: the message is not a quoted string: %v", file, n, err)
			}
			out[cur] = append(out[cur], baselineCheck{scenario: cur, id: m[1], status: m[2], message: msg, line: n})
		case cur != "" && strings.HasPrefix(trim, "# why:"):
			why[cur] = true
		case cur != "" && strings.HasPrefix(trim, "# check"):
			return nil, fmt.Errorf("%s:%d: a check line is `# check ID FAILURE|WARNING \"message\"`", file, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, s := range order {
		if len(out[s]) == 0 || !why[s] {
			return nil, fmt.Errorf("%s: entry %s must name each failing check (`# check ID STATUS \"message\"`) and say why (`# why: ...`)", file, s)
		}
	}
	return out, nil
}

// scenarioDir matches a result directory: server-{scenario}-{time}.
var scenarioDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// failingChecks reads the failing (FAILURE, WARNING) checks of every
// scored scenario from a results directory. The tasks-* scenarios (the
// tasks extension, never scored) are left out, as the suite does.
func failingChecks(dir string) (map[string][]baselineCheck, int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	out := map[string][]baselineCheck{}
	scenarios := 0
	for _, e := range entries {
		m := scenarioDir.FindStringSubmatch(e.Name())
		if m == nil || strings.HasPrefix(m[1], "tasks-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			return nil, 0, err
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", e.Name(), err)
		}
		scenarios++
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				out[m[1]] = append(out[m[1]], baselineCheck{scenario: m[1], id: c.ID, status: c.Status, message: c.ErrorMessage})
			}
		}
	}
	return out, scenarios, nil
}

func checkBaselineReasons(t *testing.T, file, results string) {
	t.Helper()
	want, err := parseBaseline(file)
	if err != nil {
		t.Fatal(err)
	}
	got, scenarios, err := failingChecks(results)
	if err != nil {
		t.Fatal(err)
	}
	if scenarios == 0 {
		t.Fatalf("the suite left no results in %s", results)
	}
	name := filepath.Base(file)
	for scenario, checks := range got {
		for _, c := range checks {
			i := slices.IndexFunc(want[scenario], func(w baselineCheck) bool { return w.id == c.id })
			if i < 0 {
				t.Errorf("%s: %s: check %s fails (%s %q) and no entry names it: fix it, or add `# check %s %s %q` with why to the entry", name, scenario, c.id, c.status, c.message, c.id, c.status, c.message)
				continue
			}
			if w := want[scenario][i]; w.status != c.status || w.message != c.message {
				t.Errorf("%s:%d: %s: check %s now fails for another reason: %s %q (the entry says %s %q)", name, w.line, scenario, c.id, c.status, c.message, w.status, w.message)
			}
		}
	}
	for scenario, checks := range want {
		for _, w := range checks {
			if !slices.ContainsFunc(got[scenario], func(c baselineCheck) bool { return c.id == w.id }) {
				t.Errorf("%s:%d: %s: check %s no longer fails: remove it from the entry (and the entry, if it was the last)", name, w.line, scenario, w.id)
			}
		}
	}
}

// TestBaselineFiles: every conformance baseline names each entry's checks
// and why, in the form checkBaselineReasons reads.
func TestBaselineFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/conformance*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no baselines: %v", err)
	}
	for _, f := range files {
		if _, err := parseBaseline(f); err != nil {
			t.Error(err)
		}
	}
}
