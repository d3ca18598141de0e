package residency

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ReleaseExecutable drops the process's mappings of the resident pages of
// its executable's read-only segments (text and read-only data), so they
// no longer count in its resident set until touched again. A mapping with
// any private (copied-on-write) page is left alone: its content may differ
// from the file's, for instance relocations a dynamic loader wrote before
// protecting it.
func ReleaseExecutable() (Released, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return Released{}, fmt.Errorf("release executable pages: %w", err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return Released{}, fmt.Errorf("release executable pages: %w", err)
	}
	var rel Released
	for _, m := range releasable(parseSmaps(smaps), exe) {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno != 0 {
			return rel, fmt.Errorf("release executable pages: madvise %#x-%#x: %w", m.start, m.end, errno)
		}
		rel.Mappings++
		rel.Bytes += m.rssKB << 10
	}
	return rel, nil
}

// releasable picks the mappings of exe that hold resident pages which are
// all clean copies of the file: read-only (not writable) and without a
// private page.
func releasable(maps []mapping, exe string) []mapping {
	var out []mapping
	for _, m := range maps {
		if m.path == exe && !strings.ContainsRune(m.perms, 'w') && m.anonKB == 0 && m.rssKB > 0 {
			out = append(out, m)
		}
	}
	return out
}

type mapping struct {
	start, end uintptr
	perms      string
	path       string
	rssKB      int64
	anonKB     int64
}

// parseSmaps reads the mappings of a /proc/PID/smaps text: a header line
// per mapping ("start-end perms offset dev inode path") followed by
// "Field: value kB" lines.
func parseSmaps(b []byte) []mapping {
	var (
		out []mapping
		cur = -1
	)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(f[0], "-"); ok && len(f) >= 5 {
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				m := mapping{start: uintptr(start), end: uintptr(end), perms: f[1]}
				if len(f) >= 6 {
					m.path = strings.Join(f[5:], " ")
				}
				out = append(out, m)
				cur = len(out) - 1
				continue
			}
		}
		if cur < 0 || len(f) < 2 {
			continue
		}
		switch f[0] {
		case "Rss:":
			out[cur].rssKB, _ = strconv.ParseInt(f[1], 10, 64)
		case "Anonymous:":
			out[cur].anonKB, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return out
}
