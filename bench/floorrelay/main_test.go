package main

import "testing"

func TestTopLevelID(t *testing.T) {
	tests := []struct {
		name      string
		msg       string
		id        string
		hasMethod bool
		ok        bool
	}{
		{"request", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`, "7", true, true},
		{"string id after params", `{"jsonrpc":"2.0","method":"x","params":{"id":1,"a":[{"id":2}]},"id":"a\"b"}`, `"a\"b"`, true, true},
		{"response", ` { "jsonrpc" : "2.0" , "result" : {"content":[{"type":"text","text":"}{"}]}, "id" : 12 }`, "12", false, true},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", true, false},
		{"nested id only", `{"jsonrpc":"2.0","method":"n","params":{"id":3}}`, "", true, false},
		{"not an object", `[{"id":1}]`, "", false, false},
		{"truncated", `{"id":"abc`, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, e, hasMethod, ok := topLevelID([]byte(tt.msg))
			if ok != tt.ok || hasMethod != tt.hasMethod {
				t.Fatalf("ok %v hasMethod %v, want %v %v", ok, hasMethod, tt.ok, tt.hasMethod)
			}
			if ok && tt.msg[s:e] != tt.id {
				t.Fatalf("id %q, want %q", tt.msg[s:e], tt.id)
			}
		})
	}
}
