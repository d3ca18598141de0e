package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestMetricsExposition drives a scripted workload against a daemon on
// loopback (the REST API, /mcp, A2A, an upstream MCP server on stdio, a
// fake model), scrapes /metrics, parses it with the Prometheus text
// parser and checks every metric family with plausible values; that no
// label holds a session id or a tool argument; and that every metric the
// Grafana dashboards in deploy/grafana query is exported.
func TestMetricsExposition(t *testing.T) {
	h := newHarness(t, "", nil)
	ctx := context.Background()

	// The REST API: one run (two tool calls: the upstream's echo, a tool
	// that does not exist), one 404.
	resp, body := h.do("POST", "/api/agents/worker/messages", "", map[string]string{"message": "hello " + secretArg}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("message: %d %s", resp.StatusCode, body)
	}
	sessionID := jsonField(t, body, "session_id")
	if resp, _ := h.do("GET", "/api/sessions/nope-"+secretArg, "", nil, nil); resp.StatusCode != 404 {
		t.Fatalf("missing session: %d", resp.StatusCode)
	}

	// /mcp: the agent as a tool.
	cs := h.mcpSession(ctx)
	runOverMCP(t, ctx, cs, nil)
	cs.Close()

	// A2A 0.3 JSON-RPC: a blocking send and a stream.
	for _, method := range []string{"message/send", "message/stream"} {
		msg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": map[string]any{
			"message": map[string]any{"kind": "message", "role": "user", "messageId": "m-" + method, "parts": []any{map[string]any{"kind": "text", "text": "hi"}}},
		}}
		resp, body := h.do("POST", "/a2a/agents/worker", "", msg, http.Header{"Accept": {"application/json, text/event-stream"}})
		if resp.StatusCode != 200 || !strings.Contains(string(body), "completed") {
			t.Fatalf("a2a %s: %d %s", method, resp.StatusCode, body)
		}
	}

	// The audit log, read back: the API waits for the records queued
	// before it, so the audit writer's batches are in the store by now.
	if resp, body := h.do("GET", "/api/audit?limit=5", "", nil, nil); resp.StatusCode != 200 {
		t.Fatalf("audit: %d %s", resp.StatusCode, body)
	}

	// Wrong keys from another client, until the failed-authentication
	// limit refuses its address (this client's stays good).
	guesser := fromAddr("127.0.0.2")
	limited := false
	for i := range 60 {
		if resp, _ := h.doFrom(guesser, "GET", "/api/agents", fmt.Sprint("wrong-key-", i), nil, nil); resp.StatusCode == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("the rate limit never refused the wrong key")
	}

	// /metrics needs the key.
	if resp, _ := h.do("GET", "/metrics", "-", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics without the key: %d", resp.StatusCode)
	}
	resp, body = h.do("GET", "/metrics", "", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	for _, leak := range []string{secretArg, inventedTool, sessionID, "k-test"} {
		if bytes.Contains(body, []byte(leak)) {
			t.Errorf("the exposition contains %q", leak)
		}
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse the exposition: %v\n%s", err, body)
	}
	m := metricSet(families)

	// HTTP requests by route pattern and status.
	m.atLeast(t, "http_server_request_duration_seconds", labels{"http_route": "/api/agents/{name}/messages", "http_request_method": "POST", "http_response_status_code": "200"}, 1)
	m.atLeast(t, "http_server_request_duration_seconds", labels{"http_route": "/api/sessions/{id}", "http_response_status_code": "404"}, 1)
	m.atLeast(t, "http_server_request_duration_seconds", labels{"http_route": "/mcp", "http_request_method": "POST"}, 2)
	m.atLeast(t, "http_server_request_duration_seconds", labels{"http_route": "/a2a/agents/{name}", "http_response_status_code": "200"}, 2)
	m.atLeast(t, "http_server_request_duration_seconds", labels{"http_route": "/api/agents", "http_response_status_code": "401"}, 1)
	m.atLeast(t, "http_server_request_duration_seconds", labels{"http_route": "/api/agents", "http_response_status_code": "429"}, 1)
	m.atLeast(t, "agentd_http_rate_limited_total", nil, 1)

	// Tool calls by tool, decision and outcome: four runs, each with one
	// echo and one call of a tool that does not exist.
	m.atLeast(t, "agentd_tool_calls_total", labels{"gen_ai_tool_name": "mcp_up_echo", "agentd_tool_decision": "allow", "agentd_tool_outcome": "ok"}, 4)
	m.atLeast(t, "agentd_tool_calls_total", labels{"gen_ai_tool_name": "_unknown", "agentd_tool_decision": "deny", "agentd_tool_outcome": "denied"}, 4)
	m.atLeast(t, "agentd_tool_call_duration_seconds", labels{"gen_ai_tool_name": "mcp_up_echo"}, 4)

	// Agent runs by agent and stop reason.
	m.atLeast(t, "agentd_agent_runs_total", labels{"gen_ai_agent_name": "worker", "agentd_run_stop_reason": "end_turn"}, 4)
	m.atLeast(t, "agentd_agent_run_duration_seconds", labels{"gen_ai_agent_name": "worker"}, 4)
	m.exactly(t, "agentd_agent_runs_active", labels{"gen_ai_agent_name": "worker"}, 0)

	// Model calls: two per run, with latency, time to first chunk (the
	// answer streams text; tool-call turns have none) and tokens.
	genai := labels{"gen_ai_provider_name": "openai", "gen_ai_request_model": "m", "gen_ai_operation_name": "chat", "agentd_provider": "fake"}
	m.atLeast(t, "gen_ai_client_operation_duration_seconds", genai, 8)
	m.atLeast(t, "gen_ai_client_operation_time_to_first_chunk_seconds", genai, 4)
	m.sumAtLeast(t, "gen_ai_client_token_usage", labels{"gen_ai_token_type": "input"}, 8*120)
	m.sumAtLeast(t, "gen_ai_client_token_usage", labels{"gen_ai_token_type": "output"}, 8*7)

	// The upstream MCP server: state, reconnects, call latency.
	m.exactly(t, "agentd_mcp_upstream_state", labels{"agentd_mcp_server": "up", "state": "connected"}, 1)
	m.exactly(t, "agentd_mcp_upstream_state", labels{"agentd_mcp_server": "up", "state": "failed"}, 0)
	m.exactly(t, "agentd_mcp_upstream_reconnects_total", labels{"agentd_mcp_server": "up"}, 0)
	m.atLeast(t, "mcp_client_operation_duration_seconds", labels{"agentd_mcp_server": "up", "gen_ai_tool_name": "echo", "mcp_method_name": "tools/call"}, 4)

	// MCP served: the agent tool call on /mcp.
	m.atLeast(t, "mcp_server_operation_duration_seconds", labels{"agentd_mcp_endpoint": "main", "mcp_method_name": "tools/call"}, 1)
	m.atLeast(t, "mcp_server_operation_duration_seconds", labels{"agentd_mcp_endpoint": "main", "mcp_method_name": "tools/list"}, 1)

	// A2A tasks by agent and state, and the streams (all closed now).
	m.atLeast(t, "agentd_a2a_tasks_total", labels{"gen_ai_agent_name": "worker", "a2a_task_state": "completed"}, 2)
	m.exactly(t, "agentd_a2a_streams_active", labels{"gen_ai_agent_name": "worker"}, 0)

	// Store operations by backend, operation and error: the runs' sessions
	// and messages, the audit batches and their query, the session that
	// was not there.
	db := labels{"db_system_name": "sqlite"}
	for op, n := range map[string]float64{"CreateSession": 1, "AppendMessages": 4, "AppendAuditBatch": 1, "QueryAudit": 1} {
		m.atLeast(t, "db_client_operation_duration_seconds", labels{"db_system_name": "sqlite", "db_operation_name": op}, n)
	}
	m.atLeast(t, "db_client_operation_duration_seconds", labels{"db_system_name": "sqlite", "db_operation_name": "GetSession", "error_type": "not_found"}, 1)
	if sum := m.total(t, "db_client_operation_duration_seconds", db, func(mt *dto.Metric) float64 { return mt.GetHistogram().GetSampleSum() }); sum <= 0 || sum > 60 {
		t.Errorf("store operations took %vs in all: implausible", sum)
	}

	// Go runtime and process.
	m.atLeast(t, "go_goroutines", nil, 1)
	m.atLeast(t, "process_resident_memory_bytes", nil, 1)
	m.atLeast(t, "target_info", labels{"service_name": "agentd"}, 1)

	// The Grafana dashboards query nothing that is not exported.
	checkDashboards(t, families)
}

