// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// TestRawCallToolResult checks that a raw result is sent as it came, with
// what a 2026-07-28 session adds merged in and nothing lost.
func TestRawCallToolResult(t *testing.T) {
	impl := &Implementation{Name: "gw", Version: "1"}
	for _, c := range []struct {
		name, raw, version, want string
	}{
		{"old client: unchanged", `{"content":[{"type":"text","text":"hi"}]}`, "2025-11-25",
			`{"content":[{"type":"text","text":"hi"}]}`},
		{"new client: resultType and server info added", `{"content":[{"type":"text","text":"hi"}],"isError":true}`, "2026-07-28",
			`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gw","version":"1"}},"content":[{"type":"text","text":"hi"}],"isError":true}`},
		{"empty object", `{}`, "2026-07-28",
			`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gw","version":"1"}}}`},
		{"raw _meta kept and merged", `{"content":[],"_meta":{"k":1}}`, "2026-07-28",
			`{"resultType":"complete","_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{"name":"gw","version":"1"}},"content":[]}`},
		{"raw resultType kept", `{"content":[],"resultType":"complete"}`, "2026-07-28",
			`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gw","version":"1"}},"content":[]}`},
		{"raw server info kept", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`, "2026-07-28",
			`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}},"content":[]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := MarshalCallToolResult(RawCallToolResult(json.RawMessage(c.raw), false), c.version, impl)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, []byte(c.want)) {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestMarshalCallToolResult checks a decoded result is shaped as the
// session shapes it.
func TestMarshalCallToolResult(t *testing.T) {
	got, err := MarshalCallToolResult(&CallToolResult{}, "2026-07-28", &Implementation{Name: "s", Version: "2"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"2"}}}`
	if !sameJSON(t, got, []byte(want)) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := MarshalCallToolResult(&CallToolResult{Content: []Content{&TextContent{Text: "x"}}, InputRequests: InputRequestMap{}}, "2026-07-28", nil); err == nil {
		t.Error("content with input requests: no error")
	}
}

// TestCallToolRaw calls a server in memory and gets its result's JSON.
func TestCallToolRaw(t *testing.T) {
	ctx := context.Background()
	srv := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&Tool{Name: "hi", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{&ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}, IsError: true}, nil
	})
	st, ct := NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := NewClient(&Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	raw, err := cs.CallToolRaw(ctx, &CallToolParams{Name: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, raw, []byte(`{"content":[{"type":"image","mimeType":"image/png","data":"AQI="}],"isError":true}`)) {
		t.Errorf("raw result %s", raw)
	}
	if _, err := cs.CallToolRaw(ctx, &CallToolParams{Name: "nope"}); err == nil {
		t.Error("unknown tool: no error")
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}
