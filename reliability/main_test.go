//go:build linux

package reliability

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

var (
	reportPath = flag.String("report", "", "write the figures of this run as markdown to `file` (docs/reliability.md)")
	soakFlag   = flag.Bool("soak", false, "also run the long tests (scripts/soak.sh, make soak)")
)

// Helper modes: the test binary re-executed with one of these as its
// first argument is a fixture process, not a test run.
const (
	// modeStdioMCP serves a small MCP server on stdio (subprocess hygiene).
	modeStdioMCP = "reliability-stdio-mcp"
	// modeLockDB holds an exclusive lock on an SQLite file until its
	// stdin closes (fault injection: the store locked by another process).
	modeLockDB = "reliability-lock-db"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case modeStdioMCP:
			os.Exit(runStdioMCP(os.Args[2:]))
		case modeLockDB:
			os.Exit(runLockDB(os.Args[2:]))
		case modeSleep:
			os.Exit(runSleep())
		}
	}
	flag.Parse()
	code := m.Run()
	cleanupBinary()
	if *reportPath != "" {
		if err := writeReport(*reportPath); err != nil {
			fmt.Fprintln(os.Stderr, "reliability: write report:", err)
			code = 1
		}
	}
	os.Exit(code)
}