// TestMetricsStorePostgres: on PostgreSQL the store's operations are
// timed too, labelled postgresql.
func TestMetricsStorePostgres(t *testing.T) {
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv)}
	h := newHarness(t, "\n[store]\nbackend = \"postgres\"\nurl_env = \"TEAM_DB_URL\"\n", env)
	if resp, body := h.do("POST", "/api/agents/worker/messages", "", map[string]string{"message": "hello"}, nil); resp.StatusCode != 200 {
		t.Fatalf("message: %d %s", resp.StatusCode, body)
	}
	if resp, _ := h.do("GET", "/api/sessions/nope", "", nil, nil); resp.StatusCode != 404 {
		t.Fatalf("missing session: %d", resp.StatusCode)
	}
	resp, body := h.do("GET", "/metrics", "", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, body)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	m := metricSet(families)
	m.atLeast(t, "db_client_operation_duration_seconds", labels{"db_system_name": "postgresql", "db_operation_name": "CreateSession"}, 1)
	m.atLeast(t, "db_client_operation_duration_seconds", labels{"db_system_name": "postgresql", "db_operation_name": "AppendMessages"}, 1)
	m.atLeast(t, "db_client_operation_duration_seconds", labels{"db_system_name": "postgresql", "db_operation_name": "GetSession", "error_type": "not_found"}, 1)
	if _, ok := m["db_client_operation_duration_seconds"]; ok {
		for _, mt := range m["db_client_operation_duration_seconds"].Metric {
			for _, lp := range mt.Label {
				if lp.GetName() == "db_system_name" && lp.GetValue() != "postgresql" {
					t.Errorf("a store series on PostgreSQL is labelled %s", lp.GetValue())
				}
			}
		}
	}
}

