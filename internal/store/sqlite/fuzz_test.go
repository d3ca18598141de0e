package sqlite_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/store"
)

// FuzzRecallMemory stores arbitrary keys and values and checks that they
// come back byte for byte, and that RecallMemory finds a memory by any
// piece of its key or value in any letter case.
func FuzzRecallMemory(f *testing.F) {
	for _, seed := range []struct {
		key, value string
		from, to   uint8
	}{
		{"favorite-color", "Blue", 2, 6},
		{"Pet", "a cat named Über", 12, 16},
		{"discount", "50% off", 0, 3},
		{"code_name", `back\slash`, 3, 6},
		{"kelvin", "273 \u212a", 4, 8},
		{"İstanbul", "city", 0, 4},
		{"nul", "a\x00b", 0, 3},
		{"bad-utf8", "\xff\xfe", 0, 2},
	} {
		f.Add(seed.key, seed.value, seed.from, seed.to)
	}
	db := open(f, filepath.Join(f.TempDir(), "agentd.db"))
	f.Cleanup(func() { db.Close() })
	agents := 0
	f.Fuzz(func(t *testing.T, key, value string, from, to uint8) {
		ctx := t.Context()
		agents++
		agent := fmt.Sprint("agent-", agents) // a fresh agent per input
		err := db.PutMemory(ctx, store.Memory{Agent: agent, Key: key, Value: value})
		if key == "" {
			if err == nil {
				t.Fatal("PutMemory with an empty key succeeded")
			}
			return
		}
		if err != nil {
			t.Fatalf("PutMemory(%q, %q): %v", key, value, err)
		}
		all, err := db.RecallMemory(ctx, agent, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 || all[0].Key != key || all[0].Value != value {
			t.Fatalf("RecallMemory = %q, want key %q value %q", all, key, value)
		}
		for _, s := range []string{key, value} {
			lo, hi := min(int(from), len(s)), min(int(to), len(s))
			if lo >= hi {
				continue
			}
			piece := s[lo:hi]
			// Any case variant of a piece finds the memory: matching is
			// containment under strings.EqualFold's simple folding.
			queries := []string{piece}
			for _, v := range []string{strings.ToLower(piece), strings.ToUpper(piece)} {
				if utf8.ValidString(piece) && strings.EqualFold(v, piece) {
					queries = append(queries, v)
				}
			}
			for _, q := range queries {
				got, err := db.RecallMemory(ctx, agent, q, 1)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(got, func(m store.Memory) bool { return m.Key == key }) {
					t.Errorf("RecallMemory(%q) did not find key %q value %q", q, key, value)
				}
			}
		}
	})
}

// FuzzToolMatch stores an audit record of an arbitrary tool name and asks
// for it with an arbitrary ToolMatch: SQLite's LIKE of store.ToolLike
// must decide as store.MatchTool does (the rule the API documents and
// the contract suite holds PostgreSQL to), for valid UTF-8.
func FuzzToolMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"mcp_github_create_issue", "github"}, {"MCP_GitHub_list", "mcp_*_LIST"}, {"file_read", "file_?ead"},
		{"a_b", "a_b"}, {"axb", "a_b"}, {"100%", "*%"}, {`back\slash`, `\`}, {"x", "**?*"}, {"é_tool", "É*"},
		{"shell_exec", "*"}, {"", "?"}, {"tool", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	db := open(f, filepath.Join(f.TempDir(), "agentd.db"))
	f.Cleanup(func() { db.Close() })
	n := 0
	f.Fuzz(func(t *testing.T, tool, match string) {
		if !utf8.ValidString(tool) || !utf8.ValidString(match) || strings.ContainsRune(tool+match, 0) || match == "" {
			return
		}
		ctx := t.Context()
		n++
		agent := fmt.Sprint("fuzz-", n) // a fresh agent per input
		if _, err := db.AppendAudit(ctx, store.AuditRecord{Agent: agent, Tool: tool}); err != nil {
			t.Fatal(err)
		}
		got, err := db.CountAudit(ctx, store.AuditFilter{Agent: agent, ToolMatch: match})
		if err != nil {
			t.Fatal(err)
		}
		if want := store.MatchTool(match, tool); (got == 1) != want {
			t.Fatalf("ToolMatch %q of tool %q: SQLite says %v, store.MatchTool %v (LIKE %q)", match, tool, got == 1, want, store.ToolLike(match))
		}
	})
}
