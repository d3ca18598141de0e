package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeStdio is a stdio MCP server of the initialize era, in process,
// that answers every tools/call with the line its answer function
// makes from the request's raw id. It speaks to a go-sdk client over
// agentd's stdioLink, so the SDK's CallTool and the direct call meet the
// same server on the same connection.
type fakeStdio struct {
	cs   *mcp.ClientSession
	conn *stdioConn

	mu       sync.Mutex
	answer   func(id string) string // "" answers nothing
	cancels  []string               // the raw requestIds of notifications/cancelled
	progress []float64              // progress the client's handler received
	out      io.WriteCloser         // the server's stdout
}

func newFakeStdio(t testing.TB) *fakeStdio {
	inR, inW := io.Pipe()   // client → server
	outR, outW := io.Pipe() // server → client
	f := &fakeStdio{out: outW}
	done := make(chan struct{})
	go func() { // ends when the client closes its stdin
		defer close(done)
		f.serve(inR)
	}()
	link := &stdioLink{r: newLineReader(outR, 1<<20, frameEvents{}), w: inW}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			f.mu.Lock()
			f.progress = append(f.progress, req.Params.Progress)
			f.mu.Unlock()
		},
	})
	cs, err := client.Connect(context.Background(), &recordConn{link: link, got: &f.conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.cs = cs
	t.Cleanup(func() {
		cs.Close()
		outW.Close()
		<-done
	})
	return f
}

// recordConn is a transport that keeps the stdioConn it made.
type recordConn struct {
	link *stdioLink
	got  **stdioConn
}

func (r *recordConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.link.Connect(ctx)
	if err == nil {
		*r.got = c.(*stdioConn)
	}
	return c, err
}

func (f *fakeStdio) serve(in io.ReadCloser) {
	defer in.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			continue
		}
		var line string
		switch msg.Method {
		case "initialize":
			line = `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`
		case "tools/call":
			var p struct {
				Meta map[string]any `json:"_meta"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			if tok, ok := p.Meta["progressToken"]; ok {
				tb, _ := json.Marshal(tok)
				f.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(tb) + `,"progress":7}}`)
			}
			f.mu.Lock()
			answer := f.answer
			f.mu.Unlock()
			if answer != nil {
				line = answer(string(msg.ID))
			}
		case "notifications/cancelled":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			f.mu.Lock()
			f.cancels = append(f.cancels, string(p.RequestID))
			f.mu.Unlock()
		default:
			if len(msg.ID) > 0 { // a request this server does not know (the SDK's probe of a newer protocol)
				line = `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`
			}
		}
		if line != "" {
			f.write(line)
		}
	}
}

func (f *fakeStdio) write(line string) {
	_, _ = io.WriteString(f.out, line+"\n")
}

func (f *fakeStdio) setAnswer(a func(id string) string) {
	f.mu.Lock()
	f.answer = a
	f.mu.Unlock()
}

// result answers with result as the tools/call result.
func result(raw string) func(string) string {
	return func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + raw + `}` }
}

// both makes the call through the SDK and directly, and fails the test
// unless they return the same.
func (f *fakeStdio) both(t *testing.T, ctx context.Context, params func() *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	t.Helper()
	sdkRes, sdkErr := f.cs.CallTool(ctx, params())
	res, err := f.conn.callTool(ctx, params())
	if errText(sdkErr) != errText(err) {
		t.Fatalf("errors differ:\n sdk:    %v\n direct: %v", sdkErr, err)
	}
	if !reflect.DeepEqual(sdkRes, res) {
		t.Fatalf("results differ:\n sdk:    %s\n direct: %s", dump(sdkRes), dump(res))
	}
	return res, err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func echoParams() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}
}

// directResults are results the plain decoder reads and results it hands
// to the SDK's.
var directResults = []string{
	`{"content":[{"type":"text","text":"Echo: hi"}]}`,
	`{"content":[{"text":"a","type":"text"},{"type":"text","text":"b\n\"c\"\\\/\t"}],"isError":false}`,
	`{"isError":true,"content":[{"type":"text","text":"boom"}]}`,
	`{"content":[{"type":"text","text":"ünïcødé ✓"}]}`,
	`{"content":[{"type":"text","text":"\u00e9t\u00e9 \ud83d\ude00 \ud800"}]}`,
	`{"content":[]}`,
	`{"content":null}`,
	`{}`,
	`null`,
	`[]`,
	`"text"`,
	`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1,"s":["a"]}}`,
	`{"content":[{"type":"text","text":"x","annotations":{"audience":["user"]}}]}`,
	`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`,
	`{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}`,
	`{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"t"}}]}`,
	`{"content":[{"type":"audio","data":"aGk=","mimeType":"audio/wav"}]}`,
	`{"content":[{"type":"nope"}]}`,
	`{"content":[{"type":"text","text":"x"}],"_meta":{"k":"v"}}`,
	`{"content":[{"type":"text","text":"x"}],"isError":"yes"}`,
	`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"content":[{"type":"text","text":"c"}]}`,
	`{"content":[{"type":"text","text":"x","text":"y"}]}`,
	`{"Content":[{"type":"text","text":"x"}]}`,
	`{"content":[{"type":"text","text":1}]}`,
	`{"content":{"type":"text","text":"x"}}`,
	`{"content":[{"type":"text"}]}`,
	`{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`,
}

// TestDirectCallMatchesSDK: a tools/call made directly on a stdio link
// returns what the SDK's CallTool returns on the same link, for results
// of every shape, JSON-RPC errors, cancellation and a link that ends
// mid-call.
func TestDirectCallMatchesSDK(t *testing.T) {
	f := newFakeStdio(t)
	for _, raw := range directResults {
		f.setAnswer(result(raw))
		f.both(t, t.Context(), echoParams)
	}

	t.Run("plain results are the plain decoder's", func(t *testing.T) {
		for _, raw := range directResults[:4] {
			if _, ok := decodePlainResult([]byte(raw)); !ok {
				t.Errorf("%s went to the SDK's decoder", raw)
			}
		}
	})

	t.Run("JSON-RPC errors", func(t *testing.T) {
		for _, e := range []string{
			`{"code":-32602,"message":"Unknown tool: nope"}`,
			`{"code":-32603,"message":"internal","data":{"why":"x"}}`,
			`{"code":-32003,"message":"client is closing"}`,
			`{"code":-32004,"message":"server is closing"}`,
		} {
			f.setAnswer(func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"error":` + e + `}` })
			_, err := f.both(t, t.Context(), echoParams)
			if err == nil {
				t.Fatalf("error %s: no error", e)
			}
		}
	})

	t.Run("progress reaches the SDK's handler", func(t *testing.T) {
		f.setAnswer(result(directResults[0]))
		f.mu.Lock()
		f.progress = nil
		f.mu.Unlock()
		p := echoParams()
		p.SetProgressToken("tok-1")
		if _, err := f.conn.callTool(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			f.mu.Lock()
			got := len(f.progress)
			f.mu.Unlock()
			if got == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("progress notifications handled: %d, want 1", got)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		f.setAnswer(nil) // never answers
		var errs [2]error
		for i, call := range []func(context.Context) error{
			func(ctx context.Context) error { _, err := f.cs.CallTool(ctx, echoParams()); return err },
			func(ctx context.Context) error { _, err := f.conn.callTool(ctx, echoParams()); return err },
		} {
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			errs[i] = call(ctx)
			cancel()
		}
		if !errors.Is(errs[0], context.DeadlineExceeded) || errText(errs[0]) != errText(errs[1]) {
			t.Fatalf("sdk %v, direct %v", errs[0], errs[1])
		}
		// Each call told the server it was given up, by its own id.
		deadline := time.Now().Add(5 * time.Second)
		for {
			f.mu.Lock()
			got := append([]string(nil), f.cancels...)
			f.mu.Unlock()
			if len(got) == 2 {
				if strings.HasPrefix(got[0], `"`) || !strings.HasPrefix(got[1], `"`+directPrefix) {
					t.Fatalf("cancelled ids %q: want the SDK's number, then agentd's id", got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("notifications/cancelled seen for %q, want 2", got)
			}
			time.Sleep(5 * time.Millisecond)
		}
		// A late answer to the abandoned direct call does not reach the
		// SDK, and the link goes on.
		f.setAnswer(result(directResults[0]))
		f.both(t, t.Context(), echoParams)
	})
}

// TestDirectCallLinkEnds: calls in flight when the server's stdout
// closes fail as the SDK's do, and so do calls made after.
func TestDirectCallLinkEnds(t *testing.T) {
	f := newFakeStdio(t)
	f.setAnswer(nil)
	type outcome struct {
		err error
	}
	sdk, direct := make(chan outcome, 1), make(chan outcome, 1)
	go func() { _, err := f.cs.CallTool(context.Background(), echoParams()); sdk <- outcome{err} }()
	go func() { _, err := f.conn.callTool(context.Background(), echoParams()); direct <- outcome{err} }()
	// Both requests are out once the server has read them; then its
	// stdout ends.
	time.Sleep(100 * time.Millisecond)
	f.out.Close()
	a, b := <-sdk, <-direct
	if a.err == nil || errText(a.err) != errText(b.err) {
		t.Fatalf("in flight: sdk %v, direct %v", a.err, b.err)
	}
	// After the read loop has ended, a new call fails at once.
	_, sdkErr := f.cs.CallTool(t.Context(), echoParams())
	_, err := f.conn.callTool(t.Context(), echoParams())
	if sdkErr == nil || errText(sdkErr) != errText(err) || !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Fatalf("after: sdk %v, direct %v", sdkErr, err)
	}
}

// FuzzDirectCallMatchesSDK is TestDirectCallMatchesSDK's first part for
// any result.
func FuzzDirectCallMatchesSDK(f *testing.F) {
	for _, raw := range directResults {
		f.Add([]byte(raw))
	}
	fs := newFakeStdio(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || strings.ContainsAny(string(raw), "\n\r") {
			return // a server's line is one JSON value
		}
		fs.setAnswer(result(string(raw)))
		fs.both(t, t.Context(), echoParams)
	})
}
