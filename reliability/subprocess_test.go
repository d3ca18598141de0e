//go:build linux

package reliability

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/proctree"
)

// fixtureServer is a [[mcp_servers]] entry running the stdio fixture.
func fixtureServer(name string, env []string) string {
	q := make([]string, len(env))
	for i, e := range env {
		q[i] = tomlQuote(e)
	}
	return fmt.Sprintf(`
[[mcp_servers]]
name = %q
env = [%s]
allowed_tools = ["*"]

[mcp_servers.transport]
type = "stdio"
command = %s
args = [%q]
`, name, strings.Join(q, ", "), tomlQuote(os.Args[0]), modeStdioMCP)
}

// unconfinedFixtureServer is fixtureServer outside the sandbox. The
// hygiene checks below follow the child's pids and process groups from
// the host, which a sandboxed child (PID 1 of its own PID namespace,
// killed with everything it started when it ends: internal/sandbox's
// tests) does not expose; they measure the group kill that unconfined
// servers ([mcp_servers.sandbox] mode = "off") still rely on.
func unconfinedFixtureServer(name string, env []string) string {
	return fixtureServer(name, env) + "\n[mcp_servers.sandbox]\nmode = \"off\"\n"
}

// toolText calls a tool through POST /api/tools/{name}/call and returns
// its text content, failing on an error result.
func (p *inproc) toolText(t testing.TB, name, args string) string {
	t.Helper()
	r := p.call(t, "POST", "/api/tools/"+name+"/call", args)
	var out struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	}
	decodeJSON(t, r.Body, &out)
	if r.Status != http.StatusOK || out.IsError {
		t.Fatalf("tool %s: %v", name, r)
	}
	return out.Content
}

