// Package mcpclientbench measures what internal/mcpclient adds to an MCP
// tool call: the round trip of server-everything's echo through a
// Manager's tool against a bare go-sdk client over stdio to the same
// server package, interleaved in one run so that the ratio is fair.
//
//	go test -run '^$' -bench . -benchtime 3000x ./bench/mcpclient/
//
// It needs the Node peers of interop/ (npm ci there); without them the
// benchmark skips, unless AGENTD_INTEROP=1, when it fails.
package mcpclientbench
