//go:build linux && race

package reliability

// raceEnabled reports whether the race detector is on: its overhead
// changes timings, so the report says so.
const raceEnabled = true