// waitTool waits until the registry offers tool name.
func (p *inproc) waitTool(t testing.TB, name string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := p.call(t, "GET", "/api/tools", nil)
		if strings.Contains(string(r.Body), `"name": "`+name+`"`) || strings.Contains(string(r.Body), `"name":"`+name+`"`) {
			return
		}
		if time.Now().After(deadline) {
			servers := p.call(t, "GET", "/api/mcp/servers", nil)
			t.Fatalf("tool %s not offered after %s; servers: %s", name, timeout, servers.Body)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

var idsRE = regexp.MustCompile(`(\d+) (\d+) (\d+)`)

// fixtureIDs returns the pid and pgid the fixture server reports.
func (p *inproc) fixtureIDs(t testing.TB, server string) (pid, pgid int) {
	t.Helper()
	m := idsRE.FindStringSubmatch(p.toolText(t, "mcp_"+server+"_ids", "{}"))
	if m == nil {
		t.Fatalf("ids of %s: no ids", server)
	}
	pid, _ = strconv.Atoi(m[1])
	pgid, _ = strconv.Atoi(m[2])
	return pid, pgid
}

// spawnGrandchild has the fixture start a grandchild in its group.
func (p *inproc) spawnGrandchild(t testing.TB, server string) int {
	t.Helper()
	m := regexp.MustCompile(`\d+`).FindString(p.toolText(t, "mcp_"+server+"_spawn", "{}"))
	pid, _ := strconv.Atoi(m)
	if pid == 0 {
		t.Fatal("spawn returned no pid")
	}
	return pid
}

// waitGroupGone waits until process group pgid has no live member.
func waitGroupGone(pgid int, timeout time.Duration) ([]proctree.Proc, time.Duration) {
	start := time.Now()
	for {
		left := proctree.Group(pgid)
		if len(left) == 0 || time.Since(start) > timeout {
			return left, time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSubprocessHygiene runs the stdio fixture as an MCP server of an
// in-process daemon and checks, through the daemon's own tool API, what
// the child sees and what is left of it after a crash and reconnect,
// after removal and after shutdown.
func TestSubprocessHygiene(t *testing.T) {
	track(t, areaSubprocess, false)
	before := baseline()
	// The daemon's environment: secrets and noise the child must not see.
	env := map[string]string{
		"TMPDIR":                os.TempDir(),
		"FIXTURE_ALLOWED":       "passed-through",
		"FIXTURE_NOT_LISTED":    "must-not-pass",
		"OPENAI_API_KEY":        "sk-daemon-only-secret",
		"AWS_SECRET_ACCESS_KEY": "aws-daemon-only-secret",
		"AGENTD_HOME":           "/should/not/leak",
		"LD_PRELOAD":            "/should/not/leak.so",
	}
	p := startDaemon(t, daemonSpec{Key: faultKey, Env: env, TOML: fmt.Sprintf(`api_key = %q
[limits]
rate_per_sec = 100000
burst = 100000
`, faultKey) + unconfinedFixtureServer("fx", []string{"FIXTURE_ALLOWED", "UNSET_BUT_LISTED"})})
	p.waitTool(t, "mcp_fx_env", 20*time.Second)

	t.Run("environment", func(t *testing.T) {
		var keys []string
		got := map[string]string{}
		for line := range strings.SplitSeq(p.toolText(t, "mcp_fx_env", "{}"), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if !ok || strings.ContainsAny(k, " <>") || k == "" {
				continue // the untrusted-data wrapper
			}
			keys = append(keys, k)
			got[k] = v
		}
		slices.Sort(keys)
		want := []string{"FIXTURE_ALLOWED", "HOME", "PATH", "TMPDIR"}
		if !slices.Equal(keys, want) {
			t.Errorf("the child's environment has %v, want exactly %v", keys, want)
		}
		if got["FIXTURE_ALLOWED"] != "passed-through" || got["HOME"] != p.Home || got["PATH"] != os.Getenv("PATH") {
			t.Errorf("values: %v (HOME should be AGENTD_HOME %s)", got, p.Home)
		}
		fig(t, areaSubprocess, "Environment of an MCP stdio child", "exactly %s (of %d variables in the daemon's environment; HOME = AGENTD_HOME)", strings.Join(keys, ", "), len(env)+2)
	})

	var pgid int
	t.Run("own process group", func(t *testing.T) {
		var pid int
		pid, pgid = p.fixtureIDs(t, "fx")
		self := syscall.Getpgrp()
		if pgid != pid || pgid == self {
			t.Errorf("child pid %d pgid %d, test pgid %d: want a group of its own", pid, pgid, self)
		}
		fig(t, areaSubprocess, "Process group of an MCP stdio child", "its own (pgid = its pid), not the daemon's")
	})

	t.Run("crash and reconnect", func(t *testing.T) {
		old := pgid
		grand := p.spawnGrandchild(t, "fx")
		if st, err := proctree.Stat(grand); err != nil || st.Pgid != old {
			t.Fatalf("grandchild %d not in the child's group %d: %v (%v)", grand, old, st, err)
		}
		start := time.Now()
		// The call fails (the server dies under it); that is the fault.
		_ = p.call(t, "POST", "/api/tools/mcp_fx_exit/call", "{}")
		left, took := waitGroupGone(old, 10*time.Second)
		if len(left) > 0 {
			t.Fatalf("after the crash, processes %v of the old group %d are still alive", left, old)
		}
		var pid int
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := p.call(t, "POST", "/api/tools/mcp_fx_ids/call", "{}")
			if m := idsRE.FindStringSubmatch(string(r.Body)); m != nil && !strings.Contains(string(r.Body), `"is_error": true`) {
				pid, _ = strconv.Atoi(m[1])
				pgid, _ = strconv.Atoi(m[2])
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no reconnect after 20 s: %v", r)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if pgid == old || pid != pgid {
			t.Errorf("after the reconnect: pid %d pgid %d (old group %d)", pid, pgid, old)
		}
		fig(t, areaSubprocess, "Child crashed (with a grandchild)", "old group empty %s after the crash; reconnected with a new group in %s", took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	})

	t.Run("removal", func(t *testing.T) {
		body := fmt.Sprintf(`{"name":"rt","allowed_tools":["*"],"sandbox":{"mode":"off"},"transport":{"type":"stdio","command":%s,"args":[%q]}}`, tomlQuote(os.Args[0]), modeStdioMCP)
		if r := p.call(t, "POST", "/api/mcp/servers", body); r.Status != http.StatusCreated {
			t.Fatalf("add server: %v", r)
		}
		p.waitTool(t, "mcp_rt_spawn", 20*time.Second)
		_, g := p.fixtureIDs(t, "rt")
		p.spawnGrandchild(t, "rt")
		if r := p.call(t, "DELETE", "/api/mcp/servers/rt", nil); r.Status != http.StatusNoContent {
			t.Fatalf("remove server: %v", r)
		}
		left, took := waitGroupGone(g, 10*time.Second)
		if len(left) > 0 {
			t.Fatalf("after removal, processes %v of group %d are still alive", left, g)
		}
		fig(t, areaSubprocess, "Server removed (DELETE /api/mcp/servers/{name})", "child and grandchild gone %s after the reply", took.Round(time.Millisecond))
	})

	t.Run("shutdown", func(t *testing.T) {
		p.spawnGrandchild(t, "fx")
		if n := len(proctree.Descendants(os.Getpid())); n < 2 {
			t.Fatalf("expected the child and its grandchild to run, found %d descendants", n)
		}
		start := time.Now()
		p.Close()
		left, _ := waitGroupGone(pgid, 10*time.Second)
		took := time.Since(start)
		if len(left) > 0 {
			t.Fatalf("after daemon.Close, processes %v of group %d are still alive", left, pgid)
		}
		if d := proctree.Descendants(os.Getpid()); len(d) > 0 {
			t.Fatalf("after daemon.Close, descendants remain: %+v", d)
		}
		fig(t, areaSubprocess, "Daemon shut down (daemon.Close)", "every child process group gone %s after Close began; no descendant left", took.Round(time.Millisecond))
	})

	after := settle(before, 5*time.Second)
	checkBaseline(t, "daemon closed", before, after)
}