// TestMetricsPublicAndDisabled: [metrics] public serves /metrics without
// the key; enabled = false removes it.
func TestMetricsPublicAndDisabled(t *testing.T) {
	t.Run("public", func(t *testing.T) {
		h := newHarness(t, "\n[metrics]\npublic = true\n", nil)
		if resp, body := h.do("GET", "/metrics", "-", nil, nil); resp.StatusCode != 200 || !bytes.Contains(body, []byte("go_goroutines")) {
			t.Fatalf("public /metrics: %d", resp.StatusCode)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		h := newHarness(t, "\n[metrics]\nenabled = false\n", nil)
		if resp, _ := h.do("GET", "/metrics", "", nil, nil); resp.StatusCode != 404 {
			t.Fatalf("disabled /metrics: %d", resp.StatusCode)
		}
	})
}

type labels map[string]string

// metricSet indexes parsed families by name.
type metricSet map[string]*dto.MetricFamily

// match returns the metrics of family name whose labels include want.
func (m metricSet) match(t *testing.T, name string, want labels) []*dto.Metric {
	t.Helper()
	f, ok := m[name]
	if !ok {
		t.Errorf("no metric family %s", name)
		return nil
	}
	var out []*dto.Metric
	for _, mt := range f.Metric {
		have := map[string]string{}
		for _, lp := range mt.Label {
			have[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for k, v := range want {
			if have[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, mt)
		}
	}
	if len(out) == 0 {
		t.Errorf("%s has no series with labels %v; it has %v", name, want, f.Metric)
	}
	return out
}

// value is a counter's or gauge's value, a histogram's count.
func value(mt *dto.Metric) float64 {
	switch {
	case mt.Counter != nil:
		return mt.Counter.GetValue()
	case mt.Gauge != nil:
		return mt.Gauge.GetValue()
	case mt.Histogram != nil:
		return float64(mt.Histogram.GetSampleCount())
	case mt.Untyped != nil:
		return mt.Untyped.GetValue()
	}
	return 0
}

func (m metricSet) total(t *testing.T, name string, want labels, f func(*dto.Metric) float64) float64 {
	t.Helper()
	sum := 0.0
	for _, mt := range m.match(t, name, want) {
		sum += f(mt)
	}
	return sum
}

func (m metricSet) atLeast(t *testing.T, name string, want labels, min float64) {
	t.Helper()
	if got := m.total(t, name, want, value); got < min {
		t.Errorf("%s%v = %v, want at least %v", name, want, got, min)
	}
}

func (m metricSet) exactly(t *testing.T, name string, want labels, v float64) {
	t.Helper()
	if got := m.total(t, name, want, value); got != v {
		t.Errorf("%s%v = %v, want %v", name, want, got, v)
	}
}

// sumAtLeast checks a histogram's sum of observations.
func (m metricSet) sumAtLeast(t *testing.T, name string, want labels, min float64) {
	t.Helper()
	got := m.total(t, name, want, func(mt *dto.Metric) float64 { return mt.GetHistogram().GetSampleSum() })
	if got < min {
		t.Errorf("sum of %s%v = %v, want at least %v", name, want, got, min)
	}
}

func jsonField(t *testing.T, body []byte, field string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	s, _ := m[field].(string)
	if s == "" {
		t.Fatalf("no %s in %s", field, body)
	}
	return s
}
