// This test is agentd's: it checks agentd's patches to this copy of
// go-sdk (see PATCH.md).

package jsonrpc2

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"
)

// chanReader is a Reader fed by a channel, optionally a ParkingReader.
type chanReader struct {
	in     chan Message
	closed chan struct{}

	mu      sync.Mutex
	resume  func()
	parks   int
	closing bool
}

func newChanReader() *chanReader {
	return &chanReader{in: make(chan Message, 16), closed: make(chan struct{})}
}

func (r *chanReader) Read(ctx context.Context) (Message, error) {
	select {
	case m := <-r.in:
		return m, nil
	case <-r.closed:
		return nil, io.EOF
	}
}

func (r *chanReader) send(m Message) {
	r.in <- m
	r.wake()
}

func (r *chanReader) wake() {
	r.mu.Lock()
	f := r.resume
	r.resume = nil
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

func (r *chanReader) Close() error {
	r.mu.Lock()
	if !r.closing {
		r.closing = true
		close(r.closed)
	}
	r.mu.Unlock()
	r.wake()
	return nil
}

// parkingChanReader is chanReader as a ParkingReader.
type parkingChanReader struct{ *chanReader }

func (r parkingChanReader) ReadOrPark(ctx context.Context, resume func()) (Message, bool, error) {
	for {
		select {
		case m := <-r.in:
			return m, false, nil
		case <-r.closed:
			return nil, false, io.EOF
		default:
		}
		r.mu.Lock()
		if len(r.in) > 0 || r.closing {
			r.mu.Unlock()
			continue
		}
		r.resume = resume
		r.parks++
		r.mu.Unlock()
		return nil, true, nil
	}
}

type nopWriter struct{}

func (nopWriter) Write(context.Context, Message) error { return nil }

func newTestConn(t *testing.T, reader Reader, closer io.Closer, h HandlerFunc) *Connection {
	t.Helper()
	c := NewConnection(context.Background(), ConnectionConfig{
		Reader: reader, Writer: nopWriter{}, Closer: closer,
		Bind: func(*Connection) Handler { return h },
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestHandledRequestIsReleased: once handled, a request is garbage, though
// no other has come since (v1.8.0's handler queue kept the last one in its
// backing array).
func TestHandledRequestIsReleased(t *testing.T) {
	r := newChanReader()
	handled := make(chan struct{}, 1)
	newTestConn(t, r, r, func(ctx context.Context, req *Request) (any, error) {
		handled <- struct{}{}
		return nil, nil
	})
	req, err := NewNotification("note", map[string]string{"big": string(make([]byte, 1<<16))})
	if err != nil {
		t.Fatal(err)
	}
	w := weak.Make(req)
	r.send(req)
	req = nil
	<-handled
	for range 50 {
		runtime.GC()
		if w.Value() == nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the handled request is still reachable")
}

// TestParkingReader: with a ParkingReader the reading goroutine ends
// while nothing is waiting, every message still arrives in order, and
// closing a parked connection ends it.
func TestParkingReader(t *testing.T) {
	r := parkingChanReader{newChanReader()}
	var (
		mu  sync.Mutex
		got []int64
	)
	const n = 2000
	all := make(chan struct{})
	c := newTestConn(t, r, r, func(ctx context.Context, req *Request) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, req.ID.Raw().(int64))
		if len(got) == n {
			close(all)
		}
		return struct{}{}, nil
	})
	for i := range int64(n) {
		if i%100 == 0 {
			time.Sleep(time.Millisecond) // let the reader park now and then
		}
		call, _ := NewCall(Int64ID(i), "m", nil)
		r.send(call)
	}
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		mu.Lock()
		t.Fatalf("%d of %d requests handled", len(got), n)
	}
	for i, id := range got {
		if id != int64(i) {
			t.Fatalf("request %d handled as number %d", id, i)
		}
	}
	r.mu.Lock()
	parks := r.parks
	r.mu.Unlock()
	if parks == 0 {
		t.Fatal("the reader never parked")
	}
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing a parked connection did not end it")
	}
}
