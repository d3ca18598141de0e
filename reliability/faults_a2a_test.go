//go:build linux

package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// Drop modes of the A2A peer.
const (
	dropNone   int32 = iota
	dropStream       // cut SSE responses after their first event
	dropAtOnce       // close the connection of every POST before answering
)

// dropper wraps a peer's handler and drops its connections the way a
// crashing peer or a broken network would: without an HTTP-level error.
type dropper struct {
	next  http.Handler
	mode  atomic.Int32
	drops atomic.Int32
}

func (d *dropper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		d.next.ServeHTTP(w, r)
		return
	}
	switch d.mode.Load() {
	case dropAtOnce:
		_, _ = io.Copy(io.Discard, r.Body)
		d.drops.Add(1)
		hijackClose(w)
		return
	case dropStream:
		d.next.ServeHTTP(&cutWriter{ResponseWriter: w, d: d}, r)
		return
	}
	d.next.ServeHTTP(w, r)
}

// hijackClose closes the client's connection without a response.
func hijackClose(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = buf.Flush()
	_ = conn.Close()
}

// cutWriter passes an event stream through until its first event is
// complete and flushed, then closes the connection under the handler.
type cutWriter struct {
	http.ResponseWriter
	d      *dropper
	buf    bytes.Buffer
	events bool
	cut    bool
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.cut {
		return 0, http.ErrHijacked
	}
	if !c.events {
		c.events = strings.HasPrefix(c.Header().Get("Content-Type"), "text/event-stream")
	}
	n, err := c.ResponseWriter.Write(p)
	if c.events {
		c.buf.Write(p)
		if bytes.Contains(c.buf.Bytes(), []byte("\n\n")) {
			if f, ok := c.ResponseWriter.(http.Flusher); ok {
				f.Flush()
			}
			c.cut = true
			c.d.drops.Add(1)
			hijackClose(c.ResponseWriter)
		}
	}
	return n, err
}

