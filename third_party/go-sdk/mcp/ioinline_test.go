// This test is agentd's: it checks agentd's patches to this copy of
// go-sdk (see PATCH.md, change 5).

package mcp

import (
	"context"
	"errors"
	"io"
	"os"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestIOConnInlineReadsAsTheGoroutineDoes: the same stream read by an
// inline ioConn and by the goroutine's gives the same messages and the
// same errors: single messages, a batch, a message too large, trailing
// data.
func TestIOConnInlineReadsAsTheGoroutineDoes(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		limit        int
	}{
		{"messages", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\r\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", 0},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n", 0},
		{"too large", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + string(make([]byte, 64)) + `"}}` + "\n", 40},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} x` + "\n", 0},
		{"not json", "hello\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func(c *ioConn) (msgs []jsonrpc.Message, errs []string) {
				ctx := context.Background()
				for range 5 {
					m, err := c.Read(ctx)
					if err != nil {
						return msgs, append(errs, err.Error())
					}
					msgs = append(msgs, m)
				}
				return msgs, errs
			}
			pipe := func() io.ReadWriteCloser {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					w.WriteString(tc.stream)
					w.Close()
				}()
				return rwc{r, nopWriteCloser{}}
			}
			goroutine, inline := newIOConnLimited(pipe(), tc.limit), newIOConnInline(pipe(), tc.limit)
			defer goroutine.Close()
			defer inline.Close()
			wantMsgs, wantErrs := read(goroutine)
			gotMsgs, gotErrs := read(inline)
			if !reflect.DeepEqual(gotMsgs, wantMsgs) || !reflect.DeepEqual(gotErrs, wantErrs) {
				t.Errorf("inline read %v, %q; the goroutine's %v, %q", gotMsgs, gotErrs, wantMsgs, wantErrs)
			}
		})
	}
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// TestIOConnInlineHasNoGoroutineAndCloses: an inline ioConn over a pipe
// starts no goroutine, and Close unblocks a Read in progress, which
// reports io.EOF as the goroutine's Read does.
func TestIOConnInlineHasNoGoroutineAndCloses(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	before := runtime.NumGoroutine()
	conn, err := (&IOTransport{Reader: r, Writer: w, ReadInline: true}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := runtime.NumGoroutine(); n != before {
		t.Errorf("%d goroutines after Connect, %d before", n, before)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the Read block in the pipe
	conn.Close()
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) {
			t.Errorf("Read after Close: %v, want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
}
