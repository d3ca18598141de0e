package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// discardCloser is a stdin that takes anything.
type discardCloser struct{}

func (discardCloser) Write(p []byte) (int, error) { return len(p), nil }
func (discardCloser) Close() error                { return nil }

// readStream reads every message of stream through t, as the SDK's read
// loop does, until the first error: the messages re-encoded, and whether
// it ended with an error other than io.EOF.
func readStream(t testing.TB, tr mcp.Transport) (msgs []string, failed bool) {
	t.Helper()
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for {
		msg, err := conn.Read(context.Background())
		if err != nil {
			return msgs, !errors.Is(err, io.EOF)
		}
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatalf("re-encode %T: %v", msg, err)
		}
		msgs = append(msgs, string(b))
	}
}

// compareStdio reads stream with the SDK's IOTransport (as agentd did
// before stdioLink: behind the same line reader) and with stdioLink,
// and requires the same messages and the same ending.
func compareStdio(t testing.TB, stream []byte, max int64) {
	t.Helper()
	sdk := &mcp.IOTransport{
		Reader:        newLineReader(io.NopCloser(bytes.NewReader(stream)), max, frameEvents{}),
		Writer:        discardCloser{},
		MaxLineLength: -1,
	}
	own := &stdioLink{r: newLineReader(io.NopCloser(bytes.NewReader(stream)), max, frameEvents{}), w: discardCloser{}}
	wantMsgs, wantFailed := readStream(t, sdk)
	gotMsgs, gotFailed := readStream(t, own)
	if !slices.Equal(gotMsgs, wantMsgs) || gotFailed != wantFailed {
		t.Fatalf("stream %q:\nstdioLink   %q (failed: %v)\nIOTransport %q (failed: %v)", stream, gotMsgs, gotFailed, wantMsgs, wantFailed)
	}
}

var stdioStreams = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}` + "\n",
	`{"jsonrpc":"2.0","id":"a","method":"roots/list"}` + "\r\n",
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}]` + "\n",
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n",
	"[]\n",
	"server starting on stdio\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n",
	`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + string(bytes.Repeat([]byte("x"), 300)) + `"}]}}` + "\n",
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + string(bytes.Repeat([]byte("y"), 300)) + `"}}` + "\n" + `{"jsonrpc":"2.0","id":4,"result":{}}` + "\n",
	`{"jsonrpc":"2.0","id":5,"result":{}` + "\n",
	`{"foo":1}` + "\n",
	`{"jsonrpc":"2.0","id":6,"result":{}}`,
	`{"jsonrpc":"2.0","id":7,"res`,
	"  \n\n" + `  {"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"no"}}  ` + "\n",
}

// TestStdioConnMatchesIOTransport: stdioLink reads what the SDK's
// IOTransport reads, message for message, with the same ending: whole
// messages, batches, noise on stdout, a message over the cap (a response:
// an error response for its call; a notification: dropped), a cut or
// broken line, the end of the stream.
func TestStdioConnMatchesIOTransport(t *testing.T) {
	for _, s := range stdioStreams {
		compareStdio(t, []byte(s), 256)
	}
}

// FuzzStdioConnMatchesIOTransport is TestStdioConnMatchesIOTransport for
// any stream.
func FuzzStdioConnMatchesIOTransport(f *testing.F) {
	for _, s := range stdioStreams {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		compareStdio(t, stream, 256)
	})
}

// TestStdioConnCloseUnblocksRead: Close ends a Read waiting on the
// child's stdout with io.EOF, as IOTransport's Read reports it, and a
// written message is one line on the child's stdin.
func TestStdioConnCloseUnblocksRead(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outW.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	conn, err := (&stdioLink{r: newLineReader(outR, 1<<20, frameEvents{}), w: inW}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(context.Background(), &jsonrpc.Request{ID: mustID(t, "a"), Method: "ping"}); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 128)
	n, err := inR.Read(line)
	if err != nil || string(line[:n]) != `{"jsonrpc":"2.0","id":"a","method":"ping"}`+"\n" {
		t.Fatalf("stdin got %q (%v)", line[:n], err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		errc <- err
	}()
	if _, err := outW.Write([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("read a response: %v", err)
	}
	go func() {
		_, err := conn.Read(context.Background())
		errc <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("Read after Close: %v, want io.EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
