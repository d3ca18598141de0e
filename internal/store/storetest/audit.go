package storetest

import (
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

var auditTests = map[string]func(t *testing.T, s suite){
	"AppendRoundTrip": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		want := store.AuditRecord{
			Time: at(0), Agent: "a", SessionID: "s1", Tool: "fs.read",
			ArgsDigest: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			Decision:   "approved", Outcome: "ok", Detail: "read 3 files", Untrusted: true,
			Duration: 1234567891 * time.Nanosecond, Principal: "ci-bot",
		}
		id, err := st.AppendAudit(ctx, want)
		ok(t, err, "AppendAudit")
		if id <= 0 {
			t.Errorf("AppendAudit ID = %d, want > 0", id)
		}
		got, err := st.QueryAudit(ctx, store.AuditFilter{})
		ok(t, err, "QueryAudit")
		if len(got) != 1 {
			t.Fatalf("QueryAudit returned %d records, want 1", len(got))
		}
		checkTime(t, "Time", got[0].Time, want.Time)
		want.ID, want.Time = id, got[0].Time
		if got[0] != want {
			t.Errorf("QueryAudit = %+v, want %+v", got[0], want)
		}
	},
	"AppendAssignsIDsAndTime": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		seen := map[int64]bool{}
		before := time.Now()
		for range 5 {
			id, err := st.AppendAudit(ctx, store.AuditRecord{Agent: "a", Tool: "t", Decision: "allow", Outcome: "ok"})
			ok(t, err, "AppendAudit")
			if seen[id] {
				t.Errorf("ID %d assigned twice", id)
			}
			seen[id] = true
		}
		after := time.Now()
		got, err := st.QueryAudit(ctx, store.AuditFilter{})
		ok(t, err, "QueryAudit")
		if len(got) != 5 {
			t.Fatalf("QueryAudit returned %d records, want 5", len(got))
		}
		for _, r := range got {
			if !seen[r.ID] {
				t.Errorf("QueryAudit returned unknown ID %d", r.ID)
			}
			checkRecent(t, "default Time", r.Time, before, after)
		}
	},
	"ToolMatch": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		tools := []string{"mcp_github_create_issue", "MCP_GitHub_list", "file_read", "file_100%", "axb", "a_b", `back\slash`}
		for i, tool := range tools {
			_, err := st.AppendAudit(ctx, store.AuditRecord{Time: at(i), Tool: tool, Detail: tool})
			ok(t, err, "AppendAudit(%s)", tool)
		}
		for _, c := range []struct {
			match string
			want  []string
		}{
			{"github", []string{"MCP_GitHub_list", "mcp_github_create_issue"}}, // substring, any case
			{"GITHUB_L", []string{"MCP_GitHub_list"}},                          // ...
			{"mcp_*_list", []string{"MCP_GitHub_list"}},                        // a glob is the whole name
			{"mcp_*", []string{"MCP_GitHub_list", "mcp_github_create_issue"}},  // ...
			{"file_?ead", []string{"file_read"}},                               // ? is one character
			{"file_?", nil},                                                    // ...not more
			{"a_b", []string{"a_b"}},                                           // _ is literal, not LIKE's any character
			{"100%", []string{"file_100%"}},                                    // % is literal
			{"*%", []string{"file_100%"}},                                      // ...in a glob too
			{`\`, []string{`back\slash`}},                                      // the escape character is literal
			{"*", []string{`back\slash`, "a_b", "axb", "file_100%", "file_read", "MCP_GitHub_list", "mcp_github_create_issue"}},
			{"zzz", nil},
		} {
			t.Run(c.match, func(t *testing.T) {
				f := store.AuditFilter{ToolMatch: c.match}
				got, err := st.QueryAudit(ctx, f)
				ok(t, err, "QueryAudit(%+v)", f)
				equalStrings(t, "records", keys(got, func(r store.AuditRecord) string { return r.Detail }), c.want)
				n, err := st.CountAudit(ctx, f)
				ok(t, err, "CountAudit(%+v)", f)
				if n != len(c.want) {
					t.Errorf("CountAudit = %d, want %d", n, len(c.want))
				}
				// The Go rule says the same.
				var want []string
				for i := len(tools) - 1; i >= 0; i-- {
					if store.MatchTool(c.match, tools[i]) {
						want = append(want, tools[i])
					}
				}
				equalStrings(t, "store.MatchTool", want, c.want)
			})
		}
	},
	"Query": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ids := map[string]int64{}
		// Appended out of time order so that ordering by ID alone fails;
		// r2 and r4 share a Time, and r4 was appended later.
		for _, x := range []struct {
			name, agent, session, tool, principal, decision, outcome string
			minute                                                   int
		}{
			{"r1", "a", "s1", "t1", "alice", "allow", "ok", 1},
			{"r2", "b", "s1", "t2", "bob", "deny", "denied", 3},
			{"r3", "a", "s2", "t1", "alice", "approved", "error", 2},
			{"r4", "a", "s2", "t2", "", "allow", "ok", 3},
		} {
			id, err := st.AppendAudit(ctx, store.AuditRecord{Time: at(x.minute), Agent: x.agent, SessionID: x.session, Tool: x.tool,
				Decision: x.decision, Outcome: x.outcome, Detail: x.name, Principal: x.principal})
			ok(t, err, "AppendAudit(%s)", x.name)
			ids[x.name] = id
		}
		for _, c := range []struct {
			name string
			f    store.AuditFilter
			want []string
		}{
			{"All", store.AuditFilter{}, []string{"r4", "r2", "r3", "r1"}},
			{"Agent", store.AuditFilter{Agent: "a"}, []string{"r4", "r3", "r1"}},
			{"Session", store.AuditFilter{SessionID: "s1"}, []string{"r2", "r1"}},
			{"Tool", store.AuditFilter{Tool: "t2"}, []string{"r4", "r2"}},
			{"SinceIsInclusive", store.AuditFilter{Since: at(2)}, []string{"r4", "r2", "r3"}},
			{"SinceAfterAll", store.AuditFilter{Since: at(4)}, nil},
			{"Combined", store.AuditFilter{Agent: "a", Since: at(2)}, []string{"r4", "r3"}},
			{"Limit", store.AuditFilter{Limit: 2}, []string{"r4", "r2"}},
			{"FilterLimit", store.AuditFilter{Tool: "t1", Limit: 1}, []string{"r3"}},
			{"LimitOffset", store.AuditFilter{Limit: 2, Offset: 1}, []string{"r2", "r3"}},
			{"OffsetOnly", store.AuditFilter{Offset: 3}, []string{"r1"}},
			{"OffsetPastEnd", store.AuditFilter{Offset: 9}, nil},
			{"FilterLimitOffset", store.AuditFilter{Agent: "a", Limit: 1, Offset: 1}, []string{"r3"}},
			{"NoMatch", store.AuditFilter{Agent: "zzz"}, nil},
			{"Principal", store.AuditFilter{Principal: "alice"}, []string{"r3", "r1"}},
			{"PrincipalAndTool", store.AuditFilter{Principal: "alice", Tool: "t1", Limit: 1}, []string{"r3"}},
			{"Decision", store.AuditFilter{Decision: "allow"}, []string{"r4", "r1"}},
			{"Outcome", store.AuditFilter{Outcome: "error"}, []string{"r3"}},
			{"UntilIsExclusive", store.AuditFilter{Until: at(3)}, []string{"r3", "r1"}},
			{"SinceUntil", store.AuditFilter{Since: at(2), Until: at(3)}, []string{"r3"}},
			{"DecisionAgentUntil", store.AuditFilter{Decision: "allow", Agent: "a", Until: at(3)}, []string{"r1"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, err := st.QueryAudit(ctx, c.f)
				ok(t, err, "QueryAudit(%+v)", c.f)
				equalStrings(t, "records", keys(got, func(r store.AuditRecord) string { return r.Detail }), c.want)
				for _, r := range got {
					if r.ID != ids[r.Detail] {
						t.Errorf("%s has ID %d, AppendAudit returned %d", r.Detail, r.ID, ids[r.Detail])
					}
				}
				// The count is of every match, whatever the page.
				all := c.f
				all.Limit, all.Offset = 0, 0
				rs, err := st.QueryAudit(ctx, all)
				ok(t, err, "QueryAudit(%+v)", all)
				n, err := st.CountAudit(ctx, c.f)
				ok(t, err, "CountAudit(%+v)", c.f)
				if n != len(rs) {
					t.Errorf("CountAudit(%+v) = %d, want %d", c.f, n, len(rs))
				}
			})
		}
	},
	// Detail is a tool's error cut to a length, possibly in the middle of
	// a character, and may hold a NUL: the record is kept as it is.
	"ArbitraryDetail": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		details := []string{"Fehler: Datei nicht gefunden: \xc3", "nul\x00byte", "\xff"}
		for i, d := range details {
			_, err := st.AppendAudit(ctx, store.AuditRecord{Time: at(i), Tool: "t", Detail: d})
			ok(t, err, "AppendAudit(%q)", d)
		}
		got, err := st.QueryAudit(ctx, store.AuditFilter{})
		ok(t, err, "QueryAudit")
		if len(got) != len(details) {
			t.Fatalf("QueryAudit returned %d records, want %d", len(got), len(details))
		}
		for i, r := range got {
			if want := details[len(details)-1-i]; r.Detail != want {
				t.Errorf("Detail = %q, want %q", r.Detail, want)
			}
		}
	},
	"Duration": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		durations := []time.Duration{0, 1, 999 * time.Microsecond, 1500 * time.Millisecond, 36 * time.Hour, 1<<62 + 7}
		for i, d := range durations {
			_, err := st.AppendAudit(ctx, store.AuditRecord{Time: at(i), Tool: "t", Duration: d})
			ok(t, err, "AppendAudit(%v)", d)
		}
		got, err := st.QueryAudit(ctx, store.AuditFilter{})
		ok(t, err, "QueryAudit")
		if len(got) != len(durations) {
			t.Fatalf("QueryAudit returned %d records, want %d", len(got), len(durations))
		}
		for i, r := range got {
			if want := durations[len(durations)-1-i]; r.Duration != want {
				t.Errorf("Duration = %v, want %v", r.Duration, want)
			}
		}
	},
}
