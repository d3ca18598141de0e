package mcpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/principal"
)

// TestReplicatedSessionsAcrossServers: two servers sharing session keys
// (replicas, here without a database): a session initialized on one is
// served by the other, only to the principal that opened it, and a
// server with other keys knows nothing of it.
func TestReplicatedSessionsAcrossServers(t *testing.T) {
	keys := &Replicas{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}}
	model := llmtest.Always(llmtest.Reply{Text: "hi"})
	users := map[string]*principal.Principal{
		"alice": {Name: "alice", Agents: []string{"*"}},
		"bob":   {Name: "bob", Agents: []string{"*"}},
	}
	// The daemon's auth middleware, reduced: the bearer token names the
	// principal.
	serve := func(h *harness) *httptest.Server {
		mux := http.NewServeMux()
		h.srv.Mount(mux)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]; p != nil {
				r = r.WithContext(principal.NewContext(r.Context(), p))
			}
			mux.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		return ts
	}
	a := serve(newHarness(t, harnessOptions{model: model, replicas: keys}))
	b := serve(newHarness(t, harnessOptions{model: model, replicas: keys}))
	other := serve(newHarness(t, harnessOptions{model: model, replicas: &Replicas{Keys: [][]byte{[]byte(strings.Repeat("x", 32))}}}))

	post := func(base, user, sid, body string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+user)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	code, hdr, body := post(a.URL, "alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	if code != http.StatusOK || !strings.HasPrefix(sid, sealPrefix) {
		t.Fatalf("initialize on A: %d %q %s", code, sid, body)
	}
	if code, _, _ := post(b.URL, "alice", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized on B: %d", code)
	}
	code, _, body = post(b.URL, "alice", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if code != http.StatusOK || !strings.Contains(body, "agentd_agent_helper_bot") {
		t.Fatalf("tools/list on B: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, base, user string
		want             int
	}{
		{"another principal on the replica holding it", b.URL, "bob", http.StatusForbidden},
		{"another principal on a replica restoring it", a.URL, "bob", http.StatusForbidden},
		{"a replica with other keys", other.URL, "alice", http.StatusNotFound},
	} {
		if code, _, body := post(tc.base, tc.user, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
}
