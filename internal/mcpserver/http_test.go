package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store"
)

func TestOriginPolicy(t *testing.T) {
	p := newOriginPolicy([]string{"https://app.example.com", "http://tools.example:8080/", "not a url"})
	tests := []struct {
		origin string
		want   bool
	}{
		{"http://localhost:6274", true},
		{"http://127.0.0.1", true},
		{"http://[::1]:3000", true},
		{"http://app.localhost:5173", true},
		{"https://APP.example.com", true},
		{"https://app.example.com:443", true},
		{"http://tools.example:8080", true},
		{"http://app.example.com", false}, // scheme differs
		{"https://evil.example", false},
		{"http://localhost.evil.example", false},
		{"null", false},
		{"file://", false},
		{"http://user@localhost", false},
		{"http://127.0.0.2:80", true}, // all of 127/8 is loopback
	}
	for _, tc := range tests {
		if got := p.allowed(tc.origin); got != tc.want {
			t.Errorf("allowed(%q) = %v, want %v", tc.origin, got, tc.want)
		}
	}
}

// FuzzOriginPolicy checks the origin matcher: normalising is idempotent,
// a configured origin always matches itself, and nothing panics.
func FuzzOriginPolicy(f *testing.F) {
	f.Add("https://app.example.com", "https://app.example.com:443/")
	f.Add("http://[::1]:80", "http://localhost")
	f.Add("null", "HTTP://EXAMPLE.COM")
	f.Fuzz(func(t *testing.T, configured, origin string) {
		p := newOriginPolicy([]string{configured})
		_ = p.allowed(origin)
		n, ok := normalizeOrigin(configured)
		if !ok {
			return
		}
		n2, ok2 := normalizeOrigin(n)
		if !ok2 || n2 != n {
			t.Fatalf("normalize(%q) = %q, normalize of that = %q, %v", configured, n, n2, ok2)
		}
		if !p.allowed(configured) {
			t.Fatalf("configured origin %q (normalised %q) is refused", configured, n)
		}
	})
}

