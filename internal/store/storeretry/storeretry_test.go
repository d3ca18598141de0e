package storeretry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// outage is an error as a backend returns it while the database is
// gone: store.ErrUnavailable, sent or not.
type outage struct{ notApplied bool }

func (o outage) Error() string     { return "append: " + store.ErrUnavailable.Error() }
func (o outage) Unwrap() error     { return store.ErrUnavailable }
func (o outage) SafeToRetry() bool { return o.notApplied }

// flaky fails with err until its clock reaches upAt. Set upAt, read
// calls, only while no Do runs.
type flaky struct {
	mu    sync.Mutex
	upAt  time.Time
	err   error
	calls int
}

func (f *flaky) call(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if time.Now().Before(f.upAt) {
		return f.err
	}
	return nil
}

func TestDo(t *testing.T) {
	notApplied := outage{notApplied: true}
	tests := []struct {
		name       string
		bound      time.Duration
		downFor    time.Duration
		err        error
		idempotent bool
		wantErr    error
		// wantTook is how long Do takes, on the fake clock: the outage,
		// or the bound, plus at most one wait.
		minTook, maxTook time.Duration
		wantCalls        func(n int) bool
	}{
		{name: "outage shorter than the bound: the write lands", bound: 60 * time.Second, downFor: 10 * time.Second, err: notApplied,
			minTook: 10 * time.Second, maxTook: 12 * time.Second, wantCalls: func(n int) bool { return n > 2 && n < 20 }},
		{name: "outage longer than the bound: fails at the bound", bound: 3 * time.Second, downFor: time.Hour, err: notApplied, wantErr: store.ErrUnavailable,
			minTook: 3 * time.Second, maxTook: 3 * time.Second, wantCalls: func(n int) bool { return n > 2 }},
		{name: "outcome unknown: not retried", bound: time.Minute, downFor: time.Hour, err: outage{}, wantErr: store.ErrUnavailable,
			maxTook: 0, wantCalls: func(n int) bool { return n == 1 }},
		{name: "outcome unknown, idempotent: retried", bound: time.Minute, downFor: 5 * time.Second, err: outage{}, idempotent: true,
			minTook: 5 * time.Second, maxTook: 7 * time.Second, wantCalls: func(n int) bool { return n > 1 }},
		{name: "other errors: not retried", bound: time.Minute, downFor: time.Hour, err: store.ErrConflict, wantErr: store.ErrConflict,
			wantCalls: func(n int) bool { return n == 1 }},
		{name: "no bound: no retry", bound: -1, downFor: time.Hour, err: notApplied, wantErr: store.ErrUnavailable,
			wantCalls: func(n int) bool { return n == 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := New(Options{Bound: tt.bound})
				f := &flaky{upAt: time.Now().Add(tt.downFor), err: tt.err}
				start := time.Now()
				err := r.Do(t.Context(), "op", tt.idempotent, f.call)
				took := time.Since(start)
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if took < tt.minTook || took > tt.maxTook {
					t.Errorf("took %v, want %v..%v", took, tt.minTook, tt.maxTook)
				}
				if !tt.wantCalls(f.calls) {
					t.Errorf("%d calls", f.calls)
				}
			})
		})
	}
}

// TestBoundIsShared checks that the bound runs from the outage's first
// failure for every write: a write that starts late in an outage waits
// only what is left of it, and after the bound writes fail at once until
// one succeeds.
func TestBoundIsShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Options{Bound: 10 * time.Second})
		f := &flaky{upAt: time.Now().Add(time.Hour), err: outage{notApplied: true}}
		first := make(chan error)
		go func() { first <- r.Do(t.Context(), "first", false, f.call) }()
		time.Sleep(7 * time.Second)
		start := time.Now()
		if err := r.Do(t.Context(), "late", false, f.call); !errors.Is(err, store.ErrUnavailable) {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("a write 7 s into the outage waited %v, want the 3 s left", took)
		}
		if err := <-first; !errors.Is(err, store.ErrUnavailable) {
			t.Fatal(err)
		}
		calls := f.calls
		start = time.Now()
		if err := r.Do(t.Context(), "after", false, f.call); !errors.Is(err, store.ErrUnavailable) || time.Since(start) != 0 || f.calls != calls+1 {
			t.Errorf("after the bound: %v after %v, %d calls; want one failed call at once", err, time.Since(start), f.calls-calls)
		}
		// The database returns: a success ends the outage, and the next
		// one gets a whole bound again.
		f.upAt = time.Now()
		if err := r.Do(t.Context(), "up", false, f.call); err != nil {
			t.Fatal(err)
		}
		f.upAt = time.Now().Add(4 * time.Second)
		start = time.Now()
		if err := r.Do(t.Context(), "again", false, f.call); err != nil || time.Since(start) < 4*time.Second {
			t.Errorf("second outage of 4 s: %v after %v", err, time.Since(start))
		}
	})
}

