// Package residency gives back to the kernel the memory a process touched
// only while it started.
//
// Nearly two thirds of an idle agentd's resident set were pages of its own
// executable: the package initialisers of ~340 linked packages (vendor LLM
// SDKs, gRPC, OpenTelemetry, SQLite...) run code and read tables spread over
// the whole text and read-only data, and the kernel maps file pages in large
// folios, so a few bytes read fault in tens of kilobytes. Those pages are
// clean copies of the file: dropping the process's mappings of them loses
// nothing, and a page needed again is mapped back from the page cache by a
// minor fault (or read back from the file if the kernel has reclaimed it,
// as it may anyway under memory pressure).
package residency

import (
	"context"
	"time"
)

// Released says what ReleaseExecutable dropped.
type Released struct {
	// Mappings is how many read-only mappings of the executable were
	// released; Bytes their resident size before.
	Mappings int
	Bytes    int64
}

// ReleaseAfter waits d, then calls ReleaseExecutable; if ctx ends first it
// releases nothing and returns ctx's error.
func ReleaseAfter(ctx context.Context, d time.Duration) (Released, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return Released{}, ctx.Err()
	case <-t.C:
	}
	return ReleaseExecutable()
}
