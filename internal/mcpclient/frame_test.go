package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// readAll reads r whole, as the SDK's decoder does.
func readAll(t *testing.T, r io.Reader) (string, error) {
	t.Helper()
	b, err := io.ReadAll(r)
	return string(b), err
}

func TestLineReader(t *testing.T) {
	const max = 200
	big := strings.Repeat("x", 300)
	bigResp := `{"jsonrpc":"2.0","id":4,"result":"` + big + `"}` + "\n"
	tests := []struct {
		name      string
		in        string
		want      string
		wantErr   error
		noise     int
		oversized int
	}{
		{"passes lines", `{"a":1}` + "\n" + `{"b":2}` + "\n", `{"a":1}` + "\n" + `{"b":2}` + "\n", nil, 0, 0},
		{"last line without newline", `{"a":1}`, `{"a":1}` + "\n", nil, 0, 0},
		{"crlf", `{"a":1}` + "\r\n", `{"a":1}` + "\n", nil, 0, 0},
		{"skips noise and blanks", "starting up\n\n   \n" + `{"a":1}` + "\n", `{"a":1}` + "\n", nil, 1, 0},
		{"oversized response becomes an error", bigResp + `{"a":1}` + "\n",
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32099,"message":"message too large: over the 200 bytes limit"}}` + "\n" + `{"a":1}` + "\n", nil, 0, 1},
		{"oversized notification dropped", `{"method":"n","params":"` + big + `"}` + "\n" + `{"a":1}` + "\n", `{"a":1}` + "\n", nil, 0, 1},
		{"oversized unknown breaks", `{"x":"` + big + `"}` + "\n" + `{"a":1}` + "\n", "", errFrameTooLarge, 0, 1},
		{"invalid json breaks", `{"jsonrpc":"2.0","id":` + "\n" + `{"a":1}` + "\n", "", errBadLine, 0, 0},
	}
	for _, tt := range tests {
		for _, slow := range []bool{false, true} {
			name := tt.name
			if slow {
				name += "/one byte at a time"
			}
			t.Run(name, func(t *testing.T) {
				var noise, over int
				var src io.Reader = strings.NewReader(tt.in)
				if slow {
					src = iotest.OneByteReader(src)
				}
				lr := newLineReader(io.NopCloser(src), max, frameEvents{
					noise:    func([]byte) { noise++ },
					oversize: func(int64, jsonrpcwire.Kind, bool) { over++ },
				})
				got, err := readAll(t, lr)
				if !errors.Is(err, tt.wantErr) || got != tt.want {
					t.Errorf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
				}
				if noise != tt.noise || over != tt.oversized {
					t.Errorf("noise %d, oversized %d; want %d, %d", noise, over, tt.noise, tt.oversized)
				}
			})
		}
	}
}

func TestLineReaderLongLinesUnderTheCap(t *testing.T) {
	// Lines longer than the read buffer but under the cap are assembled.
	line := `{"v":"` + strings.Repeat("y", 3*64<<10) + `"}` + "\n"
	lr := newLineReader(io.NopCloser(strings.NewReader(line+line)), 1<<20, frameEvents{})
	got, err := readAll(t, lr)
	if err != nil || got != line+line {
		t.Fatalf("got %d bytes, %v", len(got), err)
	}
}

// FuzzLineReader checks the stdio adapter: whatever comes out is JSON,
// one value per line, none over the cap but the error responses put in
// place of oversized ones.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\nnoise\n[1]\n"), 16)
	f.Add([]byte("{\"id\":1,\"result\":\"xxxxxxxxxxxxxxxxxxxxxxxxx\"}\n"), 10)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max <= 0 || max > 1<<16 {
			max = 64
		}
		lr := newLineReader(io.NopCloser(bytes.NewReader(in)), int64(max), frameEvents{})
		out, _ := io.ReadAll(lr)
		for _, line := range bytes.Split(bytes.TrimRight(out, "\r\n"), []byte("\n")) {
			line = bytes.TrimRight(line, "\r")
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if !json.Valid(line) {
				t.Fatalf("invalid line out: %q", line)
			}
			if len(line) > max && !bytes.Contains(line, []byte(`"code":-32099`)) {
				t.Fatalf("line over the cap: %d > %d", len(line), max)
			}
		}
	})
}

func TestSSEReader(t *testing.T) {
	const max = 300
	big := strings.Repeat("x", 400)
	ev1 := "event: message\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"" + big + "\"}\n\n"
	ev2 := "data: {\"result\":{\"v\":\"" + big + "\"}\n\n"
	callID := func() json.RawMessage { return json.RawMessage("42") }
	tests := []struct {
		name    string
		in      string
		want    string
		callID  func() json.RawMessage
		wantErr error
	}{
		{"passes events", "event: message\ndata: {\"a\":1}\n\n: ping\n\nid: 7\ndata: {\"b\":2}\n\n",
			"event: message\ndata: {\"a\":1}\n\n: ping\n\nid: 7\ndata: {\"b\":2}\n\n", nil, nil},
		{"crlf", "data: {\"a\":1}\r\n\r\n", "data: {\"a\":1}\r\n\r\n", nil, nil},
		{"unterminated last event", "data: {\"a\":1}\n\ndata: {\"b\"", "data: {\"a\":1}\n\ndata: {\"b\"", nil, nil},
		{"oversized response with id", ev1 + "data: {\"a\":1}\n\n",
			"event: message\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32099,\"message\":\"message too large: over the 300 bytes limit\"}}\n\ndata: {\"a\":1}\n\n", nil, nil},
		{"oversized without id uses the call's", ev2,
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":42,\"error\":{\"code\":-32099,\"message\":\"message too large: over the 300 bytes limit\"}}\n\n", callID, nil},
		{"oversized notification dropped", "data: {\"method\":\"n\",\"params\":\"" + big + "\"}\n\ndata: {\"a\":1}\n\n", "data: {\"a\":1}\n\n", callID, nil},
		{"oversized unknown on a GET breaks", "data: {\"v\":\"" + big + "\"}\n\n", "", nil, errFrameTooLarge},
	}
	// Each case runs with a buffer of its own, then twice with buffers
	// from one pool that every case returns to, so that a buffer is
	// reused by the next streams: nothing of a previous stream may leak.
	var pool sync.Pool
	for _, mode := range []string{"fresh", "pooled", "pooled again"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				body := io.NopCloser(iotest.HalfReader(strings.NewReader(tt.in)))
				var p *sync.Pool
				if mode != "fresh" {
					p = &pool
				}
				sr := newSSEReader(body, max, frameEvents{}, tt.callID, p)
				got, err := readAll(t, sr)
				if !errors.Is(err, tt.wantErr) || got != tt.want {
					t.Errorf("got %q, %v\nwant %q, %v", got, err, tt.want, tt.wantErr)
				}
				sr.Close()
			})
		}
	}
}

// TestSSEReaderCloseDuringRead: the SDK may close a response body from
// another goroutine while its reader waits on the stream. The pooled
// buffer must go back only once that Read has returned (-race sees a
// buffer handed to the next stream while still in use), and a Read after
// Close fails instead of touching it.
func TestSSEReaderCloseDuringRead(t *testing.T) {
	var pool sync.Pool
	for range 50 {
		pr, pw := io.Pipe()
		sr := newSSEReader(pr, 1<<20, frameEvents{}, nil, &pool)
		readErr := make(chan error, 1)
		go func() {
			buf := make([]byte, 64)
			for {
				if _, err := sr.Read(buf); err != nil {
					readErr <- err
					return
				}
			}
		}()
		if _, err := pw.Write([]byte("data: {\"a\":1}\n\n")); err != nil {
			t.Fatal(err)
		}
		sr.Close()
		if err := <-readErr; err == nil {
			t.Fatal("Read returned no error after Close")
		}
		// The next stream may get the buffer; use it while the old
		// reader is asked to read again.
		next := newSSEReader(io.NopCloser(strings.NewReader("data: {\"b\":2}\n\n")), 1<<20, frameEvents{}, nil, &pool)
		if _, err := sr.Read(make([]byte, 8)); !errors.Is(err, errReadAfterClose) {
			t.Fatalf("Read after Close: %v, want errReadAfterClose", err)
		}
		if got, err := readAll(t, next); err != nil || got != "data: {\"b\":2}\n\n" {
			t.Fatalf("next stream read %q, %v", got, err)
		}
		next.Close()
	}
}

func TestJSONBody(t *testing.T) {
	tests := []struct {
		name, in string
		callID   func() json.RawMessage
		want     string
		wantErr  error
	}{
		{"small", `{"jsonrpc":"2.0","id":1,"result":{}}`, nil, `{"jsonrpc":"2.0","id":1,"result":{}}`, nil},
		{"oversized", `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("z", 100) + `"}`, nil,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32099,"message":"message too large: over the 64 bytes limit"}}`, nil},
		{"oversized id last", `{"result":"` + strings.Repeat("z", 100) + `","jsonrpc":"2.0","id":1}`, func() json.RawMessage { return json.RawMessage(`"q"`) },
			`{"jsonrpc":"2.0","id":"q","error":{"code":-32099,"message":"message too large: over the 64 bytes limit"}}`, nil},
		{"oversized, no call", `{"result":"` + strings.Repeat("z", 100) + `"}`, nil, "", errFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jb := &jsonBody{body: io.NopCloser(strings.NewReader(tt.in)), max: 64, callID: tt.callID}
			got, err := readAll(t, jb)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Errorf("got %q, %v\nwant %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCappedBody(t *testing.T) {
	cb := &cappedBody{body: io.NopCloser(strings.NewReader(strings.Repeat("e", 100))), left: 64}
	got, err := readAll(t, cb)
	if len(got) != 64 || !errors.Is(err, errFrameTooLarge) {
		t.Errorf("got %d bytes, %v", len(got), err)
	}
}
