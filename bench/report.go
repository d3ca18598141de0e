package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything a run measured: results.json is this, encoded.
type Report struct {
	Machine   Machine     `json:"machine"`
	Settings  Settings    `json:"settings"`
	Quick     bool        `json:"quick,omitempty"`
	Seconds   float64     `json:"seconds"`
	Scenarios []*Scenario `json:"scenarios"`
}

// Scenario is one scenario's outcome.
type Scenario struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Available bool   `json:"available"`
	// About says what is measured and how, for the README.
	About string `json:"about,omitempty"`
	// Reason says why the scenario could not run.
	Reason  string   `json:"not_available,omitempty"`
	Rows    []Row    `json:"rows,omitempty"`
	Targets []Target `json:"targets,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Seconds float64  `json:"seconds"`
}

// Row is one measured path (latency and throughput) or one value.
type Row struct {
	Path        string  `json:"path"`
	Concurrency int     `json:"concurrency,omitempty"`
	P50us       float64 `json:"p50_us,omitempty"`
	P99us       float64 `json:"p99_us,omitempty"`
	Rate        float64 `json:"per_sec,omitempty"`
	Calls       int     `json:"calls,omitempty"`
	Errors      int     `json:"errors,omitempty"`
	// RoundRates are the calls per second of each round, in round order;
	// rows measured in the same interleaved rounds line up.
	RoundRates []float64 `json:"round_rates,omitempty"`
	// RoundP50us and RoundP99us are each round's latency percentiles.
	RoundP50us []float64 `json:"round_p50_us,omitempty"`
	RoundP99us []float64 `json:"round_p99_us,omitempty"`
	Value      float64   `json:"value,omitempty"`
	Unit       string    `json:"unit,omitempty"`
	Note       string    `json:"note,omitempty"`
	// NA says why this row has no numbers.
	NA string `json:"not_available,omitempty"`
}

// Target is a goal from the issue and whether this run met it.
type Target struct {
	Name     string `json:"name"`
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	// Met is nil when the target could not be measured.
	Met *bool  `json:"met"`
	Why string `json:"why"`
}

// verdict returns a Target's Met value.
func verdict(ok bool) *bool { return &ok }

// cellRow turns a cell's rounds into a row of medians.
func cellRow(c *Cell) Row {
	s := c.Summary()
	r := Row{Path: c.Path, Concurrency: c.Concurrency, Calls: s.Calls, Errors: s.Errors, Note: c.Note}
	if s.Calls == 0 {
		r.NA = "no successful call"
		if s.FirstErr != nil {
			r.NA += ": " + abbreviate(s.FirstErr.Error(), 200)
		}
		return r
	}
	r.P50us, r.P99us, r.Rate = us(s.P50), us(s.P99), s.Rate
	for _, st := range c.Rounds {
		r.RoundRates = append(r.RoundRates, st.Rate)
		r.RoundP50us = append(r.RoundP50us, us(st.P50))
		r.RoundP99us = append(r.RoundP99us, us(st.P99))
	}
	if s.Errors > 0 && s.FirstErr != nil {
		if r.Note != "" {
			r.Note += "; "
		}
		r.Note += fmt.Sprintf("%d errors, first: %s", s.Errors, abbreviate(s.FirstErr.Error(), 160))
	}
	return r
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// ratioText formats num.Rate/den.Rate, with the same ratio within each
// round when there are several: on a noisy machine the spread says how
// firm a verdict is.
func ratioText(num, den Row, digits int) string {
	out := fmt.Sprintf("%.*f×", digits, num.Rate/den.Rate)
	n := min(len(num.RoundRates), len(den.RoundRates))
	if n < 2 {
		return out
	}
	var rs []string
	for i := range n {
		if den.RoundRates[i] > 0 {
			rs = append(rs, fmt.Sprintf("%.*f", digits, num.RoundRates[i]/den.RoundRates[i]))
		}
	}
	return out + " (rounds " + strings.Join(rs, ", ") + ")"
}

// roundsDisagree reports whether the per-round ratios num/den fall on
// both sides of the target (pass tells which side is good).
func roundsDisagree(num, den Row, pass func(ratio float64) bool) bool {
	seen := map[bool]bool{}
	for i := range min(len(num.RoundRates), len(den.RoundRates)) {
		if den.RoundRates[i] > 0 {
			seen[pass(num.RoundRates[i]/den.RoundRates[i])] = true
		}
	}
	return len(seen) > 1
}

// noiseNote is appended to a verdict some rounds contradict.
func noiseNote(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " Rounds disagree at " + strings.Join(where, ", ") + ": there the verdict is within this machine's noise."
}

// row finds a row by path and concurrency.
func (s *Scenario) row(path string, conc int) (Row, bool) {
	for _, r := range s.Rows {
		if r.Path == path && r.Concurrency == conc && r.NA == "" {
			return r, true
		}
	}
	return Row{}, false
}

// naRow records a path that could not be measured.
func (s *Scenario) naRow(path string, err error) {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, errNotAvailable.Error()+": ")
	s.Rows = append(s.Rows, Row{Path: path, NA: msg})
}

// unmeasured is a target that could not be measured, with the reason.
func unmeasured(name, goal, why string) Target {
	return Target{Name: name, Goal: goal, Measured: "n/a", Why: why}
}

// printScenario writes a scenario as a plain-text table.
func printScenario(w io.Writer, s *Scenario) {
	fmt.Fprintf(w, "\n== %s. %s (%.0f s)\n", s.ID, s.Title, s.Seconds)
	if !s.Available {
		fmt.Fprintf(w, "not available: %s\n", strings.TrimPrefix(s.Reason, errNotAvailable.Error()+": "))
	}
	if len(s.Rows) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "path\tconc\tp50 µs\tp99 µs\tper s\tvalue\t")
		for _, r := range s.Rows {
			if r.NA != "" {
				fmt.Fprintf(tw, "%s\t\t\t\t\t\t  not available: %s\n", r.Path, r.NA)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Path, intOrBlank(r.Concurrency),
				num(r.P50us, 0), num(r.P99us, 0), num(r.Rate, 0), valueText(r), noteText(r.Note))
		}
		tw.Flush()
	}
	for _, t := range s.Targets {
		fmt.Fprintf(w, "target %s (%s): %s — %s\n", t.Name, t.Goal, metText(t.Met), t.Why)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func intOrBlank(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// num formats x with thousands separators, blank for zero.
func num(x float64, decimals int) string {
	if x == 0 {
		return ""
	}
	s := fmt.Sprintf("%.*f", decimals, x)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

func valueText(r Row) string {
	if r.Unit == "" {
		return ""
	}
	d := 0
	switch {
	case r.Value < 1:
		d = 3
	case r.Value < 10:
		d = 2
	case r.Value < 100:
		d = 1
	}
	return num(r.Value, d) + " " + r.Unit
}

func noteText(n string) string {
	if n == "" {
		return ""
	}
	return "  (" + n + ")"
}

func metText(m *bool) string {
	switch {
	case m == nil:
		return "not measured"
	case *m:
		return "met"
	default:
		return "NOT met"
	}
}

// Write writes results.json, chart.svg and README.md into dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "chart.svg"), []byte(chartSVG(r)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme(r)), 0o644)
}

// crossNotes adds what one scenario tells about another's target: the
// minimal go-sdk server of scenario 2 shows what any Streamable HTTP hop
// built on the go-sdk costs on this machine, which bounds scenario 1's
// latency target from below.
func crossNotes(r *Report) {
	var gw, srv *Scenario
	for _, s := range r.Scenarios {
		switch s.ID {
		case "1":
			gw = s
		case "2":
			srv = s
		}
	}
	if gw == nil || srv == nil {
		return
	}
	minimal, ok := srv.row(pathMinimal, 1)
	if !ok {
		return
	}
	direct, ok := gw.row(pathDirect, 1)
	if !ok {
		return
	}
	gw.Notes = append(gw.Notes, fmt.Sprintf("For scale: in this run the minimal go-sdk Streamable HTTP server of scenario 2, serving file_read with no upstream, "+
		"has p50 %.0f µs at c=1, %.0f µs more than this scenario's whole direct stdio call (%.0f µs).", minimal.P50us, minimal.P50us-direct.P50us, direct.P50us))
}
