// agentd patch tests: see third_party/a2a-go/PATCH.md (change 1).

package sse

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a ResponseWriter whose writes fail once failing is set.
type recorder struct {
	*httptest.ResponseRecorder
	mu      sync.Mutex
	failing bool
}

func (r *recorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing {
		return 0, errors.New("gone")
	}
	return r.ResponseRecorder.Write(b)
}

func (r *recorder) body() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Body.String()
}

var _ http.Flusher = (*recorder)(nil)

func TestKeepAliveTimerStopsAtClose(t *testing.T) {
	rec := &recorder{ResponseRecorder: httptest.NewRecorder()}
	w, err := NewWriter(rec)
	if err != nil {
		t.Fatal(err)
	}
	w.StartKeepAlive(t.Context(), time.Millisecond, func(err error) { t.Errorf("keep-alive failed: %v", err) })
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(rec.body(), ": keep-alive\n\n") < 3 {
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 keep-alives in 5s")
		}
		time.Sleep(time.Millisecond)
	}
	if err := w.WriteData(context.Background(), []byte("x")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	n := len(rec.body())
	time.Sleep(20 * time.Millisecond)
	if len(rec.body()) != n {
		t.Error("the writer wrote after Close")
	}
	if err := w.WriteData(context.Background(), []byte("y")); err == nil {
		t.Error("WriteData after Close succeeded")
	}
}

func TestKeepAliveFailureClosesWriter(t *testing.T) {
	rec := &recorder{ResponseRecorder: httptest.NewRecorder(), failing: true}
	w, err := NewWriter(rec)
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 2)
	w.StartKeepAlive(t.Context(), time.Millisecond, func(err error) { failed <- err })
	defer w.Close()
	select {
	case <-failed:
	case <-time.After(5 * time.Second):
		t.Fatal("a failing keep-alive was not reported")
	}
	time.Sleep(10 * time.Millisecond)
	if len(failed) != 0 {
		t.Error("keep-alives went on after one failed")
	}
	if err := w.WriteData(context.Background(), []byte("x")); err == nil {
		t.Error("WriteData after a failed keep-alive succeeded")
	}
}
