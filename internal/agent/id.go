package agent

import (
	"crypto/rand"
	"fmt"
)

// NewID returns a random RFC 4122 version 4 UUID, the id format A2A and
// ACP clients expect for sessions and tasks.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
