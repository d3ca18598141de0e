package a2asrv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/internal/jsonrpc"
	"github.com/a2aproject/a2a-go/v2/internal/sse"
)

// failingRW is a ResponseWriter whose writes fail once failAfter bytes
// were written (0: never), and which records writes after the handler
// returned.
type failingRW struct {
	mu        sync.Mutex
	h         http.Header
	buf       bytes.Buffer
	failAfter int
	returned  atomic.Bool
	late      atomic.Int32
}

func (w *failingRW) Header() http.Header { return w.h }
func (w *failingRW) WriteHeader(int)     {}
func (w *failingRW) Write(p []byte) (int, error) {
	if w.returned.Load() {
		w.late.Add(1)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failAfter > 0 && w.buf.Len()+len(p) > w.failAfter {
		return 0, errors.New("broken pipe")
	}
	return w.buf.Write(p)
}
func (w *failingRW) Flush() {
	if w.returned.Load() {
		w.late.Add(1)
	}
}

func streamRequest(t *testing.T, ctx context.Context) *http.Request {
	request := jsonrpc.ServerRequest{
		JSONRPC: "2.0",
		Method:  jsonrpc.MethodMessageStream,
		Params:  mustMarshal(t, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))}),
		ID:      1,
	}
	req := httptest.NewRequestWithContext(ctx, "POST", "/", bytes.NewReader(mustMarshal(t, request)))
	req.Header.Set("Accept", sse.ContentEventStream)
	return req
}

// A keep-alive that fails while the stream waits for its next event
// ends the stream (as the handler returning did in v2.4.0).
func TestKeepAliveFailureEndsStream(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	executor := &mockAgentExecutor{
		ExecuteFunc: func(ctx context.Context, execCtx *ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(yield func(a2a.Event, error) bool) {
				if !yield(a2a.NewSubmittedTask(execCtx, execCtx.Message), nil) {
					return
				}
				<-release
			}
		},
	}
	h := NewJSONRPCHandler(NewHandler(executor), WithTransportKeepAlive(5*time.Millisecond))
	rw := &failingRW{h: http.Header{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rw, streamRequest(t, t.Context()))
	}()
	// Let the first event out, then break the connection.
	time.Sleep(50 * time.Millisecond)
	rw.mu.Lock()
	rw.failAfter = rw.buf.Len()
	rw.mu.Unlock()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("the handler did not return after its keep-alive failed")
	}
}

// No write reaches the ResponseWriter after the handler returned, with
// keep-alives firing all the time.
func TestNoWriteAfterReturn(t *testing.T) {
	executor := &mockAgentExecutor{
		ExecuteFunc: func(ctx context.Context, execCtx *ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(yield func(a2a.Event, error) bool) {
				task := a2a.NewSubmittedTask(execCtx, execCtx.Message)
				if !yield(task, nil) {
					return
				}
				yield(a2a.NewStatusUpdateEvent(task, a2a.TaskStateCompleted, nil), nil)
			}
		},
	}
	h := NewJSONRPCHandler(NewHandler(executor), WithTransportKeepAlive(time.Microsecond))
	var late int32
	for range 300 {
		rw := &failingRW{h: http.Header{}}
		h.ServeHTTP(rw, streamRequest(t, t.Context()))
		rw.returned.Store(true)
		time.Sleep(20 * time.Microsecond)
		late += rw.late.Load()
	}
	if late > 0 {
		t.Fatalf("%d writes after the handler returned", late)
	}
}

// A client that stops reading a stream of large events and then leaves:
// the handler returns and no goroutine is left once the execution ends.
func TestStalledClientLeaves(t *testing.T) {
	big := strings.Repeat("x", 256<<10)
	finished := make(chan struct{})
	executor := &mockAgentExecutor{
		ExecuteFunc: func(ctx context.Context, execCtx *ExecutorContext) iter.Seq2[a2a.Event, error] {
			return func(yield func(a2a.Event, error) bool) {
				defer close(finished)
				task := a2a.NewSubmittedTask(execCtx, execCtx.Message)
				if !yield(task, nil) {
					return
				}
				for range 24 {
					ev := a2a.NewArtifactEvent(task, a2a.NewTextPart(big))
					if !yield(ev, nil) {
						return
					}
				}
				yield(a2a.NewStatusUpdateEvent(task, a2a.TaskStateCompleted, nil), nil)
			}
		},
	}
	before := runtime.NumGoroutine()
	handlerDone := make(chan struct{}, 1)
	inner := NewJSONRPCHandler(NewHandler(executor), WithTransportKeepAlive(10*time.Millisecond))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		handlerDone <- struct{}{}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	req := streamRequest(t, ctx)
	req.RequestURI = ""
	req.URL, _ = req.URL.Parse(srv.URL)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.CopyN(io.Discard, resp.Body, 100)
	time.Sleep(300 * time.Millisecond) // stalled: the server's writes block
	cancel()
	resp.Body.Close()
	select {
	case <-handlerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not return after the client left")
	}
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("the execution did not end:\n%s", buf[:runtime.Stack(buf, true)])
	}
	srv.CloseClientConnections()
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(60 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
