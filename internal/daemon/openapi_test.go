package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentd/agentd/internal/auditlog"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store"
)

// openAPIConfig is a daemon with every /api route registered: an agent
// over a fake model, the A2A edge (its /api/a2a routes) and the
// dashboard. No keys: the local principal is the admin.
func openAPIConfig(modelURL string) string {
	return fmt.Sprintf(`listen = "127.0.0.1:0"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "a"
provider = "fake"
model = "m"
tools = ["agent_list"]

[agents.expose]
a2a = true

[a2a]
enabled = true

[limits]
rate_per_sec = 1000000
burst = 1000000
`, modelURL)
}

// openAPIDoc is the document the daemon serves, decoded.
type openAPIDoc struct {
	OpenAPI string                                `json:"openapi"`
	Paths   map[string]map[string]json.RawMessage `json:"paths"`
	raw     map[string]any
}

func fetchOpenAPI(t *testing.T, url string) openAPIDoc {
	t.Helper()
	resp, err := http.Get(url + httpapi.OpenAPIPath) // public: no credentials
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %s %.200s", httpapi.OpenAPIPath, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var doc openAPIDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if err := json.Unmarshal(b, &doc.raw); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	return doc
}

// operations are the document's "METHOD /path" pairs, in ServeMux
// pattern syntax (the same {name} wildcards).
func (d openAPIDoc) operations() []string {
	var out []string
	for p, item := range d.Paths {
		for m := range item {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				out = append(out, strings.ToUpper(m)+" "+p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestOpenAPIMatchesRoutes: every route the daemon serves under /api is
// in /api/openapi.json with its method, and the document describes no
// route the daemon does not serve.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	d, srv := testDaemon(t, openAPIConfig(model.URL), nil)
	doc := fetchOpenAPI(t, srv.URL)

	var served []string
	for _, p := range d.Routes() {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			// "/api/" is the 404 for paths no route matches; a pattern
			// without a method under /api would be a route the document
			// cannot describe per method, so it fails here.
			if p != "/api/" && strings.HasPrefix(p, "/api/") {
				t.Errorf("route %q under /api has no method", p)
			}
			continue
		}
		if strings.HasPrefix(path, "/api/") {
			served = append(served, method+" "+path)
		}
	}
	slices.Sort(served)
	documented := doc.operations()
	if len(served) < 25 {
		t.Fatalf("only %d /api routes served: %v", len(served), served)
	}
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("%s is served but not in the OpenAPI document", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(served, r) {
			t.Errorf("%s is in the OpenAPI document but not served", r)
		}
	}
}

// schemaFor returns the validator of the document's schema for the
// answer of method path (a documented path) with status, as JSON.
func (d openAPIDoc) schemaFor(t *testing.T, method, path string, status int) *jsonschema.Resolved {
	t.Helper()
	item, _ := d.raw["paths"].(map[string]any)[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		t.Fatalf("%s %s is not documented", method, path)
	}
	r, _ := op["responses"].(map[string]any)[fmt.Sprint(status)].(map[string]any)
	if r == nil {
		t.Fatalf("%s %s: status %d is not documented", method, path, status)
	}
	if ref, ok := r["$ref"].(string); ok {
		r = d.raw["components"].(map[string]any)["responses"].(map[string]any)[strings.TrimPrefix(ref, "#/components/responses/")].(map[string]any)
	}
	content, _ := r["content"].(map[string]any)["application/json"].(map[string]any)
	if content == nil {
		t.Fatalf("%s %s %d: no application/json schema", method, path, status)
	}
	return d.resolve(t, content["schema"])
}

// resolve makes schema a JSON Schema 2020-12 document whose $defs are
// the components' schemas (OpenAPI 3.1's schema objects are JSON Schema
// 2020-12; only their $refs point into the OpenAPI document).
func (d openAPIDoc) resolve(t *testing.T, schema any) *jsonschema.Resolved {
	t.Helper()
	root := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$defs":   d.raw["components"].(map[string]any)["schemas"],
		"allOf":   []any{schema},
	}
	b, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), `"#/components/schemas/`, `"#/$defs/`))
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve schema: %v", err)
	}
	return rs
}

