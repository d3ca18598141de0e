// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

// agentd patch (PATCH.md, change 5): an ioConn that reads in the caller's
// goroutine.

package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// newIOConnInline is newIOConnLimited without the read goroutine: the
// connection's one reader (jsonrpc2's read loop) decodes each message
// itself. newIOConnLimited hands every message from its goroutine to the
// reader over a channel, so that Close can unblock a Read of a stream
// that closing does not unblock (stdin); over a pipe, whose Close does,
// that costs each message a goroutine switch for nothing.
func newIOConnInline(rwc io.ReadWriteCloser, maxLineLength int) *ioConn {
	limit := maxLineLength
	if limit == 0 {
		limit = DefaultMaxLineLength
	}
	closing := &closingRWC{ReadWriteCloser: rwc, closing: make(chan struct{})}
	var (
		reader  io.Reader = rwc
		limiter *frameLimitReader
	)
	if limit > 0 {
		limiter = &frameLimitReader{r: rwc, limit: limit}
		reader = limiter
	}
	dec := json.NewDecoder(reader)
	// The same decoding and checks as newIOConnLimited's read loop.
	next := func() (json.RawMessage, error) {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			var tr [1]byte
			if n, readErr := dec.Buffered().Read(tr[:]); n > 0 {
				if tr[0] != '\n' && tr[0] != '\r' {
					err = fmt.Errorf("invalid trailing data at the end of stream")
				}
			} else if readErr != nil && readErr != io.EOF {
				err = readErr
			}
		}
		if err == nil && limiter != nil {
			limiter.resetFrame()
		}
		return raw, err
	}
	return &ioConn{rwc: closing, readNext: func() (json.RawMessage, error) {
		raw, err := next()
		if err != nil {
			select {
			case <-closing.closing:
				// Closed: io.EOF, as the goroutine's Read reports,
				// whatever the stream's Read returned on being closed.
				return nil, io.EOF
			default:
			}
		}
		return raw, err
	}, closed: make(chan struct{})}
}

// closingRWC marks itself closed before it closes the stream, so that the
// Read that Close unblocks knows why it ended.
type closingRWC struct {
	io.ReadWriteCloser
	once    sync.Once
	closing chan struct{}
}

func (c *closingRWC) Close() error {
	c.once.Do(func() { close(c.closing) })
	return c.ReadWriteCloser.Close()
}
