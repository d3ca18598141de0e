package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentd/agentd/internal/telemetry"
)

// syncBuffer is a bytes.Buffer safe for the daemon's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRequestIDsAndTraceIDsInLogs: every answer carries X-Request-Id (the
// client's, or a new one), error bodies repeat it, and the JSON log
// records of a request carry it with the trace and span ids, so an error
// a client reports can be found in the log and in the trace.
func TestRequestIDsAndTraceIDsInLogs(t *testing.T) {
	var buf syncBuffer
	log := slog.New(telemetry.LogHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	rcv := newOTLPReceiver(t)
	h := newHarnessLog(t, fmt.Sprintf("\n[telemetry]\nendpoint = %q\n", rcv.URL), nil, log)

	const traceID = "0af7651916cd43dd8448eb211c80319c"
	resp, body := h.do("GET", "/api/sessions/missing", "", nil, http.Header{
		"X-Request-Id": {"client-req-1"},
		"Traceparent":  {"00-" + traceID + "-b7ad6b7169203331-01"},
	})
	if resp.StatusCode != 404 || resp.Header.Get("X-Request-Id") != "client-req-1" {
		t.Fatalf("status %d, X-Request-Id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
	var e struct {
		Error struct {
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.RequestID != "client-req-1" {
		t.Fatalf("error body %s: request_id %q", body, e.Error.RequestID)
	}

	// Without one, or with one that is not a sane token, a new id.
	resp, body = h.do("GET", "/api/agents/nope", "-", nil, http.Header{"X-Request-Id": {"bad id\twith spaces"}})
	id := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 401 || len(id) != 24 || !strings.Contains(string(body), `"request_id": "`+id+`"`) {
		t.Fatalf("status %d, X-Request-Id %q, body %s", resp.StatusCode, id, body)
	}

	found := false
	for line := range strings.SplitSeq(buf.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "request" || rec["request_id"] != "client-req-1" {
			continue
		}
		found = true
		if rec["trace_id"] != traceID || len(fmt.Sprint(rec["span_id"])) != 16 || rec["route"] != "/api/sessions/{id}" {
			t.Errorf("log record %v: want trace_id %s, a span_id, the route", rec, traceID)
		}
	}
	if !found {
		t.Fatalf("no JSON log record of the request with its request_id:\n%s", buf.String())
	}
}
