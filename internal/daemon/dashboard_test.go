package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// metricRef finds the metric names a PromQL expression selects: the
// dashboards write every selector as name{...}, and a function call or a
// label name is never followed by '{'.
var metricRef = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{`)

// labelValuesRef finds the metric of a label_values(metric, label) query.
var labelValuesRef = regexp.MustCompile(`label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,`)

// dashboardMetrics returns, per dashboard file in deploy/grafana, the
// metric names its panels and variables query.
func dashboardMetrics(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "grafana", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in deploy/grafana: %v", err)
	}
	out := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var dash struct {
			UID    string `json:"uid"`
			Panels []struct {
				ID      int    `json:"id"`
				Type    string `json:"type"`
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
			Templating struct {
				List []struct {
					Query any `json:"query"`
				} `json:"list"`
			} `json:"templating"`
		}
		if err := json.Unmarshal(data, &dash); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if dash.UID == "" {
			t.Errorf("%s: no uid", f)
		}
		names := map[string]bool{}
		ids := map[int]bool{}
		for _, p := range dash.Panels {
			if ids[p.ID] {
				t.Errorf("%s: panel id %d twice", f, p.ID)
			}
			ids[p.ID] = true
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("%s: panel %q queries nothing", f, p.Title)
			}
			for _, tg := range p.Targets {
				refs := metricRef.FindAllStringSubmatch(tg.Expr, -1)
				if len(refs) == 0 {
					t.Errorf("%s: panel %q: no metric selector in %q", f, p.Title, tg.Expr)
				}
				for _, m := range refs {
					names[m[1]] = true
				}
			}
		}
		for _, v := range dash.Templating.List {
			q, _ := json.Marshal(v.Query)
			for _, m := range labelValuesRef.FindAllStringSubmatch(string(q), -1) {
				names[m[1]] = true
			}
		}
		list := make([]string, 0, len(names))
		for n := range names {
			list = append(list, n)
		}
		sort.Strings(list)
		out[filepath.Base(f)] = list
	}
	return out
}

// checkDashboards fails for every metric a dashboard queries that the
// scrape does not export (a histogram's _bucket, _sum and _count series
// belong to its family).
func checkDashboards(t *testing.T, families map[string]*dto.MetricFamily) {
	t.Helper()
	for file, names := range dashboardMetrics(t) {
		for _, n := range names {
			if _, ok := families[n]; ok {
				continue
			}
			found := false
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(n, suffix); ok {
					if f, ok := families[base]; ok && f.GetType() == dto.MetricType_HISTOGRAM {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("%s queries %s, which /metrics does not export", file, n)
			}
		}
	}
}
