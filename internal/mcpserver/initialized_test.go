package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// levelLog keeps the level and message of every record logged through it.
type levelLog struct {
	mu   sync.Mutex
	recs []string
}

func (l *levelLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *levelLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Level.String()+" "+r.Message)
	return nil
}
func (l *levelLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levelLog) WithGroup(string) slog.Handler      { return l }

func (l *levelLog) atLeast(lv slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.recs {
		var got slog.Level
		name, _, _ := strings.Cut(r, " ")
		if got.UnmarshalText([]byte(name)) == nil && got >= lv {
			out = append(out, r)
		}
	}
	return out
}

// TestInitializedOnAnotherReplicaIsNoError: a client's initialized
// notification that the balancer gives to another replica than its
// initialize (which restores the session, initialized) is protocol as
// usual: no ERROR (nor WARN) in that replica's log, and the session
// works there. A second initialized on the replica that initialized the
// session is a real duplicate, which the SDK still reports.
func TestInitializedOnAnotherReplicaIsNoError(t *testing.T) {
	keys := &Replicas{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}}
	model := llmtest.Always(llmtest.Reply{Text: "hi"})
	serve := func(log *levelLog) string {
		h := newHarness(t, harnessOptions{model: model, replicas: keys, logger: slog.New(log)})
		mux := http.NewServeMux()
		h.srv.Mount(mux)
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		return ts.URL
	}
	logA, logB := &levelLog{}, &levelLog{}
	a, b := serve(logA), serve(logB)
	post := func(base, sid, body string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
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
	code, hdr, body := post(a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize on A: %d %q %s", code, sid, body)
	}
	if code, _, body := post(b, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized on B: %d %s", code, body)
	}
	if code, _, body := post(b, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusOK || !strings.Contains(body, "agentd_agent_") {
		t.Fatalf("tools/list on B: %d %s", code, body)
	}
	if bad := logB.atLeast(slog.LevelWarn); len(bad) > 0 {
		t.Errorf("replica B logged %q for an ordinary session", bad)
	}

	// The control: on A, which never restored it, a second initialized
	// is a duplicate, and the SDK's ERROR for it still comes through.
	post(a, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(a, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// The SDK answers a notification's POST (202) before it handles the
	// notification: its log line comes a moment later.
	var dup bool
	for deadline := time.Now().Add(5 * time.Second); !dup && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, r := range logA.atLeast(slog.LevelError) {
			dup = dup || strings.Contains(r, "duplicate initialized")
		}
	}
	if !dup {
		t.Errorf("a real duplicate on A was not reported: %q", logA.atLeast(slog.LevelDebug))
	}
}
