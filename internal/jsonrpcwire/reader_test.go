package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type frameResult struct {
	frame    string
	tooLarge bool
}

func readAll(t testing.TB, r *Reader) ([]frameResult, error) {
	var out []frameResult
	for i := 0; i < 1000; i++ {
		f, err := r.Next()
		var tl *TooLargeError
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

func TestReader(t *testing.T) {
	big := strings.Repeat("x", 100)
	tests := []struct {
		name    string
		in      string
		max     int64
		framing Framing // given to NewReader
		want    []frameResult
		wantErr error // besides io.EOF
		detect  Framing
	}{
		{"lines", "{\"a\":1}\n{\"b\":2}\n", 64, FramingUnknown, []frameResult{{frame: `{"a":1}`}, {frame: `{"b":2}`}}, nil, FramingLines},
		{"crlf and blank lines", "\r\n\n{\"a\":1}\r\n\r\n{\"b\":2}", 64, FramingUnknown, []frameResult{{frame: `{"a":1}`}, {frame: `{"b":2}`}}, nil, FramingLines},
		{"short first message", "{}\n", 64, FramingUnknown, []frameResult{{frame: `{}`}}, nil, FramingLines},
		{"starts like content-length", "Content-Type: x\n", 64, FramingUnknown, []frameResult{{frame: "Content-Type: x"}}, nil, FramingLines},
		{"line over the limit is skipped", "{\"a\":\"" + big + "\"}\n{\"b\":2}\n", 64, FramingUnknown,
			[]frameResult{{frame: `{"a":"` + big[:64-6+2], tooLarge: true}, {frame: `{"b":2}`}}, nil, FramingLines},
		{"line just over the limit is skipped", strings.Repeat("y", 65) + "\n{}\n", 64, FramingLines,
			[]frameResult{{frame: "y", tooLarge: true}, {frame: `{}`}}, nil, FramingLines},
		{"line at the limit passes", strings.Repeat("y", 64) + "\r\n", 64, FramingLines,
			[]frameResult{{frame: strings.Repeat("y", 64)}}, nil, FramingLines},
		{"content-length", "Content-Length: 7\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}", 64, FramingUnknown,
			[]frameResult{{frame: `{"a":1}`}, {frame: `{}`}}, nil, FramingContentLength},
		{"content-length any case, extra headers, LF only", "  content-length: 2\nContent-Type: application/json\n\n{}", 64, FramingUnknown,
			[]frameResult{{frame: `{}`}}, nil, FramingContentLength},
		{"content-length body over the limit is skipped", "Content-Length: 100\r\n\r\n" + big + "Content-Length: 2\r\n\r\n{}", 64, FramingUnknown,
			[]frameResult{{frame: big[:64], tooLarge: true}, {frame: `{}`}}, nil, FramingContentLength},
		{"content-length missing", "Content-Length: 2\r\n\r\n{}X-Other: 1\r\n\r\n{}", 64, FramingUnknown,
			[]frameResult{{frame: `{}`}}, ErrFraming, FramingContentLength},
		{"content-length truncated body", "Content-Length: 10\r\n\r\n{}", 64, FramingUnknown, nil, ErrFraming, FramingContentLength},
		{"content-length negative", "Content-Length: -1\r\n\r\n", 64, FramingUnknown, nil, ErrFraming, FramingContentLength},
		{"empty", "", 64, FramingUnknown, nil, nil, FramingUnknown},
		{"events", "event: message\ndata: {\"a\":1}\n\n: ping\n\nid: 7\r\ndata: {}\r\n\r\n", 64, FramingSSE,
			[]frameResult{{frame: "event: message\ndata: {\"a\":1}\n\n"}, {frame: ": ping\n\n"}, {frame: "id: 7\r\ndata: {}\r\n\r\n"}}, nil, FramingSSE},
		{"event over the limit is skipped", "data: {\"a\":\"" + big + "\"}\n\ndata: {}\n\n", 64, FramingSSE,
			[]frameResult{{frame: `{"a":"xx`, tooLarge: true}, {frame: "data: {}\n\n"}}, nil, FramingSSE},
		{"unterminated last event", "data: {}\n\ndata: {", 64, FramingSSE,
			[]frameResult{{frame: "data: {}\n\n"}}, nil, FramingSSE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.in), tc.framing, tc.max)
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
			if r.Framing() != tc.detect {
				t.Errorf("framing %v, want %v", r.Framing(), tc.detect)
			}
		})
	}
}

