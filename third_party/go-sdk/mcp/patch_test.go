// This test is agentd's: it checks agentd's patches to this copy of
// go-sdk (see PATCH.md).

package mcp

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestIdleSessionsHoldNoGoroutine: a Streamable HTTP session waiting for
// its client holds no goroutine (its reader parks), answers whatever
// comes next, in any number at once, and ends when closed while parked.
func TestIdleSessionsHoldNoGoroutine(t *testing.T) {
	impl := &Implementation{Name: "park", Version: "1"}
	server := NewServer(impl, nil)
	handler := NewStreamableHTTPHandler(func(*http.Request) *Server { return server }, nil)
	hs := httptest.NewServer(handler)
	defer hs.Close()
	ctx := context.Background()
	client := NewClient(impl, nil)
	connect := func() *ClientSession {
		t.Helper()
		// DisableStandaloneSSE: the standalone GET stream would hold
		// goroutines of its own.
		cs, err := client.Connect(ctx, &StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}, &ClientSessionOptions{ProtocolVersion: protocolVersion20251125})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	const n = 50
	sessions := make([]*ClientSession, n)
	for i := range sessions {
		sessions[i] = connect()
	}
	if r := serverReaders(); r != 0 {
		t.Errorf("%d goroutines reading %d idle sessions, want none", r, n)
	}

	// Parked sessions answer, many calls at once.
	var wg sync.WaitGroup
	for _, cs := range sessions {
		for range 4 {
			wg.Go(func() {
				for range 5 {
					ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					_, err := cs.ListTools(ctx, nil)
					cancel()
					if err != nil {
						t.Errorf("ListTools: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()

	if t.Failed() {
		return
	}
	// Closing parked sessions ends them on the server.
	var closing sync.WaitGroup
	for ss := range server.Sessions() {
		closing.Go(func() {
			ss.Close()
			ss.Wait()
		})
	}
	closed := make(chan struct{})
	go func() {
		closing.Wait()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("closing idle sessions did not end them")
	}
	for _, cs := range sessions {
		cs.Close()
	}
}

// serverReaders counts the goroutines blocked reading a Streamable HTTP
// server session.
func serverReaders() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("(*streamableServerConn).Read")) {
			n++
		}
	}
	return n
}
