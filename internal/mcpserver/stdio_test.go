package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store"
)

var pipelineInput = strings.Join([]string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentd_agent_helper_bot","arguments":{"message":"hi"}}}`,
}, "\n") + "\n"

// TestStdioEndOfInput checks both stdio modes at the end of input: a
// pipeline that writes its requests and closes stdin gets every answer,
// and a run still going when stdin closes is cancelled after the grace
// period instead of keeping the process alive.
func TestStdioEndOfInput(t *testing.T) {
	modes := []struct {
		name  string
		serve func(t *testing.T, h *harness, grace time.Duration) func(context.Context, io.Reader, io.Writer) error
	}{
		{"in-process", func(t *testing.T, h *harness, grace time.Duration) func(context.Context, io.Reader, io.Writer) error {
			h.srv.eofGrace = grace
			return h.srv.ServeStdio
		}},
		{"relay", func(t *testing.T, h *harness, grace time.Duration) func(context.Context, io.Reader, io.Writer) error {
			ts := h.httpServer(t)
			return func(ctx context.Context, in io.Reader, out io.Writer) error {
				return Forward(ctx, in, out, ForwardOptions{URL: ts.URL + "/mcp", eofGrace: grace})
			}
		}},
	}
	for _, m := range modes {
		t.Run(m.name+"/pipeline", func(t *testing.T) {
			h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Text: "piped answer"})})
			var out bytes.Buffer
			if err := m.serve(t, h, 5*time.Second)(context.Background(), strings.NewReader(pipelineInput), &out); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`"id":1,"result"`, `"id":2,"result"`, `"id":3,"result"`, "piped answer"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %s:\n%s", want, out.String())
				}
			}
		})
		t.Run(m.name+"/long run", func(t *testing.T) {
			h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Text: strings.Repeat("slow ", 100), Chunks: 100, Delay: 100 * time.Millisecond})})
			start := time.Now()
			var out bytes.Buffer
			if err := m.serve(t, h, 300*time.Millisecond)(context.Background(), strings.NewReader(pipelineInput), &out); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("returned after %v: the 10 s run was not cancelled", d)
			}
			if !strings.Contains(out.String(), `"id":2,"result"`) {
				t.Errorf("quick answers were lost:\n%s", out.String())
			}
			// The run itself stopped: its session takes a new turn.
			ctx := context.Background()
			waitFor(t, func() bool {
				list, _ := h.db.ListSessions(ctx, store.SessionFilter{})
				if len(list) == 0 {
					return false
				}
				pctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
				defer cancel()
				_, err := h.kernel.Run(pctx, &agent.RunRequest{Agent: "helper-bot", SessionID: list[0].ID, Input: llm.TextMessage(llm.RoleUser, "probe")})
				return !errors.Is(err, agent.ErrSessionBusy)
			})
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the run went on for %v after stdin closed", d)
			}
		})
	}
}

// TestStdioStopsOnCancel checks that cancelling the context (SIGTERM in
// `agentd mcp`) stops both stdio modes promptly, a run in progress
// included, while stdin stays open.
func TestStdioStopsOnCancel(t *testing.T) {
	for _, mode := range []string{"in-process", "relay"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Text: strings.Repeat("slow ", 100), Chunks: 100, Delay: 100 * time.Millisecond})})
			serve := h.srv.ServeStdio
			if mode == "relay" {
				ts := h.httpServer(t)
				serve = func(ctx context.Context, in io.Reader, out io.Writer) error {
					return Forward(ctx, in, out, ForwardOptions{URL: ts.URL + "/mcp"})
				}
			}
			inR, inW := io.Pipe()
			defer inW.Close()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- serve(ctx, inR, io.Discard) }()
			if _, err := io.WriteString(inW, pipelineInput); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return h.provider.Count() >= 1 })
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("serving went on after cancellation")
			}
		})
	}
}

// TestStdioClientHangsUp checks that a client that stops reading stdout
// ends the session like one that closes stdin: when the answer to a call
// still running cannot be written, ServeStdio returns nil, not a write
// error.
func TestStdioClientHangsUp(t *testing.T) {
	h := newHarness(t, harnessOptions{model: llmtest.Always(llmtest.Reply{Text: "late", Delay: 200 * time.Millisecond})})
	h.srv.eofGrace = 5 * time.Second
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- h.srv.ServeStdio(context.Background(), inR, outW) }()
	lines := strings.SplitAfter(pipelineInput, "\n")
	if _, err := io.WriteString(inW, lines[0]+lines[1]); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(outR).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("initialize: %q, %v", line, err)
	}
	if _, err := io.WriteString(inW, lines[3]); err != nil { // the agent call
		t.Fatal(err)
	}
	outR.Close()
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v, want nil when the client hangs up", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after the client hung up")
	}
}

// TestStdioDropsWhatFollowsACancellation checks the stdio connection on
// its own: once the client cancelled a request, neither its response nor
// its progress goes out, while those of other requests do, and the
// cancelled request no longer counts as waiting for an answer.
func TestStdioDropsWhatFollowsACancellation(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"p1"}}}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"b","_meta":{"progressToken":7}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"enough"}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	c := newStdioConn(strings.NewReader(in), &out, 1<<20, time.Second, slog.New(slog.DiscardHandler))
	defer c.Close()
	ctx := context.Background()
	for range 3 {
		if _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, raw := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":"two","result":{"content":[]}}`,
	} {
		msg, err := jsonrpc.DecodeMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":"two","result":{"content":[]}}` + "\n"
	if out.String() != want {
		t.Errorf("written:\n%s\nwant:\n%s", out.String(), want)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) != 0 || len(c.cancelledTokens) != 0 {
		t.Errorf("still pending %v, cancelled tokens %v", c.pending, c.cancelledTokens)
	}
}