// TestTooLargeKeepsBothEnds checks that an oversized message, however it
// is framed and however slowly it arrives, leaves its first and last
// bytes, its size and (for an event) its id.
func TestTooLargeKeepsBothEnds(t *testing.T) {
	msg := `{"result":"` + strings.Repeat("z", 3*streamBufSize) + `","jsonrpc":"2.0","id":12}`
	tests := []struct {
		framing Framing
		in      string
		size    int
		eventID string
	}{
		{FramingLines, msg + "\r\n", len(msg), ""},
		{FramingContentLength, "Content-Length: " + strconv.Itoa(len(msg)) + "\r\n\r\n" + msg, len(msg), ""},
		{FramingSSE, "event: message\nid: e9\ndata: " + msg + "\n\n", len("event: message\nid: e9\ndata: " + msg + "\n\n"), "e9"},
	}
	for _, tc := range tests {
		for _, slow := range []bool{false, true} {
			var src io.Reader = strings.NewReader(tc.in + tc.in)
			if slow {
				src = iotest.HalfReader(src)
			}
			r := NewReader(src, tc.framing, 1000)
			for range 2 {
				_, err := r.Next()
				var tl *TooLargeError
				if !errors.As(err, &tl) {
					t.Fatalf("%v: err = %v", tc.framing, err)
				}
				if tl.Size != int64(tc.size) || !strings.HasPrefix(msg, string(tl.Head)) || len(tl.Head) < HeadMax/2 ||
					!strings.HasSuffix(msg, string(bytes.TrimRight(tl.Tail, "\r\n"))) || len(tl.Tail) < HeadMax-2 || tl.EventID != tc.eventID {
					t.Fatalf("%v: size %d head %.20q tail %.20q id %q", tc.framing, tl.Size, tl.Head, tl.Tail, tl.EventID)
				}
				if k, id := Classify(tl.Head, tl.Tail); k != KindResponse || string(id) != "12" {
					t.Errorf("%v: classify = %v %s", tc.framing, k, id)
				}
			}
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("%v: after the frames: %v", tc.framing, err)
			}
		}
	}
}

// TestReaderDoesNotWaitForMore checks that detection decides on a short
// first message without waiting for bytes the client will only send after
// the answer.
func TestReaderDoesNotWaitForMore(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	r := NewReader(pr, FramingUnknown, 1024)
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

func TestWriter(t *testing.T) {
	for _, mode := range []Framing{FramingLines, FramingContentLength} {
		var buf bytes.Buffer
		w := NewWriter(&buf, func() Framing { return mode })
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

func TestReadBody(t *testing.T) {
	const limit = 16
	over := `{"id":2,"x":"` + strings.Repeat("b", 20) + `"}`
	var buf bytes.Buffer
	if err := ReadBody(&buf, strings.NewReader(over[:limit]), limit, limit); err != nil || buf.String() != over[:limit] {
		t.Fatalf("at the limit: %q, %v", buf.String(), err)
	}
	for _, declared := range []int64{-1, int64(len(over))} {
		buf.Reset()
		var tl *TooLargeError
		err := ReadBody(&buf, strings.NewReader(over), declared, limit)
		if !errors.As(err, &tl) || tl.Limit != limit || !strings.HasPrefix(over, string(tl.Head)) || ScanID(tl.Head) == nil ||
			declared < 0 && tl.Size != limit+1 || declared > 0 && (tl.Size != declared || string(tl.Head) != over) {
			t.Errorf("declared %d: %v (%+v)", declared, err, tl)
		}
	}
	broken := errors.New("connection reset")
	if err := ReadBody(&buf, iotest.ErrReader(broken), -1, limit); !errors.Is(err, broken) {
		t.Errorf("read error: %v", err)
	}
}

func TestSizeAndReply(t *testing.T) {
	for n, want := range map[int64]string{10 << 20: "10 MB", 4096: "4 KB", 1024: "1 KB", 1000: "1000 bytes", 1536: "1536 bytes", 3<<20 + 1: "3145729 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
	e := &TooLargeError{Limit: 4096}
	got := string(ErrorResponse(json.RawMessage("7"), -32600, e.Error()))
	if want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"message too large: over the 4 KB limit"}}`; got != want {
		t.Errorf("reply %s, want %s", got, want)
	}
}

// FuzzReader checks the framing detector and every decoder: on any input
// they end (EOF or a framing error), never return a frame over the limit
// or a line with a line break, and keep no more than HeadMax of each end
// of an oversized one; and what Writer writes, Reader reads back
// unchanged, in either stdio framing.
func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"), false, false)
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"), true, false)
	f.Add([]byte("content-length: 99999999999999999999\r\n\r\n"), true, false)
	f.Add([]byte("Content-Len"), false, false)
	f.Add([]byte("\r\n\r\n  \n[1,2]\r\n"), false, false)
	f.Add([]byte("id:1\r\nretry:x\r\n\r\n:\ndata: {}\n\n"), false, true)
	f.Fuzz(func(t *testing.T, data []byte, cl, sse bool) {
		const max = 256
		framing := FramingUnknown
		if sse {
			framing = FramingSSE
		}
		r := NewReader(bytes.NewReader(data), framing, max)
		for i := 0; ; i++ {
			if i > len(data)+2 {
				t.Fatal("more frames than input bytes")
			}
			fr, err := r.Next()
			var tl *TooLargeError
			if errors.As(err, &tl) {
				if len(tl.Head) > HeadMax || len(tl.Tail) > HeadMax || tl.Size <= max {
					t.Fatalf("head of %d bytes, tail of %d, size %d", len(tl.Head), len(tl.Tail), tl.Size)
				}
				continue
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrFraming) {
					t.Fatalf("unexpected error %v", err)
				}
				if len(fr) > max {
					t.Fatalf("last event of %d bytes over the %d limit", len(fr), max)
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
		w := NewWriter(&buf, func() Framing { return mode })
		for _, m := range msgs {
			if err := w.WriteFrame(m); err != nil {
				t.Fatal(err)
			}
		}
		r = NewReader(&buf, FramingUnknown, 1<<20)
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
