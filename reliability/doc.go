// Package reliability holds agentd's cross-cutting reliability tests: the
// ones that need the whole daemon (in process, or the real binary) rather
// than one package. Each test asserts what a caller sees and prints a
// figure; `go test ./reliability -args -report docs/reliability.md`
// regenerates the table of figures, and `-soak` (scripts/soak.sh, make
// soak) adds the long runs.
//
// The areas: fuzz-target inventory, daemon-level fault injection (model
// errors, A2A peers dropping streams, a locked or full disk) with resources
// back to baseline, kill -9 durability of the real binary, load with p99
// latency and flat memory, the authentication matrix over every route, the
// SSRF matrix over every outbound path, and the hygiene of MCP stdio
// children. Per-package fault tests are referenced, not repeated.
//
// The package has no non-test code: everything lives in _test.go files,
// built on Linux only (they read /proc and use process groups, prlimit
// and tmpfs mounts).
package reliability
