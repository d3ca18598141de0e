package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

type frameResult struct {
	frame    string
	tooLarge bool
}

func readAll(t testing.TB, r *frameReader) ([]frameResult, error) {
	var out []frameResult
	for i := 0; i < 1000; i++ {
		f, err := r.Next()
		var tl *tooLargeError
		switch {
		case errors.As(err, &tl):
			out = append(out, frameResult{frame: string(tl.Head), tooLarge: true})
		case err != nil:
			return out, err
		default:
			out = append(out, frameResult{frame: string(f)})
		}
	}
	t.Fatal("reader did not end")
	return nil, nil
}

func TestFrameReader(t *testing.T) {
	big := strings.Repeat("x", 100)
	tests := []struct {
		name    string
		in      string
		max     int64
		framing Framing
		want    []frameResult
		wantErr error // besides io.EOF
	}{
		{"lines", "{\"a\":1}\n{\"b\":2}\n", 64, FramingLines, []frameResult{{frame: `{"a":1}`}, {frame: `{"b":2}`}}, nil},
		{"crlf and blank lines", "\r\n\n{\"a\":1}\r\n\r\n{\"b\":2}", 64, FramingLines, []frameResult{{frame: `{"a":1}`}, {frame: `{"b":2}`}}, nil},
		{"short first message", "{}\n", 64, FramingLines, []frameResult{{frame: `{}`}}, nil},
		{"starts like content-length", "Content-Type: x\n", 64, FramingLines, []frameResult{{frame: "Content-Type: x"}}, nil},
		{"line over the limit is skipped", "{\"a\":\"" + big + "\"}\n{\"b\":2}\n", 64, FramingLines,
			[]frameResult{{frame: `{"a":"` + big[:64-6+2], tooLarge: true}, {frame: `{"b":2}`}}, nil},
		{"content-length", "Content-Length: 7\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}", 64, FramingContentLength,
			[]frameResult{{frame: `{"a":1}`}, {frame: `{}`}}, nil},
		{"content-length any case, extra headers, LF only", "  content-length: 2\nContent-Type: application/json\n\n{}", 64, FramingContentLength,
			[]frameResult{{frame: `{}`}}, nil},
		{"content-length body over the limit is skipped", "Content-Length: 100\r\n\r\n" + big + "Content-Length: 2\r\n\r\n{}", 64, FramingContentLength,
			[]frameResult{{frame: big[:64], tooLarge: true}, {frame: `{}`}}, nil},
		{"content-length missing", "Content-Length: 2\r\n\r\n{}X-Other: 1\r\n\r\n{}", 64, FramingContentLength,
			[]frameResult{{frame: `{}`}}, errFraming},
		{"content-length truncated body", "Content-Length: 10\r\n\r\n{}", 64, FramingContentLength, nil, errFraming},
		{"content-length negative", "Content-Length: -1\r\n\r\n", 64, FramingContentLength, nil, errFraming},
		{"empty", "", 64, FramingUnknown, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newFrameReader(strings.NewReader(tc.in), tc.max)
			got, err := readAll(t, r)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
			} else if err != io.EOF {
				t.Fatalf("error %v, want EOF", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("frames %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i].tooLarge != tc.want[i].tooLarge || !strings.HasPrefix(got[i].frame, tc.want[i].frame) {
					t.Errorf("frame %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if r.Framing() != tc.framing {
				t.Errorf("framing %v, want %v", r.Framing(), tc.framing)
			}
		})
	}
}

// TestFrameReaderDoesNotWaitForMore checks that detection decides on a
// short first message without waiting for bytes the client will only send
// after the answer.
func TestFrameReaderDoesNotWaitForMore(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	r := newFrameReader(pr, 1024)
	got := make(chan string, 1)
	go func() {
		f, err := r.Next()
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(f)
	}()
	if _, err := pw.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-got:
		if f != "{}" {
			t.Fatalf("frame %q", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the reader waited for more input than the first message")
	}
}

func TestFrameWriter(t *testing.T) {
	for _, mode := range []Framing{FramingLines, FramingContentLength} {
		var buf bytes.Buffer
		w := &frameWriter{w: &buf, mode: func() Framing { return mode }}
		for _, m := range []string{`{"a":1}`, `{"b":"é"}`} {
			if err := w.WriteFrame([]byte(m)); err != nil {
				t.Fatal(err)
			}
		}
		want := "{\"a\":1}\n{\"b\":\"é\"}\n"
		if mode == FramingContentLength {
			want = "Content-Length: 7\r\n\r\n{\"a\":1}Content-Length: 10\r\n\r\n{\"b\":\"é\"}"
		}
		if buf.String() != want {
			t.Errorf("%v: wrote %q, want %q", mode, buf.String(), want)
		}
	}
}

// FuzzFraming checks the framing detector and both decoders: on any input
// they end (EOF or a framing error), never return a frame over the limit
// or a line with a line break; and what frameWriter writes, frameReader
// reads back unchanged, in either framing.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"), false)
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"), true)
	f.Add([]byte("content-length: 99999999999999999999\r\n\r\n"), true)
	f.Add([]byte("Content-Len"), false)
	f.Add([]byte("\r\n\r\n  \n[1,2]\r\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, cl bool) {
		const max = 256
		r := newFrameReader(bytes.NewReader(data), max)
		for i := 0; ; i++ {
			if i > len(data)+2 {
				t.Fatal("more frames than input bytes")
			}
			fr, err := r.Next()
			var tl *tooLargeError
			if errors.As(err, &tl) {
				if len(tl.Head) > headMax {
					t.Fatalf("head of %d bytes", len(tl.Head))
				}
				continue
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, errFraming) {
					t.Fatalf("unexpected error %v", err)
				}
				break
			}
			if len(fr) > max {
				t.Fatalf("frame of %d bytes over the %d limit", len(fr), max)
			}
			if r.Framing() == FramingLines && bytes.ContainsAny(fr, "\n") {
				t.Fatalf("line frame %q holds a line break", fr)
			}
		}

		// Round trip: the fuzz input, cut into JSON strings.
		var msgs [][]byte
		for _, part := range bytes.Split(data, []byte{0}) {
			b, _ := json.Marshal(string(part))
			msgs = append(msgs, b)
		}
		mode := FramingLines
		if cl {
			mode = FramingContentLength
		}
		var buf bytes.Buffer
		w := &frameWriter{w: &buf, mode: func() Framing { return mode }}
		for _, m := range msgs {
			if err := w.WriteFrame(m); err != nil {
				t.Fatal(err)
			}
		}
		r = newFrameReader(&buf, 1<<20)
		for i, m := range msgs {
			got, err := r.Next()
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if !bytes.Equal(got, m) {
				t.Fatalf("message %d: read %q, wrote %q", i, got, m)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the last message: %v, want EOF", err)
		}
		if r.Framing() != mode {
			t.Fatalf("detected %v, wrote %v", r.Framing(), mode)
		}
	})
}

func TestScanID(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"`, "7"},
		{`{"id":"abc","method"`, `"abc"`},
		{`{"method":"x","params":{"id":5,"deep":[1,{"id":6}]},"id":-3.5e2}`, "-3.5e2"},
		{`{"params":{"a":"\"id\":1"},"id":null}`, "null"},
		{`{"params":"xxxx`, ""},
		{`{"id":12`, ""}, // the number may continue
		{`{"id":{"x":1}}`, ""},
		{`[{"id":1}]`, ""},
		{`{"id":"unterminated`, ""},
		{``, ""},
	}
	for _, tc := range tests {
		if got := string(scanID([]byte(tc.in))); got != tc.want {
			t.Errorf("scanID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzScanID checks the id scanner on cut messages: it never panics, and
// whatever it finds is the id a full decode of the whole message finds.
func FuzzScanID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"b"}}`), 20)
	f.Add([]byte(`{"params":{"id":1,"x":[{"id":2}]},"id":"z"}`), 30)
	f.Add([]byte(`{"id":"a\"b","method":"m"}`), 10)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		if cut < 0 || cut > len(data) {
			cut = len(data)
		}
		id := scanID(data[:cut])
		if id == nil {
			return
		}
		if !json.Valid(id) {
			t.Fatalf("invalid id %q", id)
		}
		var full struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Valid(data) && json.Unmarshal(data, &full) == nil {
			var a, b any
			_ = json.Unmarshal(id, &a)
			_ = json.Unmarshal(full.ID, &b)
			if ja, _ := json.Marshal(a); string(ja) != string(mustMarshal(b)) {
				// Duplicate keys: the decoder keeps the last, the
				// scanner the first; both are acceptable for an error
				// reply, so only flag a mismatch without duplicates.
				if bytes.Count(data, []byte(`"id"`)) == 1 {
					t.Fatalf("scanned id %s, decoded %s", id, full.ID)
				}
			}
		}
		id2, _, ok := topFields(data)
		if ok && json.Valid(data) && bytes.Count(data, []byte(`"id"`)) == 1 && string(id2) != string(id) && cut == len(data) {
			t.Fatalf("topFields id %s, scanID %s", id2, id)
		}
	})
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestTopFields(t *testing.T) {
	tests := []struct {
		in         string
		id, method string
		ok         bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"method":"inner"}}`, "1", "tools/call", true},
		{`{"method":"notifications/initialized"}`, "", "notifications/initialized", true},
		{`{"id":"x","result":{}}`, `"x"`, "", true},
		{`{"method":"a\u002fb","id":2}`, "2", "a/b", true},
		{`{"method":3}`, "", "", false},
		{`[{"method":"x"}]`, "", "", false},
		{`{}`, "", "", true},
	}
	for _, tc := range tests {
		id, method, ok := topFields([]byte(tc.in))
		if string(id) != tc.id || method != tc.method || ok != tc.ok {
			t.Errorf("topFields(%s) = %s, %q, %v; want %s, %q, %v", tc.in, id, method, ok, tc.id, tc.method, tc.ok)
		}
	}
}
