package sandbox

import (
	"os/exec"
	"testing"
)

// BenchmarkStart measures what confinement adds to starting a program:
// /bin/true run plainly, and through the trampoline with the shell's
// default policy (namespaces, Landlock, rlimits, a pids cgroup when one
// is writable).
func BenchmarkStart(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	m := Probe()
	if !m.UserNS || m.LandlockABI == 0 {
		b.Skip("no sandbox here")
	}
	ws := b.TempDir()
	p := Policy{Write: []string{ws}, Network: NetworkNone, MaxProcs: 256, MemoryBytes: 2 << 30, CPUSeconds: 300}
	for _, tc := range []struct {
		name string
		net  Network
	}{{"sandboxed-none", NetworkNone}, {"sandboxed-any", NetworkAny}} {
		b.Run(tc.name, func(b *testing.B) {
			p.Network = tc.net
			for b.Loop() {
				c, err := Command(b.Context(), m, p, "/bin/true", []string{"true"}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				if err := c.Wait(); err != nil {
					b.Fatal(err)
				}
				c.Done()
			}
		})
	}
}
