package a2aedge

import (
	"context"
	"sync"
)

// owner holds the work a Server runs beyond the request that started it
// (task runs, relayed calls, cancels asked by other replicas). It keeps a
// cancel func per piece of work rather than a shared base context: the
// context of each is made when it starts, from what it needs of the
// request, and handed to its goroutine; Close cancels them all and waits.
type owner struct {
	wg sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	next    uint64
	cancels map[uint64]context.CancelCauseFunc
}

// detach returns a context for work that must outlive base's request: it
// keeps base's values but not its deadline or cancellation, and ends when
// cancel is called or the owner closes. The caller calls cancel when the
// work ends, which also forgets it. After close the context is already
// cancelled, so work started late stops at once.
func (o *owner) detach(base context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(base))
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		cancel(nil)
		return ctx, func() {}
	}
	if o.cancels == nil {
		o.cancels = map[uint64]context.CancelCauseFunc{}
	}
	id := o.next
	o.next++
	o.cancels[id] = cancel
	return ctx, func() {
		cancel(nil)
		o.mu.Lock()
		delete(o.cancels, id)
		o.mu.Unlock()
	}
}

// goDetached runs f in a goroutine the owner waits for, with a context
// from detach(base) that is cancelled when f returns.
func (o *owner) goDetached(base context.Context, f func(ctx context.Context)) {
	ctx, cancel := o.detach(base)
	o.wg.Go(func() {
		defer cancel()
		f(ctx)
	})
}

// fail cancels all the work under way with cause (context.Cause), and
// leaves the owner open.
func (o *owner) fail(cause error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, cancel := range o.cancels {
		cancel(cause)
	}
}

// close cancels all the work and waits for its goroutines to return.
func (o *owner) close() {
	o.mu.Lock()
	o.closed = true
	cancels := o.cancels
	o.cancels = nil
	o.mu.Unlock()
	for _, cancel := range cancels {
		cancel(nil)
	}
	o.wg.Wait()
}