func (c *cutWriter) Flush() {
	if c.cut {
		return
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestFaultsA2APeerDrops points an external agent at a second agentd whose
// connections are cut mid-stream or before any answer, and checks what
// the caller of /api/a2a/send and of an agent delegating to the peer sees.
func TestFaultsA2APeerDrops(t *testing.T) {
	track(t, areaFaults, false)
	before := baseline()

	peerModel := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "peer answer in several pieces", Chunks: 5, Delay: 20 * time.Millisecond}))
	peerModelURL, peerModelProxy := proxyURL(t, peerModel.URL)
	drop := &dropper{}
	peer := startDaemon(t, daemonSpec{Wrap: func(h http.Handler) http.Handler { drop.next = h; return drop }, TOML: fmt.Sprintf(`
[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "remote"
provider = "fake"
model = "peer-model"

[agents.expose]
a2a = true

[a2a]
enabled = true

[limits]
rate_per_sec = 100000
burst = 100000
`, peerModelURL)})

	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == llm.RoleTool {
			return llmtest.Reply{Text: "tool said: " + last.ToolResults[0].Content}
		}
		if strings.HasPrefix(r.LastUserText(), "delegate") {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("a2a_peer", `{"message":"please help"}`)}}
		}
		return llmtest.Reply{Text: "ok"}
	})
	modelURL, modelProxy := proxyURL(t, model.URL)
	p := startDaemon(t, daemonSpec{Key: faultKey, TOML: faultConfig(modelURL, fmt.Sprintf(`
[a2a]
enabled = true

[[a2a.external_agents]]
name = "peer"
url = %q
allow_private = true
`, peer.URL+"/a2a/agents/remote"))})

	// Discovery runs in the background.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := p.call(t, "GET", "/api/a2a/agents", nil)
		if bytes.Contains(r.Body, []byte(`"discovered": true`)) || bytes.Contains(r.Body, []byte(`"discovered":true`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("peer not discovered: %v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Warm up every path once without faults.
	if r := p.call(t, "POST", "/api/a2a/send", map[string]any{"agent": "peer", "message": "hello"}); r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte("peer answer")) {
		t.Fatalf("send without faults: %v", r)
	}
	if r := p.call(t, "POST", "/api/a2a/send", map[string]any{"agent": "peer", "message": "hello", "stream": true}); r.Status != http.StatusOK || sseLast(r.Body).name == "error" {
		t.Fatalf("stream without faults: %v", r)
	}
	if r := p.call(t, "POST", "/api/agents/chat/messages", map[string]string{"message": "delegate warm"}); r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte("peer answer")) {
		t.Fatalf("delegation without faults: %v", r)
	}

	closers := []func(){p.dropConns, peer.dropConns, modelProxy.DropConns, peerModelProxy.DropConns}
	cases := []struct {
		name  string
		mode  int32
		run   func(t *testing.T, i int) reply
		check func(t *testing.T, r reply) string // returns the figure
	}{
		{
			name: "stream dropped after the first event", mode: dropStream,
			run: func(t *testing.T, i int) reply {
				return p.call(t, "POST", "/api/a2a/send", map[string]any{"agent": "peer", "message": fmt.Sprintf("stream %d", i), "stream": true})
			},
			check: func(t *testing.T, r reply) string {
				evs := sseEvents(r.Body)
				last := sseLast(r.Body)
				if r.Status != http.StatusOK || len(evs) < 2 || last.name != "error" {
					t.Fatalf("want an event stream ending in an error event, got %v", r)
				}
				var e struct {
					Message string `json:"message"`
				}
				_ = json.Unmarshal([]byte(last.data), &e)
				if !strings.Contains(e.Message, "peer") {
					t.Errorf("the error event does not name the peer: %q", e.Message)
				}
				return fmt.Sprintf("HTTP %d, %d A2A event(s), then `error` event %q", r.Status, len(evs)-1, e.Message)
			},
		},
		{
			name: "connection dropped before any answer", mode: dropAtOnce,
			run: func(t *testing.T, i int) reply {
				return p.call(t, "POST", "/api/a2a/send", map[string]any{"agent": "peer", "message": fmt.Sprintf("send %d", i)})
			},
			check: func(t *testing.T, r reply) string {
				var e apiError
				decodeJSON(t, r.Body, &e)
				if r.Status != http.StatusBadGateway || e.Error.Code != "upstream" || !strings.Contains(e.Error.Message, "peer") {
					t.Fatalf("want 502 upstream naming the peer, got %v", r)
				}
				return fmt.Sprintf("HTTP %d `%s` %q", r.Status, e.Error.Code, e.Error.Message)
			},
		},
		{
			name: "delegating agent, peer drops", mode: dropAtOnce,
			run: func(t *testing.T, i int) reply {
				return p.call(t, "POST", "/api/agents/chat/messages", map[string]string{"message": fmt.Sprintf("delegate %d", i)})
			},
			check: func(t *testing.T, r reply) string {
				var m messageReply
				decodeJSON(t, r.Body, &m)
				if r.Status != http.StatusOK || !strings.HasPrefix(m.Text, "tool said: ") || !strings.Contains(m.Text, "failed") {
					t.Fatalf("want 200 with the model told the delegation failed, got %v", r)
				}
				return fmt.Sprintf("HTTP %d; the model was told %q", r.Status, truncate(strings.TrimPrefix(m.Text, "tool said: "), 200))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := baseline(closers...)
			drop.mode.Store(tc.mode)
			start := drop.drops.Load()
			var figure string
			for i := range minReps {
				figure = tc.check(t, tc.run(t, i))
			}
			drop.mode.Store(dropNone)
			if n := drop.drops.Load() - start; n < minReps {
				t.Errorf("the peer dropped %d connections, want at least %d", n, minReps)
			}
			fig(t, areaFaults, "A2A peer: "+tc.name+": caller sees", "%s", figure)
			if r := p.call(t, "POST", "/api/a2a/send", map[string]any{"agent": "peer", "message": "after"}); r.Status != http.StatusOK {
				t.Fatalf("send after the fault: %v", r)
			}
			after := settle(base, 5*time.Second, closers...)
			checkBaseline(t, tc.name, base, after)
			fig(t, areaFaults, "A2A peer: "+tc.name+": resources after "+fmt.Sprint(minReps)+" faults", "%+d goroutines, %+d fds vs baseline (both daemons in process)",
				after.Goroutines-base.Goroutines, after.FDs-base.FDs)
		})
	}

	p.Close()
	peer.Close()
	modelProxy.Close()
	peerModelProxy.Close()
	model.Close()
	peerModel.Close()
	after := settle(before, 5*time.Second)
	checkBaseline(t, "daemons closed", before, after)
	fig(t, areaFaults, "After daemon.Close (A2A peer drops)", "%+d goroutines, %+d fds, %+d children vs before the daemons started",
		after.Goroutines-before.Goroutines, after.FDs-before.FDs, after.Children-before.Children)
}

// sseLast returns the last event of an SSE body.
func sseLast(body []byte) sseEvent {
	evs := sseEvents(body)
	if len(evs) == 0 {
		return sseEvent{}
	}
	return evs[len(evs)-1]
}
