// agentd patch tests: see third_party/a2a-go/PATCH.md (change 1).

package a2asrv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/internal/jsonrpc"
	"github.com/a2aproject/a2a-go/v2/internal/sse"
)

// openPatchStream starts a JSON-RPC stream against h and returns its
// body's scanner once the response headers are in.
func openPatchStream(t *testing.T, ctx context.Context, h http.Handler) *bufio.Scanner {
	t.Helper()
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)
	request := jsonrpc.ServerRequest{
		JSONRPC: "2.0",
		Method:  jsonrpc.MethodMessageStream,
		Params:  mustMarshal(t, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))}),
		ID:      1,
	}
	req, err := http.NewRequestWithContext(ctx, "POST", server.URL, bytes.NewBuffer(mustMarshal(t, request)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", sse.ContentEventStream)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return bufio.NewScanner(resp.Body)
}

// TestJSONRPC_StreamWrittenByHandlerGoroutine: while a stream is open,
// its events are produced by the HTTP handler's goroutine, not by a
// goroutine of its own.
func TestJSONRPC_StreamWrittenByHandlerGoroutine(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	executor := &mockAgentExecutor{
		ExecuteFunc: func(ctx context.Context, execCtx *ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(yield func(a2a.Event, error) bool) {
				if !yield(a2a.NewSubmittedTask(execCtx, execCtx.Message), nil) {
					return
				}
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
		},
	}
	scanner := openPatchStream(t, ctx, NewJSONRPCHandler(NewHandler(executor), WithTransportKeepAlive(time.Hour)))
	for scanner.Scan() {
		if strings.HasPrefix(scanner.Text(), "data:") {
			break
		}
	}
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	var seen bool
	for g := range strings.SplitSeq(stacks, "\n\n") {
		if !strings.Contains(g, "eventSeqToSSEDataStream") {
			continue
		}
		seen = true
		if !strings.Contains(g, "net/http.(*conn).serve") {
			t.Errorf("the stream's events are produced outside the handler's goroutine:\n%s", g)
		}
	}
	if !seen {
		t.Fatal("no goroutine produces the stream's events")
	}
}

// TestJSONRPC_KeepAlivesBetweenEvents: keep-alives from the timer and
// events from the handler never interleave within a frame (the race
// detector checks the writes are serialized).
func TestJSONRPC_KeepAlivesBetweenEvents(t *testing.T) {
	const events = 50
	executor := &mockAgentExecutor{
		ExecuteFunc: func(ctx context.Context, execCtx *ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(yield func(a2a.Event, error) bool) {
				task := a2a.NewSubmittedTask(execCtx, execCtx.Message)
				if !yield(task, nil) {
					return
				}
				for range events {
					time.Sleep(200 * time.Microsecond)
					if !yield(a2a.NewStatusUpdateEvent(task, a2a.TaskStateWorking, nil), nil) {
						return
					}
				}
				yield(a2a.NewStatusUpdateEvent(task, a2a.TaskStateCompleted, nil), nil)
			}
		},
	}
	scanner := openPatchStream(t, t.Context(), NewJSONRPCHandler(NewHandler(executor), WithTransportKeepAlive(100*time.Microsecond)))
	var data, keepAlives int
	prev := ""
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case line == ": keep-alive":
			keepAlives++
			if prev != "" {
				t.Fatalf("keep-alive inside a frame, after %q", prev)
			}
		case strings.HasPrefix(line, "id:"):
			if prev != "" {
				t.Fatalf("id line after %q", prev)
			}
		case strings.HasPrefix(line, "data:"):
			data++
			if !strings.HasPrefix(prev, "id:") {
				t.Fatalf("data line after %q", prev)
			}
		case line == "":
		default:
			t.Fatalf("unexpected line %q", line)
		}
		prev = line
	}
	if data != events+2 {
		t.Errorf("got %d events, want %d", data, events+2)
	}
	if keepAlives == 0 {
		t.Error("no keep-alive")
	}
}

// TestJSONRPC_StreamPanicRecovered: a panic of the event sequence, now in
// the handler's goroutine, still becomes an error event through the
// panic handler.
func TestJSONRPC_StreamPanicRecovered(t *testing.T) {
	handler := &panickingStreamHandler{RequestHandler: NewHandler(&mockAgentExecutor{})}
	var recovered any
	h := NewJSONRPCHandler(handler, WithTransportPanicHandler(func(r any) error {
		recovered = r
		return errors.New("recovered")
	}))
	scanner := openPatchStream(t, t.Context(), h)
	var lines []string
	for scanner.Scan() {
		if strings.HasPrefix(scanner.Text(), "data:") {
			lines = append(lines, scanner.Text())
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[1], `"error"`) {
		t.Fatalf("got data lines %q, want an event then an error", lines)
	}
	if recovered == nil || !strings.Contains(recovered.(error).Error(), "boom") {
		t.Errorf("panic handler got %v", recovered)
	}
}

type panickingStreamHandler struct{ RequestHandler }

func (panickingStreamHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("first")), nil) {
			return
		}
		panic("boom")
	}
}
