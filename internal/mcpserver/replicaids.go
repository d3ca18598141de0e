package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerTransport connects a replicated session's SDK session through an
// answerConn.
type answerTransport struct {
	inner  *mcp.StreamableServerTransport
	h      *heldSession
	prefix string
}

func (t answerTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ac := &answerConn{Connection: c, prefix: t.prefix, asked: map[string]jsonrpc.ID{}}
	t.h.mu.Lock()
	t.h.conn = ac
	t.h.mu.Unlock()
	return ac, nil
}

// answerConn gives the requests a session's server sends its client
// (elicitation/create, sampling/createMessage, roots/list) ids unique
// across replicas, and keeps those waiting for an answer.
//
// Every replica holding a copy of a session numbers its requests 1, 2,
// 3... (go-sdk's jsonrpc2 counter), so two calls of one session running
// on two replicas would ask the client with the same id, and an answer,
// which any replica may receive and all of them are handed, would be
// taken by the wrong question: an approval granted to another tool call.
// Here the id on the wire is this replica's prefix and the SDK's number,
// and the answer gets the SDK's id back on its way in; an answer to
// another replica's question keeps its foreign id, which no request of
// this copy has, and the SDK drops it.
type answerConn struct {
	mcp.Connection
	prefix string

	mu    sync.Mutex
	asked map[string]jsonrpc.ID // wire id → the SDK's, until answered
}

func (c *answerConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" {
			msg = c.withdrawn(req)
		}
		return c.Connection.Write(ctx, msg)
	}
	wire := fmt.Sprintf("%s-%v", c.prefix, req.ID.Raw())
	out := *req
	out.ID, _ = jsonrpc.MakeID(wire)
	c.mu.Lock()
	c.asked[wire] = req.ID
	c.mu.Unlock()
	err := c.Connection.Write(ctx, &out)
	if err != nil {
		c.mu.Lock()
		delete(c.asked, wire)
		c.mu.Unlock()
	}
	return err
}

func (c *answerConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	return c.inbound(msg), nil
}

// inbound gives the client's answer to one of this copy's questions the
// SDK's id back.
func (c *answerConn) inbound(msg jsonrpc.Message) jsonrpc.Message {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if wire, ok := resp.ID.Raw().(string); ok {
			c.mu.Lock()
			id, found := c.asked[wire]
			delete(c.asked, wire)
			c.mu.Unlock()
			if found {
				out := *resp
				out.ID = id
				return &out
			}
		}
	}
	return msg
}

// withdrawn is the SDK's notifications/cancelled of one of its own
// requests (the call that asked ended first) with the request's id as
// the client knows it; the answer is no longer awaited.
func (c *answerConn) withdrawn(n *jsonrpc.Request) *jsonrpc.Request {
	var params map[string]any
	if json.Unmarshal(n.Params, &params) != nil {
		return n
	}
	id, err := jsonrpc.MakeID(params["requestId"])
	if err != nil || !id.IsValid() {
		return n
	}
	c.mu.Lock()
	wire := ""
	for w, sdk := range c.asked {
		if sdk == id {
			wire = w
			delete(c.asked, w)
			break
		}
	}
	c.mu.Unlock()
	if wire == "" {
		return n
	}
	params["requestId"] = wire
	raw, err := json.Marshal(params)
	if err != nil {
		return n
	}
	out := *n
	out.Params = raw
	return &out
}

// waiting reports whether this copy asked the request wire answers and
// has no answer yet.
func (c *answerConn) waiting(wire string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.asked[wire]
	return ok
}
