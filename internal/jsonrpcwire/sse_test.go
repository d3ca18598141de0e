package jsonrpcwire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestNextEvent(t *testing.T) {
	in := ": comment\r\nid: 1\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\nretry: 1500\r\n\r\n" +
		"id: 2\n\n" + // an event with no data still moves the id
		"data:{}\n\n" +
		"data: cut off"
	r := NewReader(strings.NewReader(in), FramingSSE, 1024)
	want := []Event{
		{ID: "1", Name: "message", Data: []byte("{\"a\":\n1}"), Retry: 1500 * time.Millisecond},
		{ID: "2"},
		{Data: []byte("{}")},
	}
	for i, w := range want {
		ev, err := r.NextEvent()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.ID != w.ID || ev.Name != w.Name || !bytes.Equal(ev.Data, w.Data) || ev.Retry != w.Retry {
			t.Fatalf("event %d: %+v, want %+v", i, ev, w)
		}
	}
	if _, err := r.NextEvent(); err == nil {
		t.Fatal("the unterminated last event was returned")
	}
	var tl *TooLargeError
	if _, err := NewReader(strings.NewReader("data: "+strings.Repeat("x", 2000)+"\n\n"), FramingSSE, 1024).NextEvent(); !errors.As(err, &tl) {
		t.Fatalf("oversized event: %v", err)
	}
	if _, err := NewReader(strings.NewReader("data: {}\n"), FramingSSE, 1024).NextEvent(); err != io.EOF {
		t.Fatalf("a last event without its blank line: %v, want EOF", err)
	}
	// A body that breaks (a server gone mid-stream) is not a clean end.
	broken := io.MultiReader(strings.NewReader("data: {"), iotest.ErrReader(io.ErrUnexpectedEOF))
	if raw, err := NewReader(broken, FramingSSE, 1024).Next(); err != io.ErrUnexpectedEOF || raw != nil {
		t.Fatalf("a broken stream: %q, %v", raw, err)
	}
}

func TestParseEvent(t *testing.T) {
	tests := []struct {
		ev, want string
		ok       bool
	}{
		{"event: message\nid: 1\ndata: {\"a\":1}\n\n", `{"a":1}`, true},
		{"data:{\"a\":\r\ndata: 1}\r\n\r\n", "{\"a\":\n1}", true},
		{": comment\n\n", "", false},
	}
	for _, tt := range tests {
		if got, ok := ParseEvent([]byte(tt.ev)); string(got.Data) != tt.want || ok != tt.ok {
			t.Errorf("ParseEvent(%q) = %q, %v; want %q, %v", tt.ev, got.Data, ok, tt.want, tt.ok)
		}
	}
}

// FuzzSSE checks the event-stream decoder: it ends on any input, keeps
// every event within the limit, joins every data line of an event and
// nothing else, and reads back what an encoder wrote.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {}\n\n"), []byte(`{"jsonrpc":"2.0"}`))
	f.Add([]byte("id:1\r\nretry:x\r\n\r\n:\n"), []byte("a\nb"))
	f.Add([]byte("event: message\ndata: {}\n\n"), []byte(""))
	f.Add([]byte("data: a\r\ndata:b\n"), []byte("x"))
	f.Fuzz(func(t *testing.T, stream, payload []byte) {
		r := NewReader(bytes.NewReader(stream), FramingSSE, 512)
		for i := 0; ; i++ {
			if i > len(stream) {
				t.Fatal("more events than bytes")
			}
			ev, err := r.NextEvent()
			if err != nil {
				break
			}
			if len(ev.Data) > 512 {
				t.Fatalf("event of %d bytes", len(ev.Data))
			}
		}

		// The whole stream as one event: every data line contributes, in
		// order, and nothing else does.
		ev, _ := ParseEvent(stream)
		n := 0
		for _, line := range strings.Split(string(stream), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if strings.HasPrefix(line, "data:") || line == "data" {
				n++
			}
		}
		if got := bytes.Count(ev.Data, []byte("\n")) + 1; n > 0 && got != n {
			t.Fatalf("%q: %d data lines but %d in %q", stream, n, got, ev.Data)
		}
		if n == 0 && len(ev.Data) != 0 {
			t.Fatalf("%q has no data line but got %q", stream, ev.Data)
		}

		// Round trip: a payload without CR, written as data lines.
		payload = bytes.ReplaceAll(payload, []byte("\r"), nil)
		var enc bytes.Buffer
		for _, line := range bytes.Split(payload, []byte("\n")) {
			enc.WriteString("data: ")
			enc.Write(line)
			enc.WriteString("\n")
		}
		enc.WriteString("\n")
		ev, err := NewReader(&enc, FramingSSE, 1<<20).NextEvent()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ev.Data, payload) {
			t.Fatalf("read %q, wrote %q", ev.Data, payload)
		}
	})
}