func TestHTTPEdges(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: config.MCPServe{AllowedOrigins: []string{"https://ui.example"}}, maxBytes: 1024})
	ts := h.httpServer(t)
	url := ts.URL + "/mcp"
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

	do := func(method, body string, hdr map[string]string, chunked bool) (*http.Response, string) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
			if chunked {
				rd = io.MultiReader(rd) // hides the length: sent chunked
			}
		}
		req, err := http.NewRequest(method, url, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}

	resp, _ := do(http.MethodPost, initBody, nil, false)
	sid := resp.Header.Get(headerSessionID)
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	big := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"x","arguments":{"s":"` + strings.Repeat("y", 2000) + `"}}}`

	tests := []struct {
		name       string
		method     string
		body       string
		hdr        map[string]string
		chunked    bool
		wantStatus int
		wantBody   string
		wantHeader [2]string
	}{
		{"foreign origin", http.MethodPost, initBody, map[string]string{"Origin": "https://evil.example"}, false, 403, `"code":-32600`, [2]string{}},
		{"configured origin", http.MethodPost, initBody, map[string]string{"Origin": "https://ui.example"}, false, 200, `"protocolVersion"`, [2]string{"Access-Control-Allow-Origin", "https://ui.example"}},
		{"loopback origin", http.MethodPost, initBody, map[string]string{"Origin": "http://localhost:6274"}, false, 200, `"protocolVersion"`, [2]string{"Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version"}},
		{"preflight", http.MethodOptions, "", map[string]string{"Origin": "http://localhost:6274", "Access-Control-Request-Method": "POST"}, false, 204, "", [2]string{"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"}},
		{"rebinding host", http.MethodPost, initBody, map[string]string{"Host": "evil.example"}, false, 403, "", [2]string{}},
		{"put", http.MethodPut, initBody, nil, false, 405, `"code":-32600`, [2]string{"Allow", "GET, POST, DELETE, OPTIONS"}},
		{"get without session", http.MethodGet, "", nil, false, 400, "", [2]string{}},
		{"unknown session", http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{headerSessionID: "nope"}, false, 404, "", [2]string{}},
		{"unknown notification", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/whatever"}`, map[string]string{headerSessionID: sid}, false, 202, "", [2]string{}},
		{"unknown method", http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"nope/nope"}`, map[string]string{headerSessionID: sid}, false, 200, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: \"nope/nope\""}}`, [2]string{}},
		{"oversized", http.MethodPost, big, map[string]string{headerSessionID: sid}, false, 413, `{"jsonrpc":"2.0","id":"big","error":{"code":-32600,"message":"message too large: over the 1 KB limit"}}`, [2]string{}},
		{"oversized chunked", http.MethodPost, big, nil, true, 413, `"id":"big"`, [2]string{}},
		{"batch", http.MethodPost, `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, map[string]string{headerSessionID: sid, headerProtocolVersion: "2025-11-25"}, false, 400, "batching", [2]string{}},
		{"delete", http.MethodDelete, "", map[string]string{headerSessionID: sid}, false, 204, "", [2]string{}},
		{"after delete", http.MethodPost, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, map[string]string{headerSessionID: sid}, false, 404, "", [2]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if host, ok := tc.hdr["Host"]; ok {
				// net/http takes the Host header from the request field.
				req, _ := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
				req.Host = host
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.wantStatus {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
				}
				return
			}
			resp, body := do(tc.method, tc.body, tc.hdr, tc.chunked)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tc.wantStatus, body)
			}
			if !strings.Contains(body, tc.wantBody) {
				t.Errorf("body %q lacks %q", body, tc.wantBody)
			}
			if k := tc.wantHeader[0]; k != "" && resp.Header.Get(k) != tc.wantHeader[1] {
				t.Errorf("header %s = %q, want %q", k, resp.Header.Get(k), tc.wantHeader[1])
			}
		})
	}
}

// TestHTTPJSONErrorsAreJSONRPC checks every error this package writes
// itself is a JSON-RPC response.
func TestHTTPJSONErrorsAreJSONRPC(t *testing.T) {
	for _, b := range [][]byte{
		errorResponse(nil, errNotJSON),
		errorResponse(json.RawMessage(`"x\"y"`), &protocolError{errInvalidRequest, "quote \" newline \n control \x01 <tag>"}),
	} {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &m); err != nil || m.JSONRPC != "2.0" || m.Error.Code == 0 {
			t.Errorf("%s: %v", b, err)
		}
	}
}

// TestDroppedStreamCancelsRun checks that a client dropping the response
// stream of a session's tools/call (without notifications/cancelled)
// cancels the agent run: nobody could ever receive its answer.
func TestDroppedStreamCancelsRun(t *testing.T) {
	h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Text: strings.Repeat("slow ", 100), Chunks: 100, Delay: 100 * time.Millisecond})})
	ts := h.httpServer(t)
	post := func(ctx context.Context, body, sid string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(headerSessionID, sid)
			req.Header.Set(headerProtocolVersion, "2025-11-25")
		}
		return http.DefaultClient.Do(req)
	}
	ctx := context.Background()
	resp, err := post(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get(headerSessionID)
	if resp, err = post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := post(cctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentd_agent_helper_bot","arguments":{"message":"slow"}}}`, sid)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	waitFor(t, func() bool { return h.provider.Count() >= 1 })
	start := time.Now()
	cancel()
	<-done
	waitFor(t, func() bool {
		list, _ := h.db.ListSessions(ctx, store.SessionFilter{})
		if len(list) == 0 {
			return false
		}
		pctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_, err := h.kernel.Run(pctx, &agent.RunRequest{Agent: "helper-bot", SessionID: list[0].ID, Input: llm.TextMessage(llm.RoleUser, "probe")})
		return !errors.Is(err, agent.ErrSessionBusy)
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the run went on for %v after the stream was dropped", d)
	}
}