// TestOpenAPIDescribesAnswers validates a running daemon's real answers
// against the document's schemas for the main routes: each answer's
// status must be documented and its body must match that status's
// schema.
func TestOpenAPIDescribesAnswers(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	_, srv := testDaemon(t, openAPIConfig(model.URL), nil)
	doc := fetchOpenAPI(t, srv.URL)

	do := func(method, path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// Data for the lists: a session (a message), an audit record (a tool
	// call by hand), an agent created through the API.
	var sent struct {
		SessionID string `json:"session_id"`
	}
	code, b := do("POST", "/api/agents/a/messages", `{"message":"hi"}`)
	if code != 200 || json.Unmarshal(b, &sent) != nil || sent.SessionID == "" {
		t.Fatalf("message: %d %s", code, b)
	}
	if code, b := do("POST", "/api/tools/agent_list/call", `{}`); code != 200 {
		t.Fatalf("tool call: %d %s", code, b)
	}

	for _, c := range []struct {
		method, path, body string
		doc                string // the documented path, when path fills its wildcards
		want               int
	}{
		{"GET", "/api/health", "", "", 200},
		{"POST", "/api/admin/reload", `{}`, "", 200},
		{"GET", "/api/agents", "", "", 200},
		{"POST", "/api/agents", `{"name":"b","provider":"fake","model":"m"}`, "", 201},
		{"GET", "/api/agents/b", "", "/api/agents/{name}", 200},
		{"PUT", "/api/agents/b", `{"name":"b","provider":"fake","model":"m2"}`, "/api/agents/{name}", 200},
		{"POST", "/api/agents/a/messages", `{"message":"again","session_id":"` + sent.SessionID + `"}`, "/api/agents/{name}/messages", 200},
		{"GET", "/api/sessions?limit=5", "", "/api/sessions", 200},
		{"GET", "/api/sessions/" + sent.SessionID, "", "/api/sessions/{id}", 200},
		{"GET", "/api/tools", "", "", 200},
		{"POST", "/api/tools/agent_list/call", `{}`, "/api/tools/{name}/call", 200},
		{"GET", "/api/audit?limit=10&offset=0", "", "/api/audit", 200},
		{"GET", "/api/runs", "", "", 200},
		{"GET", "/api/approvals", "", "", 200},
		{"GET", "/api/ui/session", "", "", 200},
		{"GET", "/api/mcp/servers", "", "", 200},
		{"GET", "/api/a2a/agents", "", "", 200},
		{"GET", "/api/a2a/tasks", "", "", 200},
		// Errors have one shape, and bad paging is a 400 naming its parameter.
		{"GET", "/api/audit?limit=5000", "", "/api/audit", 400},
		{"GET", "/api/sessions?offset=-1", "", "/api/sessions", 400},
		{"GET", "/api/a2a/tasks?limit=0", "", "/api/a2a/tasks", 400},
		{"GET", "/api/agents/nosuch", "", "/api/agents/{name}", 404},
		{"POST", "/api/approvals/nosuch", `{"decision":"maybe"}`, "/api/approvals/{id}", 400},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			code, b := do(c.method, c.path, c.body)
			if code != c.want {
				t.Fatalf("%d %s, want %d", code, b, c.want)
			}
			p := c.doc
			if p == "" {
				p = c.path
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("answer is not JSON: %v: %.200s", err, b)
			}
			if err := doc.schemaFor(t, c.method, p, code).Validate(v); err != nil {
				t.Errorf("the answer does not match the document: %v\n%s", err, b)
			}
		})
	}

	// The schemas are strict enough to catch a regression: the audit
	// record as it was answered before (Go field names) fails.
	t.Run("the audit schema refuses PascalCase", func(t *testing.T) {
		old := map[string]any{"records": []any{map[string]any{"ID": 1, "Time": "2026-01-01T00:00:00Z", "Tool": "t", "Outcome": "ok", "duration_ms": 1}},
			"total": 1, "limit": 10, "offset": 0}
		if err := doc.schemaFor(t, "GET", "/api/audit", 200).Validate(old); err == nil {
			t.Error("a PascalCase audit record validates")
		}
	})
}

