package residency

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

const sampleSmaps = `00400000-01fa0000 r-xp 00000000 fe:00 123 /opt/agentd/bin/agentd
Size:              28288 kB
Rss:               17948 kB
Anonymous:             0 kB
01fa0000-04359000 r--p 01ba0000 fe:00 123 /opt/agentd/bin/agentd
Rss:               17184 kB
Anonymous:             0 kB
04359000-044c7000 rw-p 03f59000 fe:00 123 /opt/agentd/bin/agentd
Rss:                 888 kB
Anonymous:           272 kB
044c7000-0a000000 rw-p 00000000 00:00 0
Rss:                6284 kB
Anonymous:          6284 kB
7f0000000000-7f0000200000 r--p 00000000 fe:00 456 /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                 356 kB
Anonymous:             0 kB
7f1000000000-7f1000001000 r--p 00001000 fe:00 789 /opt/agentd/bin/agent d
Rss:                   4 kB
Anonymous:             0 kB
7f2000000000-7f2000010000 r--p 00002000 fe:00 123 /opt/agentd/bin/agentd
Rss:                  64 kB
Anonymous:             4 kB
7f3000000000-7f3000010000 r--p 00003000 fe:00 123 /opt/agentd/bin/agentd
Rss:                   0 kB
Anonymous:             0 kB
`

func TestReleasable(t *testing.T) {
	maps := parseSmaps([]byte(sampleSmaps))
	if len(maps) != 8 {
		t.Fatalf("parsed %d mappings, want 8: %+v", len(maps), maps)
	}
	if m := maps[5]; m.path != "/opt/agentd/bin/agent d" || m.rssKB != 4 {
		t.Errorf("path with a space: got %+v", m)
	}
	tests := []struct {
		name string
		exe  string
		want []uintptr // start addresses
	}{
		// Text and read-only data; not the writable data segment, not a
		// read-only mapping with a private (relocated) page, not one with
		// nothing resident, not other files.
		{"agentd", "/opt/agentd/bin/agentd", []uintptr{0x400000, 0x1fa0000}},
		{"other file", "/opt/agentd/bin/agent d", []uintptr{0x7f1000000000}},
		{"not mapped", "/nowhere", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := releasable(maps, tt.exe)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d mappings %+v, want starts %#x", len(got), got, tt.want)
			}
			for i, m := range got {
				if m.start != tt.want[i] {
					t.Errorf("mapping %d starts at %#x, want %#x", i, m.start, tt.want[i])
				}
			}
		})
	}
}

// TestReleaseExecutable releases this test binary's pages for real: the
// resident size of its read-only mappings drops, and the code keeps
// running (the pages come back from the file as they are used).
func TestReleaseExecutable(t *testing.T) {
	before := exeResidentKB(t)
	rel, err := ReleaseExecutable()
	if err != nil {
		t.Fatal(err)
	}
	after := exeResidentKB(t)
	if rel.Mappings == 0 || rel.Bytes == 0 {
		t.Fatalf("released nothing: %+v (resident before %d kB)", rel, before)
	}
	if after >= before {
		t.Errorf("read-only mappings of the executable: %d kB resident before, %d kB after", before, after)
	}
	t.Logf("released %d mappings, %d kB; resident %d kB -> %d kB", rel.Mappings, rel.Bytes>>10, before, after)
}

func exeResidentKB(t *testing.T) int64 {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var kb int64
	for _, m := range parseSmaps(b) {
		if m.path == exe && m.perms[1] != 'w' {
			kb += m.rssKB
		}
	}
	return kb
}

func TestReleaseAfter(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rel, err := ReleaseAfter(ctx, time.Hour); !errors.Is(err, context.Canceled) || rel != (Released{}) {
		t.Errorf("cancelled: got %+v, %v; want nothing released and context.Canceled", rel, err)
	}
	start := time.Now()
	rel, err := ReleaseAfter(context.Background(), 20*time.Millisecond)
	if err != nil || rel.Mappings == 0 {
		t.Fatalf("got %+v, %v; want the executable's mappings released", rel, err)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("released after %v, before the 20ms asked", waited)
	}
}
