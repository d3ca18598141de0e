package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// Direct tools/call on stdio links.
//
// go-sdk's ClientSession.CallTool decodes a result twice through its
// internal/json.Unmarshal (the response's result into *CallToolResult,
// then CallToolResult.UnmarshalJSON's own pass), and each pass allocates
// a fresh 32 KiB streaming decoder: 64 of the 79 KB that a gateway call
// to server-everything over stdio allocated. On a stdio link agentd owns
// the mcp.Connection (stdioconn.go), so it writes the tools/call request
// itself, with an id from a space the SDK never uses (the SDK numbers its
// requests; these ids are strings), and takes the response off the wire
// before the SDK's read loop would see it. Everything else the call
// provokes still reaches the SDK: progress and log notifications, and the
// requests the server makes meanwhile (roots, sampling, elicitation),
// which the SDK's handlers serve as for any call. The result is decoded
// by decodeCallToolResult, which reads the plain shape itself and hands
// any other to the SDK's own CallToolResult.UnmarshalJSON.
//
// What the caller gets is what CallTool would have returned, errors
// included (their wrapping mirrors go-sdk's mcp.call):
// TestDirectCallMatchesSDK and FuzzDirectCallMatchesSDK make the same
// calls both ways on one link and compare the results and errors.

// directPrefix starts the id of every request agentd writes itself.
const directPrefix = "agentd-"

// errClientClosing is go-sdk's jsonrpc2.ErrClientClosing (internal to
// the SDK): what a call gets on a connection that is closed or whose
// reading has stopped.
var errClientClosing = &jsonrpc.Error{Code: -32003, Message: "client is closing"}

// errServerClosing is go-sdk's jsonrpc2.ErrServerClosing.
var errServerClosing = &jsonrpc.Error{Code: -32004, Message: "server is closing"}

// callError wraps the error that ended a call as go-sdk's mcp.call does:
// the SDK's closing errors (or a server's error with their codes, which
// the SDK cannot tell from them) are mcp.ErrConnectionClosed.
func callError(method string, err error) error {
	if errors.Is(err, errClientClosing) || errors.Is(err, errServerClosing) {
		return fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, method, err)
	}
	return fmt.Errorf("calling %q: %w", method, err)
}

// directCalls are the calls agentd wrote itself on one stdio connection
// and that wait for their response.
type directCalls struct {
	mu      sync.Mutex
	seq     uint64
	waiting map[string]chan *jsonrpc.Response
	// err is why no response will come any more (the read loop ended,
	// or Close): set once, when waiting is emptied for good.
	err    error
	closed bool // err came from Close
}

// deliver hands msg to the direct call it answers and reports whether it
// was one (answered, or abandoned by its caller: either way the SDK must
// not see it).
func (d *directCalls) deliver(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	key, ok := resp.ID.Raw().(string)
	if !ok || !strings.HasPrefix(key, directPrefix) {
		return false
	}
	d.mu.Lock()
	ch := d.waiting[key]
	delete(d.waiting, key)
	d.mu.Unlock()
	if ch != nil {
		ch <- resp // buffered: the caller may be gone
	}
	return true
}

// fail answers every waiting call with err, as the SDK retires its calls
// with the error that ended its read loop, and refuses later calls.
func (d *directCalls) fail(err error, closed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return
	}
	d.err, d.closed = err, closed
	for key, ch := range d.waiting {
		id, _ := jsonrpc.MakeID(key)
		ch <- &jsonrpc.Response{ID: id, Error: err}
	}
	d.waiting = nil
}

// add registers a call and returns its id, or the error of a call made
// on a connection that can take none.
func (d *directCalls) add(ch chan *jsonrpc.Response) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		if d.closed {
			return "", errClientClosing
		}
		return "", fmt.Errorf("%w: %w", errClientClosing, d.err)
	}
	d.seq++
	key := directPrefix + strconv.FormatUint(d.seq, 10)
	if d.waiting == nil {
		d.waiting = map[string]chan *jsonrpc.Response{}
	}
	d.waiting[key] = ch
	return key, nil
}

func (d *directCalls) drop(key string) {
	d.mu.Lock()
	delete(d.waiting, key)
	d.mu.Unlock()
}

