package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAnswerConn: the ids of a session's requests to its client are
// prefixed on the way out, an answer gets the SDK's id back on the way
// in (once), an answer to another replica's request passes unchanged,
// and the SDK's withdrawal of a request names it as the client knows it.
func TestAnswerConn(t *testing.T) {
	inner := &recordConn{}
	c := &answerConn{Connection: inner, prefix: "p1", asked: map[string]jsonrpc.ID{}}
	ctx := context.Background()
	call := func(id int64) *jsonrpc.Request {
		i, _ := jsonrpc.MakeID(float64(id))
		return &jsonrpc.Request{ID: i, Method: "elicitation/create", Params: json.RawMessage(`{}`)}
	}
	for _, id := range []int64{1, 2} {
		if err := c.Write(ctx, call(id)); err != nil {
			t.Fatal(err)
		}
	}
	if got := inner.written[0].(*jsonrpc.Request).ID.Raw(); got != "p1-1" {
		t.Fatalf("wire id %v, want p1-1", got)
	}
	if !c.waiting("p1-1") || c.waiting("p2-1") {
		t.Fatal("waiting: want p1-1 and not p2-1")
	}
	for _, tc := range []struct {
		name string
		wire any
		want any
	}{
		{"own answer", "p1-1", int64(1)},
		{"the same answer again", "p1-1", "p1-1"},
		{"another replica's answer", "p2-1", "p2-1"},
		{"a numeric id", float64(1), int64(1)},
	} {
		id, _ := jsonrpc.MakeID(tc.wire)
		inner.next = &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := msg.(*jsonrpc.Response).ID.Raw(); got != tc.want {
			t.Errorf("%s: read id %v (%T), want %v", tc.name, got, got, tc.want)
		}
	}
	// The SDK withdraws request 2 (the call that asked ended).
	if err := c.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":2,"reason":"done"}`)}); err != nil {
		t.Fatal(err)
	}
	var p struct {
		RequestID any    `json:"requestId"`
		Reason    string `json:"reason"`
	}
	if err := json.Unmarshal(inner.written[2].(*jsonrpc.Request).Params, &p); err != nil || p.RequestID != "p1-2" || p.Reason != "done" {
		t.Errorf("withdrawal %s, want requestId p1-2 (err %v)", inner.written[2].(*jsonrpc.Request).Params, err)
	}
	if c.waiting("p1-2") {
		t.Error("a withdrawn request is still waited for")
	}
}

// recordConn is a Connection that notes what is written and reads next.
type recordConn struct {
	written []jsonrpc.Message
	next    jsonrpc.Message
}

var _ mcp.Connection = (*recordConn)(nil)

func (c *recordConn) Read(context.Context) (jsonrpc.Message, error) { return c.next, nil }
func (c *recordConn) Write(_ context.Context, m jsonrpc.Message) error {
	c.written = append(c.written, m)
	return nil
}
func (c *recordConn) Close() error      { return nil }
func (c *recordConn) SessionID() string { return "s" }
