package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/jsonrpcwire"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// transcriptLimit is the message size limit the transcripts are served
// with, so the oversized case stays small.
const transcriptLimit = 4096

var transcriptNames = []string{"session-2025-11-25", "stateless-2026-07-28"}

func transcriptHarness(t *testing.T) *harness {
	return newHarness(t, harnessOptions{
		model:    llmtest.Always(llmtest.Reply{Text: "MCP is the Model Context Protocol."}),
		maxBytes: transcriptLimit,
	})
}

// TestStdioTranscripts replays each .in file over stdio in both framings;
// both must produce the same .stdio.golden transcript.
func TestStdioTranscripts(t *testing.T) {
	for _, name := range transcriptNames {
		for _, fr := range []jsonrpcwire.Framing{jsonrpcwire.FramingLines, jsonrpcwire.FramingContentLength} {
			t.Run(name+"/"+fr.String(), func(t *testing.T) {
				h := transcriptHarness(t)
				got := runStdioTranscript(t, h.srv.ServeStdio, readTranscriptInput(t, name), fr)
				checkGolden(t, filepath.Join("testdata", "transcripts", name+".stdio.golden"), got)
			})
		}
	}
}

// TestForwardTranscripts replays the stdio transcripts through Forward
// (`agentd mcp` with a daemon running) to the HTTP endpoint: an editor
// must not be able to tell the two modes apart.
func TestForwardTranscripts(t *testing.T) {
	for _, name := range transcriptNames {
		for _, fr := range []jsonrpcwire.Framing{jsonrpcwire.FramingLines, jsonrpcwire.FramingContentLength} {
			t.Run(name+"/"+fr.String(), func(t *testing.T) {
				h := transcriptHarness(t)
				ts := h.httpServer(t)
				serve := func(ctx context.Context, in io.Reader, out io.Writer) error {
					return Forward(ctx, in, out, ForwardOptions{URL: ts.URL + "/mcp", MaxMessageBytes: transcriptLimit})
				}
				got := runStdioTranscript(t, serve, readTranscriptInput(t, name), fr)
				checkGolden(t, filepath.Join("testdata", "transcripts", name+".stdio.golden"), got)
			})
		}
	}
}

// TestHTTPTranscripts replays each .in file over Streamable HTTP, one POST
// per message, recording statuses and the messages of each response.
func TestHTTPTranscripts(t *testing.T) {
	for _, name := range transcriptNames {
		t.Run(name, func(t *testing.T) {
			h := transcriptHarness(t)
			ts := h.httpServer(t)
			got := runHTTPTranscript(t, ts.URL+"/mcp", readTranscriptInput(t, name))
			checkGolden(t, filepath.Join("testdata", "transcripts", name+".http.golden"), got)
		})
	}
}

// transcriptLine is one line of a .in file: a comment or a message.
type transcriptLine struct {
	comment string
	msg     string // as written in the file
}

func readTranscriptInput(t *testing.T, name string) []transcriptLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "transcripts", name+".in"))
	if err != nil {
		t.Fatal(err)
	}
	var out []transcriptLine
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
		case strings.HasPrefix(l, "#"):
			out = append(out, transcriptLine{comment: l})
		default:
			out = append(out, transcriptLine{msg: l})
		}
	}
	return out
}

// wire is the message actually sent: @PAD@ grows it past the limit.
func (l transcriptLine) wire() string {
	return strings.ReplaceAll(l.msg, "@PAD@", strings.Repeat("x", transcriptLimit))
}

// awaited says what answer to wait for: the id of a request, "any" for a
// message the server cannot parse, "" for a notification.
func (l transcriptLine) awaited() string {
	if !json.Valid([]byte(l.msg)) {
		return "any"
	}
	f := jsonrpcwire.Scan([]byte(l.msg))
	if f.Method == "" || len(f.ID) == 0 {
		return ""
	}
	return string(f.ID)
}