// callTool makes a tools/call on c as ClientSession.CallTool does on an
// initialize-era session, and returns what it would.
func (c *stdioConn) callTool(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	const method = "tools/call"
	if params.Arguments == nil {
		params.Arguments = map[string]any{} // as CallTool: never null on the wire
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("calling %q: marshaling call parameters: %w", method, err)
	}
	ch := make(chan *jsonrpc.Response, 1)
	key, err := c.direct.add(ch)
	if err != nil {
		return nil, callError(method, err)
	}
	id, _ := jsonrpc.MakeID(key)
	if err := c.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: raw}); err != nil {
		c.direct.drop(key)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, callError(method, err)
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, callError(method, resp.Error)
		}
		res, err := decodeCallToolResult(resp.Result)
		if err != nil {
			return nil, fmt.Errorf("calling %q: %w", method, err)
		}
		return res, nil
	case <-ctx.Done():
		c.direct.drop(key)
		// Best effort, as the SDK's: a server that stopped reading is
		// dealt with by upstreamCall's watch, which fails the session
		// (closing the pipe this write may block on).
		note, err := json.Marshal(&mcp.CancelledParams{Reason: ctx.Err().Error(), RequestID: key})
		if err == nil {
			_ = c.Write(context.WithoutCancel(ctx), &jsonrpc.Request{Method: "notifications/cancelled", Params: note})
		}
		return nil, ctx.Err()
	}
}

// decodeCallToolResult is the SDK's decoding of a tools/call result. The
// plain shape (a content list of text items, each only a type and a
// text, and perhaps isError) is read here; anything else goes to the
// SDK's own CallToolResult.UnmarshalJSON, so its answer is the SDK's by
// construction.
func decodeCallToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	if res, ok := decodePlainResult(raw); ok {
		return res, nil
	}
	res := new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return res, nil
}

func decodePlainResult(raw []byte) (*mcp.CallToolResult, bool) {
	var content, isError []byte
	ok := jsonrpcwire.Members(raw, func(key, value []byte) bool {
		var slot *[]byte
		switch string(key) {
		case `"content"`:
			slot = &content
		case `"isError"`:
			slot = &isError
		default:
			return false
		}
		if *slot != nil {
			return false // a duplicate: the SDK's decoder takes the last
		}
		*slot = value
		return true
	})
	if !ok || content == nil {
		return nil, false
	}
	res := new(mcp.CallToolResult)
	switch string(isError) {
	case "":
	case "true":
		res.IsError = true
	case "false":
	default:
		return nil, false
	}
	ok = jsonrpcwire.Elements(content, func(item []byte) bool {
		text, ok := plainTextItem(item)
		if ok {
			res.Content = append(res.Content, &mcp.TextContent{Text: text})
		}
		return ok
	})
	if !ok || len(res.Content) == 0 {
		return nil, false
	}
	return res, true
}

// plainTextItem is the text of a content item that is exactly
// {"type":"text","text":...}, members in any order.
func plainTextItem(item []byte) (string, bool) {
	var typ, text []byte
	ok := jsonrpcwire.Members(item, func(key, value []byte) bool {
		var slot *[]byte
		switch string(key) {
		case `"type"`:
			slot = &typ
		case `"text"`:
			slot = &text
		default:
			return false
		}
		if *slot != nil {
			return false
		}
		*slot = value
		return true
	})
	if !ok || string(typ) != `"text"` || text == nil {
		return "", false
	}
	return jsonString(text)
}

// jsonString decodes a JSON string whose decoding no two decoders differ
// on: valid UTF-8, and escapes other than \u (a \u escape may be half a
// surrogate pair, which decoders replace differently).
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	if !utf8.Valid(s) {
		return "", false
	}
	esc := strings.IndexByte(string(s), '\\')
	if esc < 0 {
		return string(s), true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' {
			b = append(b, ch)
			continue
		}
		i++
		if i == len(s) {
			return "", false
		}
		switch s[i] {
		case '"', '\\', '/':
			b = append(b, s[i])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		default:
			return "", false
		}
	}
	return string(b), true
}
