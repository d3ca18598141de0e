//go:build linux

package reliability

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// packageTest is a fault or durability test of one package that this
// package refers to instead of repeating it.
type packageTest struct {
	area       int
	fault      string
	file, test string
}

var packageTests = []packageTest{
	{areaFaults, "MCP upstream killed mid-call: the call fails at once, the server reconnects", "internal/mcpclient/fault_test.go", "TestCrashMidCallFailsAtOnceAndReconnects"},
	{areaFaults, "MCP upstream hanging: the call times out, the session survives", "internal/mcpclient/fault_test.go", "TestHangTimesOutAndSessionSurvives"},
	{areaFaults, "MCP upstream writing garbage on stdout", "internal/mcpclient/fault_test.go", "TestGarbageOnStdoutIsSkipped"},
	{areaFaults, "MCP upstream sending a corrupt message", "internal/mcpclient/fault_test.go", "TestCorruptMessageBreaksSessionAtOnce"},
	{areaFaults, "MCP upstream answering 20 MB", "internal/mcpclient/fault_test.go", "TestOversizedResultFailsOnlyThatCall"},
	{areaFaults, "MCP upstream dripping bytes", "internal/mcpclient/fault_test.go", "TestSlowDrip"},
	{areaFaults, "MCP upstream removed with a call in flight", "internal/mcpclient/fault_test.go", "TestRemoveFailsInflightCall"},
	{areaFaults, "one broken MCP upstream among good ones", "internal/mcpclient/fault_test.go", "TestOneBadServerBlocksNoOther"},
	{areaFaults, "MCP upstream failing at start-up, explained without secrets", "internal/mcpclient/fault_test.go", "TestStartupFailureIsExplainedWithoutSecrets"},
	{areaFaults, "MCP upstream dropping every session mid-call: a call made as an MCP task follows its task on the new session and returns the result", "internal/mcpclient/tasks_interop_test.go", "TestTasksUpstreamCallSurvivesReconnect"},
	{areaFaults, "MCP client dropping its stream cancels the run", "internal/mcpserver/http_test.go", "TestDroppedStreamCancelsRun"},
	{areaFaults, "every vendor adapter: retries, errors, malformed streams", "internal/llm/llmtest/suite.go", "RunProviderSuite"},
	{areaFaults, "rate limit (GCRA) and body limit", "internal/httpapi/middleware_test.go", "TestRateLimitGCRA"},
	{areaCrash, "SQLite store: kill -9 of a writing process", "internal/store/sqlite/crash_test.go", "TestCrashDurability"},
	{areaCrash, "A2A tasks: kill -9 of the binary (small scale)", "internal/daemon/a2a_test.go", "TestA2AKill9"},
	{areaCrash, "A2A task store restart", "internal/a2aedge/taskstore_test.go", "TestTaskStoreRestart"},
	{areaSSRF, "netguard: DNS rebinding", "internal/netguard/netguard_test.go", "TestDNSRebinding"},
	{areaSSRF, "netguard: redirects re-checked", "internal/netguard/netguard_test.go", "TestClientRedirects"},
	{areaSSRF, "push webhooks guarded (unit)", "internal/a2aedge/push_test.go", "TestPushSSRFGuard"},
	{areaSubprocess, "MCP client: environment cleared (unit)", "internal/mcpclient/fault_test.go", "TestEnvironmentIsCleared"},
	{areaSubprocess, "MCP client: no orphans on close, remove, reconnect (unit)", "internal/mcpclient/fault_test.go", "TestNoOrphansOnCloseRemoveAndReconnect"},
	{areaAuth, "bearer auth middleware (unit)", "internal/httpapi/middleware_test.go", "TestAuth"},
	{areaCluster, "PostgreSQL stopped 10 s under a run in flight: COMPLETED within the bound, FAILED after it, no turn left claimed, no connection details", "internal/daemon/outage_test.go", "TestStoreOutage"},
	{areaCluster, "SIGHUP survived; SIGTERM drains, then fails the runs left as replica shutting down", "internal/daemon/drain_test.go", "TestDrainOnSIGTERM"},
	{areaCluster, "SIGHUP reloads: an agent, provider, MCP server and principal added without dropping an open MCP session; a broken file changes nothing", "internal/daemon/reload_test.go", "TestReloadOnSIGHUP"},
	{areaCluster, "driver errors of an absent database: store unavailable, safe to retry only if unsent, no connection details", "internal/store/postgres/errors_test.go", "TestUnavailableErrors"},
	{areaCluster, "retry bound shared by an outage's writes; unknown outcomes retried only when idempotent", "internal/store/storeretry/storeretry_test.go", "TestBoundIsShared"},
}

// TestPackageTestsReferenced checks that every per-package test the
// report refers to still exists where it says, and lists them.
func TestPackageTestsReferenced(t *testing.T) {
	track(t, areaFaults, false)
	root := repoRoot(t)
	rows := map[int][][]string{}
	for _, pt := range packageTests {
		data, err := os.ReadFile(filepath.Join(root, pt.file))
		if err != nil {
			t.Errorf("referenced file %s: %v", pt.file, err)
			continue
		}
		if !regexp.MustCompile(`(?m)^func ` + pt.test + `\(`).Match(data) {
			t.Errorf("%s no longer has func %s: update packageTests", pt.file, pt.test)
			continue
		}
		rows[pt.area] = append(rows[pt.area], []string{pt.fault, "`" + pt.file + "`", "`" + pt.test + "`"})
	}
	for area, r := range rows {
		addTable(area, "Tested in their packages (referenced, not repeated)", []string{"fault", "file", "test"}, r)
	}
	fig(t, areaFaults, "Per-package tests referenced", "%d, all present", len(packageTests))
}