// TestAuditPagesThroughTenThousand: /api/audit pages through 10,000
// records with limit and offset, each page the next newest-first window
// of the whole, with the total on every page; bad values are a 400
// naming the parameter and its bounds.
func TestAuditPagesThroughTenThousand(t *testing.T) {
	d, srv := testDaemon(t, `listen = "127.0.0.1:0"`, nil)
	const n = 10000
	recs := make([]store.AuditRecord, n)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range recs {
		recs[i] = store.AuditRecord{Time: t0.Add(time.Duration(i) * time.Second), Agent: "a", Tool: fmt.Sprintf("t%05d", i), Decision: "allow", Outcome: "ok"}
	}
	ba, ok := d.Store.(auditlog.BatchAppender)
	if !ok {
		t.Fatalf("the store (%T) cannot append a batch", d.Store)
	}
	if err := ba.AppendAuditBatch(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	get := func(q string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/api/audit?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	next := n - 1 // newest first
	for offset := 0; offset < n; offset += 1000 {
		code, out := get(fmt.Sprintf("limit=1000&offset=%d", offset))
		if code != 200 || out["total"] != float64(n) || out["limit"] != float64(1000) || out["offset"] != float64(offset) {
			t.Fatalf("offset %d: %d total %v limit %v offset %v", offset, code, out["total"], out["limit"], out["offset"])
		}
		page, _ := out["records"].([]any)
		if len(page) != 1000 {
			t.Fatalf("offset %d: %d records, want 1000", offset, len(page))
		}
		for _, r := range page {
			if tool := r.(map[string]any)["tool"]; tool != fmt.Sprintf("t%05d", next) {
				t.Fatalf("offset %d: record %v, want t%05d", offset, tool, next)
			}
			next--
		}
	}
	if next != -1 {
		t.Fatalf("paged to t%05d, want every record", next+1)
	}
	if code, out := get("offset=10000"); code != 200 || out["total"] != float64(n) || len(out["records"].([]any)) != 0 {
		t.Errorf("past the end: %d %v records, total %v", code, len(out["records"].([]any)), out["total"])
	}
	if code, out := get("tool=t00042&limit=1"); code != 200 || out["total"] != float64(1) {
		t.Errorf("filtered total: %d %v", code, out["total"])
	}
	for _, c := range []struct{ q, field, says string }{
		{"limit=0", "limit", "1 to 1000"},
		{"limit=1001", "limit", "1 to 1000"},
		{"limit=ten", "limit", "1 to 1000"},
		{"offset=-1", "offset", "0 or more"},
		{"offset=1.5", "offset", "0 or more"},
	} {
		code, out := get(c.q)
		e, _ := out["error"].(map[string]any)
		if msg, _ := e["message"].(string); code != 400 || e["field"] != c.field || !strings.Contains(msg, c.says) {
			t.Errorf("%s: %d %v, want 400 naming %s and %q", c.q, code, e, c.field, c.says)
		}
	}
}

// TestListRoutesPageAlike: every list route under /api takes limit and
// offset and answers its items with total, limit and offset; bad values
// are a 400 naming the parameter.
func TestListRoutesPageAlike(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	_, srv := testDaemon(t, openAPIConfig(model.URL), nil)
	get := func(path string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return resp.StatusCode, out
	}
	// Two of everything the lists can hold here without a peer: two
	// sessions (and so two finished runs), two audit records.
	for range 2 {
		req, _ := http.NewRequest("POST", srv.URL+"/api/agents/a/messages", strings.NewReader(`{"message":"hi"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		req, _ = http.NewRequest("POST", srv.URL+"/api/tools/agent_list/call", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, c := range []struct {
		path, key string
		atLeast   int // items that exist, so a page of one is a real window
	}{
		{"/api/agents", "agents", 1},
		{"/api/sessions", "sessions", 2},
		{"/api/tools", "tools", 2},
		{"/api/audit", "records", 2},
		{"/api/runs", "runs", 2},
		{"/api/approvals", "approvals", 0},
		{"/api/a2a/agents", "agents", 0},
		{"/api/a2a/tasks", "tasks", 0},
		{"/api/principals", "principals", 1},
	} {
		t.Run(c.path, func(t *testing.T) {
			code, all := get(c.path)
			total, _ := all["total"].(float64)
			if code != 200 || all["limit"] != float64(httpapi.DefaultLimit) || all["offset"] != float64(0) || int(total) < c.atLeast {
				t.Fatalf("GET %s: %d total %v limit %v offset %v", c.path, code, all["total"], all["limit"], all["offset"])
			}
			items, ok := all[c.key].([]any)
			if !ok || len(items) != int(total) {
				t.Fatalf("GET %s: %d %s of a total of %v", c.path, len(items), c.key, total)
			}
			if total >= 2 {
				_, page := get(c.path + "?limit=1&offset=1")
				got, _ := page[c.key].([]any)
				if page["total"] != total || page["limit"] != float64(1) || page["offset"] != float64(1) || len(got) != 1 {
					t.Fatalf("limit=1&offset=1: %v", page)
				}
				a, _ := json.Marshal(got[0])
				b, _ := json.Marshal(items[1])
				if c.key != "runs" && string(a) != string(b) { // a run's record moves while it is kept
					t.Errorf("limit=1&offset=1 answers %s, want the second item %s", a, b)
				}
			}
			if _, past := get(fmt.Sprintf("%s?offset=%d", c.path, int(total)+5)); past["total"] != total || len(past[c.key].([]any)) != 0 {
				t.Errorf("past the end: %v", past)
			}
			for q, field := range map[string]string{"limit=0": "limit", "limit=1001": "limit", "offset=-3": "offset", "offset=x": "offset"} {
				code, out := get(c.path + "?" + q)
				e, _ := out["error"].(map[string]any)
				if code != 400 || e["field"] != field || !strings.HasPrefix(fmt.Sprint(e["message"]), field+": ") {
					t.Errorf("%s: %d %v, want 400 naming %s", q, code, e, field)
				}
			}
		})
	}
}