// TestStop checks that Stop ends the waits under way at once.
func TestStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Options{Bound: time.Minute})
		f := &flaky{upAt: time.Now().Add(time.Hour), err: outage{notApplied: true}}
		time.AfterFunc(2*time.Second, r.Stop)
		start := time.Now()
		if err := r.Do(t.Context(), "op", false, f.call); !errors.Is(err, store.ErrUnavailable) || time.Since(start) != 2*time.Second {
			t.Errorf("got %v after %v, want the outage error when Stop was called at 2 s", err, time.Since(start))
		}
		f.mu.Lock()
		calls := f.calls
		f.mu.Unlock()
		if err := r.Do(t.Context(), "op", false, f.call); !errors.Is(err, store.ErrUnavailable) || f.calls != calls+1 {
			t.Errorf("after Stop: %v, %d calls; want one failed call", err, f.calls-calls)
		}
	})
}

// TestDoStopsWithContext checks that a cancelled run stops waiting.
func TestDoStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Options{Bound: time.Minute})
		f := &flaky{upAt: time.Now().Add(time.Hour), err: outage{notApplied: true}}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(2*time.Second, cancel)
		start := time.Now()
		err := r.Do(ctx, "op", false, f.call)
		if !errors.Is(err, store.ErrUnavailable) || time.Since(start) != 2*time.Second {
			t.Errorf("got %v after %v, want the outage error when ctx ended at 2 s", err, time.Since(start))
		}
	})
}

// TestWrappers checks that the wrappers retry the writes of a run, keep
// SessionTaskWriter when the store has it, and retry an UpdateTask of
// unknown outcome only without a version check.
func TestWrappers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Options{Bound: time.Minute})
		fs := &fakeStore{failures: 3, err: outage{notApplied: true}}
		s := Sessions(fs, r)
		if _, err := s.AppendMessages(t.Context(), "s", nil); err != nil || fs.calls != 4 {
			t.Errorf("AppendMessages: %v after %d calls", err, fs.calls)
		}
		tw, ok := s.(store.SessionTaskWriter)
		if !ok {
			t.Fatal("the wrapper of a SessionTaskWriter is not one")
		}
		fs.calls, fs.failures = 0, 2
		if err := tw.CreateSessionWithTask(t.Context(), store.Session{}, nil, store.Task{}); err != nil || fs.calls != 3 {
			t.Errorf("CreateSessionWithTask: %v after %d calls", err, fs.calls)
		}
		if _, ok := Sessions(struct{ store.SessionStore }{fs}, r).(store.SessionTaskWriter); ok {
			t.Error("the wrapper of a plain SessionStore claims to be a SessionTaskWriter")
		}
		ts := Tasks(fs, r)
		for _, tc := range []struct {
			prev      int64
			wantCalls int
		}{{0, 3}, {5, 1}} {
			fs.calls, fs.failures, fs.err = 0, 2, outage{}
			_, err := ts.UpdateTask(t.Context(), store.Task{}, tc.prev)
			if fs.calls != tc.wantCalls {
				t.Errorf("UpdateTask(prev %d) of unknown outcome: %v after %d calls, want %d", tc.prev, err, fs.calls, tc.wantCalls)
			}
		}
	})
}

type fakeStore struct {
	store.SessionStore
	store.TaskStore
	failures, calls int
	err             error
}

func (f *fakeStore) try() error {
	f.calls++
	if f.calls <= f.failures {
		return fmt.Errorf("fake: %w", f.err)
	}
	return nil
}

func (f *fakeStore) AppendMessages(context.Context, string, []store.Message) ([]store.Message, error) {
	return nil, f.try()
}

func (f *fakeStore) CreateSessionWithTask(context.Context, store.Session, []store.Message, store.Task) error {
	return f.try()
}

func (f *fakeStore) AppendMessagesCreateTask(context.Context, string, []store.Message, store.Task) ([]store.Message, error) {
	return nil, f.try()
}

func (f *fakeStore) UpdateTask(context.Context, store.Task, int64) (int64, error) { return 1, f.try() }
