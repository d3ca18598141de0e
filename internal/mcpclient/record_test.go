package mcpclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/tool"
)

// TestRecordCall checks that a call carrying an Exchange hands over the
// upstream's own answer: the result as sent, the JSON-RPC error, or the
// failure that left no answer.
func TestRecordCall(t *testing.T) {
	m := newTestManager(t, testOptions(nil))
	ctx := context.Background()
	if err := m.Add(ctx, faultServer(t, "raw", "raw")); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(ctx, faultServer(t, "faults", "normal")); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "raw")
	waitConnected(t, m, "faults")
	// The raw server answers a JSON-RPC error for any tool it did not
	// list: a tool value for such a name reaches that branch.
	missing := &mcpTool{srv: m.server("raw"), upstream: "missing", spec: tool.Spec{Name: "mcp_raw_missing"}}

	tests := []struct {
		name  string
		tool  tool.Tool
		args  any
		check func(t *testing.T, rec *CallRecord, res tool.Result, err error)
	}{
		{"result as sent", mustTool(t, m, "mcp_raw_echo"), map[string]any{"text": "hi"}, func(t *testing.T, rec *CallRecord, res tool.Result, err error) {
			if err != nil || rec.Result == nil || rec.RPCError != nil || rec.Err != nil {
				t.Fatalf("record %+v, err %v", rec, err)
			}
			if tc, ok := rec.Result.Content[0].(*mcp.TextContent); !ok || tc.Text != "hi" || rec.Result.IsError {
				t.Fatalf("content %+v", rec.Result.Content)
			}
		}},
		{"structured content kept", mustTool(t, m, "mcp_faults_structured"), map[string]any{}, func(t *testing.T, rec *CallRecord, res tool.Result, err error) {
			sc, ok := rec.Result.StructuredContent.(map[string]any)
			if err != nil || !ok || sc["city"] != "Oslo" {
				t.Fatalf("structured %#v, err %v", rec.Result.StructuredContent, err)
			}
		}},
		{"json-rpc error", missing, map[string]any{}, func(t *testing.T, rec *CallRecord, res tool.Result, err error) {
			if err != nil || rec.Result != nil || rec.RPCError == nil || rec.RPCError.Code != -32602 || rec.RPCError.Message != "unknown tool" {
				t.Fatalf("record %+v, err %v", rec, err)
			}
			if !res.IsError || !contains(res.Content, "MCP error -32602") {
				t.Fatalf("the runner's result changed: %+v", res)
			}
		}},
		{"link broken under the call", mustTool(t, m, "mcp_faults_crash"), map[string]any{}, func(t *testing.T, rec *CallRecord, res tool.Result, err error) {
			if !errors.Is(err, tool.ErrDisconnected) || !errors.Is(rec.Err, tool.ErrDisconnected) || rec.Result != nil || rec.RPCError != nil {
				t.Fatalf("record %+v, err %v", rec, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			ex := &Exchange{}
			res, err := callRelay(ctx, tt.tool, tt.args, ex)
			tt.check(t, &ex.Record, res, err)
		})
	}
}
