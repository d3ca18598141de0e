package agent

// runStackReserve is how much goroutine stack a turn is given up front.
// A turn runs on a fresh goroutine (each edge starts one per request),
// whose stack starts at a few KiB and then doubles, copied whole each
// time, as the model call goes down the vendor SDK's reflective request
// encoder and the HTTP client: in a profile of A2A sends, copying stacks
// was 4% of the daemon's CPU. One growth at the top of the turn, where
// the stack is still shallow, is one small copy instead of several deep
// ones.
const runStackReserve = 64 << 10

// growStack makes the calling goroutine's stack able to hold about
// runStackReserve more bytes, so that the turn below does not grow it
// step by step. On a goroutine whose stack is already that large it costs
// clearing the frame.
//
//go:noinline
func growStack() {
	var frame [runStackReserve]byte
	keep(frame[:])
}

// keep stops the compiler from dropping growStack's frame.
//
//go:noinline
func keep([]byte) {}
