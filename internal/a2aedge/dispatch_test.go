package a2aedge

import "testing"

// TestRoute pins which binding decodes a request to an agent's endpoint.
func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rpc    bool
		method string
		rest   string
		want   binding
	}{
		{name: "1.0 send", rpc: true, method: "SendMessage", rest: "/", want: bindRPC},
		{name: "1.0 unknown method", rpc: true, method: "NoSuchMethod", rest: "/", want: bindRPC},
		{name: "malformed body (no method)", rpc: true, rest: "/", want: bindRPC},
		{name: "0.3 send", rpc: true, method: "message/send", rest: "/", want: bindRPC03},
		{name: "0.3 resubscribe", rpc: true, method: "tasks/resubscribe", rest: "/", want: bindRPC03},
		{name: "seed send", rpc: true, method: "tasks/send", rest: "/", want: bindLegacy},
		{name: "seed stream", rpc: true, method: "tasks/sendSubscribe", rest: "/", want: bindLegacy},
		{name: "1.0 REST send", rest: "/message:send", want: bindREST},
		{name: "1.0 REST task", rest: "/tasks/abc", want: bindREST},
		{name: "0.3 REST send", rest: "/v1/message:send", want: bindREST03},
		{name: "0.3 REST task", rest: "/v1/tasks/abc", want: bindREST03},
		{name: "a method name in a REST path is not JSON-RPC", rest: "/message/send", want: bindREST},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := route(tc.rpc, tc.method, tc.rest); got != tc.want {
				t.Errorf("route(%v, %q, %q) = %d, want %d", tc.rpc, tc.method, tc.rest, got, tc.want)
			}
		})
	}
}