func runStdioTranscript(t *testing.T, serve func(context.Context, io.Reader, io.Writer) error, lines []transcriptLine, fr jsonrpcwire.Framing) []string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, inR, outW)
		outW.Close()
	}()
	msgs := make(chan []byte, 100)
	reader := jsonrpcwire.NewReader(outR, jsonrpcwire.FramingUnknown, 1<<20)
	go func() {
		defer close(msgs)
		for {
			f, err := reader.Next()
			if err != nil {
				return
			}
			msgs <- bytes.Clone(f)
		}
	}()
	var out []string
	for _, l := range lines {
		if l.comment != "" {
			out = append(out, l.comment)
			continue
		}
		out = append(out, "> "+l.msg)
		w := l.wire()
		var frame string
		if fr == jsonrpcwire.FramingContentLength {
			frame = fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(w), w)
		} else {
			frame = w + "\n"
		}
		if _, err := io.WriteString(inW, frame); err != nil {
			t.Fatal(err)
		}
		want := l.awaited()
		for want != "" {
			select {
			case m, ok := <-msgs:
				if !ok {
					t.Fatalf("output ended while waiting for the answer to %s", l.msg)
				}
				out = append(out, "< "+normalizeMessage(t, m))
				if f := jsonrpcwire.Scan(m); f.Method == "" && (want == "any" || string(f.ID) == want) {
					want = ""
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no answer to %s", l.msg)
			}
		}
	}
	if got := reader.Framing(); got != fr {
		t.Errorf("server answered with %v framing, want %v", got, fr)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	cancel()
	return out
}

func runHTTPTranscript(t *testing.T, url string, lines []transcriptLine) []string {
	t.Helper()
	var out []string
	var sessionID, version string
	for _, l := range lines {
		if l.comment != "" {
			out = append(out, l.comment)
			continue
		}
		out = append(out, "> "+l.msg)
		w := l.wire()
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(w))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sessionID != "" {
			req.Header.Set(headerSessionID, sessionID)
		}
		setRequestHeaders(req.Header, []byte(w), version)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		out = append(out, strings.TrimSpace(fmt.Sprintf("< HTTP %d %s", resp.StatusCode, ct)))
		if sid := resp.Header.Get(headerSessionID); sid != "" {
			sessionID = sid
			out = append(out, "< Mcp-Session-Id: <session>")
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var msgs [][]byte
		switch ct {
		case "text/event-stream":
			sr := jsonrpcwire.NewReader(bytes.NewReader(body), jsonrpcwire.FramingSSE, 1<<20)
			for {
				ev, err := sr.NextEvent()
				if err != nil {
					break
				}
				if len(ev.Data) > 0 {
					msgs = append(msgs, ev.Data)
				}
			}
		case "application/json":
			msgs = append(msgs, body)
		default:
			if len(body) > 0 {
				out = append(out, "< (body) "+strings.TrimSpace(string(body)))
			}
		}
		for _, m := range msgs {
			out = append(out, "< "+normalizeMessage(t, m))
			var r struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if json.Unmarshal(m, &r) == nil && r.Result.ProtocolVersion != "" {
				version = r.Result.ProtocolVersion
			}
		}
	}
	return out
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// normalizeMessage re-encodes a message with sorted keys and generated
// ids replaced, so transcripts compare byte for byte.
func normalizeMessage(t *testing.T, m []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(m))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "(not JSON) " + string(m)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(scrub(v)); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func scrub(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = scrub(e)
		}
	case []any:
		for i, e := range x {
			x[i] = scrub(e)
		}
	case string:
		if uuidRE.MatchString(x) {
			return "<uuid>"
		}
		if strings.HasPrefix(x, "{") {
			// Structured content also travels as a JSON text block.
			var inner any
			if json.Unmarshal([]byte(x), &inner) == nil {
				b, _ := json.Marshal(scrub(inner))
				return string(b)
			}
		}
	}
	return v
}

func checkGolden(t *testing.T, path string, got []string) {
	t.Helper()
	text := strings.Join(got, "\n") + "\n"
	if *update {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) == text {
		return
	}
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(text, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Fatalf("%s differs at line %d:\nwant: %s\ngot:  %s\n(run with -update to accept)", path, i+1, w, g)
		}
	}
}
