package mcpclient

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
)

// TestInflightRelays checks the relay goroutine of a call made for a
// caller: what the server asks runs under the call's context, what still
// runs when the call ends is cancelled and waited for, and what comes
// after is refused.
func TestInflightRelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		callCtx := context.WithValue(context.Background(), callCtxKey{}, "call-ctx")
		in := &inflight{caller: &Caller{}}
		stop := in.startRelays(callCtx)

		var got any
		if err := in.underCall(context.Background(), func(ctx context.Context) { got = ctx.Value(callCtxKey{}) }); err != nil || got != "call-ctx" {
			t.Fatalf("underCall: %v, ran with the value %v, want the call's", err, got)
		}

		started := make(chan struct{})
		ended := false
		errc := make(chan error, 1)
		go func() {
			errc <- in.underCall(context.Background(), func(ctx context.Context) {
				close(started)
				<-ctx.Done()
				ended = true
			})
		}()
		<-started
		stop()
		if !ended {
			t.Fatal("stop returned before the relay still running had ended")
		}
		if err := <-errc; err != nil {
			t.Fatalf("the relay cancelled by the call's end: %v", err)
		}

		if err := in.underCall(context.Background(), func(context.Context) { t.Error("ran after the call ended") }); !errors.Is(err, errCallOver) {
			t.Fatalf("after the call: %v, want errCallOver", err)
		}

		// A request of the server that is over before it reaches the
		// call is not run.
		in2 := &inflight{caller: &Caller{}}
		stop2 := in2.startRelays(callCtx)
		defer stop2()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := in2.underCall(ctx, func(context.Context) { t.Error("ran for a request already over") }); !errors.Is(err, context.Canceled) {
			t.Fatalf("a request already over: %v, want context.Canceled", err)
		}
	})
}

// TestInflightRelaysIdle: a call for a caller that the server asks
// nothing starts no goroutine (the common case on a gateway).
func TestInflightRelaysIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := runtime.NumGoroutine()
		in := &inflight{caller: &Caller{}}
		stop := in.startRelays(context.Background())
		synctest.Wait()
		if n := runtime.NumGoroutine(); n != before {
			t.Errorf("%d goroutines during a call that relays nothing, %d before", n, before)
		}
		stop()
	})
}
