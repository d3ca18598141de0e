package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// serverNames returns the sorted names of ss.
func serverNames(ss []store.MCPServer) []string {
	names := keys(ss, func(s store.MCPServer) string { return s.Name })
	slices.Sort(names)
	return names
}

var mcpTests = map[string]func(t *testing.T, s suite){
	"PutList": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		got, err := st.ListMCPServers(ctx)
		ok(t, err, "ListMCPServers on empty store")
		if len(got) != 0 {
			t.Fatalf("ListMCPServers on empty store = %d servers", len(got))
		}
		cfg := map[string]any{
			"github": map[string]any{"url": "https://example.com/mcp", "headers": map[string]string{"X": "y"}},
			"fs":     map[string]any{"command": []string{"mcp-fs", "/tmp"}},
		}
		before := time.Now()
		for _, name := range []string{"github", "fs"} {
			ok(t, st.PutMCPServer(ctx, store.MCPServer{Name: name, Config: raw(t, cfg[name])}), "PutMCPServer(%s)", name)
		}
		after := time.Now()
		got, err = st.ListMCPServers(ctx)
		ok(t, err, "ListMCPServers")
		equalStrings(t, "servers", serverNames(got), []string{"fs", "github"})
		for _, srv := range got {
			checkJSON(t, srv.Name+" config", srv.Config, raw(t, cfg[srv.Name]))
			checkRecent(t, srv.Name+" CreatedAt", srv.CreatedAt, before, after)
		}
	},
	"PutReplaces": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.PutMCPServer(ctx, store.MCPServer{Name: "x", Config: raw(t, map[string]int{"v": 1}), CreatedAt: at(0)}), "first PutMCPServer")
		ok(t, st.PutMCPServer(ctx, store.MCPServer{Name: "x", Config: raw(t, map[string]int{"v": 2}), CreatedAt: at(9)}), "second PutMCPServer")
		got, err := st.ListMCPServers(ctx)
		ok(t, err, "ListMCPServers")
		if len(got) != 1 {
			t.Fatalf("ListMCPServers = %d servers after replacing one, want 1", len(got))
		}
		checkJSON(t, "config", got[0].Config, raw(t, map[string]int{"v": 2}))
		checkTime(t, "CreatedAt", got[0].CreatedAt, at(0))
	},
	"Delete": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.PutMCPServer(ctx, store.MCPServer{Name: "a", Config: raw(t, 1)}), "PutMCPServer(a)")
		ok(t, st.PutMCPServer(ctx, store.MCPServer{Name: "b", Config: raw(t, 2)}), "PutMCPServer(b)")
		ok(t, st.DeleteMCPServer(ctx, "b"), "DeleteMCPServer(b)")
		isErr(t, st.DeleteMCPServer(ctx, "b"), store.ErrNotFound, "second DeleteMCPServer(b)")
		got, err := st.ListMCPServers(ctx)
		ok(t, err, "ListMCPServers")
		equalStrings(t, "servers", serverNames(got), []string{"a"})
	},
}
