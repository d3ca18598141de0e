//go:build linux

package reliability

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"

	_ "modernc.org/sqlite" // the lock helper opens the daemon's database
)

// runLockDB is the helper process of TestFaultsStoreLocked: it takes
// SQLite's write lock on the database at args[0], says "locked", and
// holds the lock until its stdin closes.
func runLockDB(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: lock-db FILE")
		return 2
	}
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+args[0]+"?_pragma=busy_timeout(10000)")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		fmt.Fprintln(os.Stderr, "begin exclusive:", err)
		return 1
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_, _ = conn.ExecContext(ctx, "ROLLBACK")
	return 0
}

// storeFaultDaemon starts a daemon for the store faults, in home.
func storeFaultDaemon(t *testing.T, home string) (*inproc, *connProxy) {
	t.Helper()
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "stored"}))
	modelURL, proxy := proxyURL(t, model.URL)
	return startDaemon(t, daemonSpec{Home: home, Key: faultKey, TOML: faultConfig(modelURL, "")}), proxy
}

// TestFaultsStoreLocked has another process hold SQLite's write lock on
// the daemon's database: writes must fail with an error that says so
// once the busy timeout expires, reads and health must keep working, and
// everything must work again once the lock is gone.
func TestFaultsStoreLocked(t *testing.T) {
	track(t, areaFaults, false)
	p, proxy := storeFaultDaemon(t, "")
	send := func(msg string) (reply, time.Duration) {
		start := time.Now()
		r := p.call(t, "POST", "/api/agents/chat/messages", map[string]string{"message": msg})
		return r, time.Since(start)
	}
	if r, _ := send("before the lock"); r.Status != http.StatusOK {
		t.Fatalf("before the lock: %v", r)
	}
	base := baseline(p.dropConns, proxy.DropConns)

	locker := exec.Command(os.Args[0], modeLockDB, filepath.Join(p.Home, "agentd.db"))
	stdin, err := locker.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := locker.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	locker.Stderr = &stderr
	if err := locker.Start(); err != nil {
		t.Fatal(err)
	}
	release := func() {
		stdin.Close()
		_ = locker.Wait()
	}
	defer release()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("lock helper: %q %v %s", line, err, stderr.String())
	}

	r, took := send("while locked")
	var e apiError
	decodeJSON(t, r.Body, &e)
	if r.Status < 500 || !strings.Contains(e.Error.Message, "lock") {
		t.Fatalf("want a 5xx saying the database is locked, got %v", r)
	}
	if took < 4*time.Second {
		t.Errorf("failed after %s: the 5 s busy timeout was not waited", took)
	}
	fig(t, areaFaults, "SQLite locked by another process: caller sees", "HTTP %d `%s` after %s: %q", r.Status, e.Error.Code, took.Round(100*time.Millisecond), e.Error.Message)

	if h := p.call(t, "GET", "/api/health", nil); h.Status != http.StatusOK {
		t.Errorf("health while locked: %v", h)
	}
	if s := p.call(t, "GET", "/api/sessions", nil); s.Status != http.StatusOK || !strings.Contains(string(s.Body), "before the lock") {
		t.Errorf("reads while locked: %v", s)
	}
	fig(t, areaFaults, "SQLite locked: daemon", "stays up; /api/health 200 and reads (GET /api/sessions) 200 while locked")

	release()
	r, took = send("after the lock")
	if r.Status != http.StatusOK {
		t.Fatalf("after the lock was released: %v", r)
	}
	fig(t, areaFaults, "SQLite locked: after the lock is released", "HTTP %d in %s, no restart", r.Status, ms(took))
	after := settle(base, 3*time.Second, p.dropConns, proxy.DropConns)
	checkBaseline(t, "lock released", base, after)
}

// TestFaultsStoreDiskFull fills the file system under AGENTD_HOME (a tiny
// tmpfs when this process may mount one, else a file-size limit on this
// process): writes must fail with an error that says why, the daemon
// must stay up and serve reads, and writes must work again once space is
// freed.
func TestFaultsStoreDiskFull(t *testing.T) {
	track(t, areaFaults, false)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	method := "tmpfs of 8 MiB, filled"
	var fill func(t *testing.T)
	var free func()
	if err := syscall.Mount("tmpfs", home, "tmpfs", 0, "size=8m,mode=0700"); err == nil {
		t.Cleanup(func() { _ = syscall.Unmount(home, syscall.MNT_DETACH) })
		filler := filepath.Join(home, "filler")
		fill = func(t *testing.T) {
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			chunk := make([]byte, 64<<10)
			for {
				if _, err := f.Write(chunk); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Fatalf("fill: %v", err)
					}
					break
				}
			}
			// Single bytes, so that not even a page is left.
			for {
				if _, err := f.Write(chunk[:1]); err != nil {
					break
				}
			}
			f.Close()
		}
		free = func() { os.Remove(filler) }
	} else {
		method = fmt.Sprintf("RLIMIT_FSIZE on this process (mount refused: %v)", err)
		var old syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			skipf(t, "neither a tmpfs mount (%v) nor RLIMIT_FSIZE is available", err)
		}
		fill = func(t *testing.T) {
			// No file may grow past the database's present size: the WAL
			// fails as soon as it reaches that offset.
			fi, err := os.Stat(filepath.Join(home, "agentd.db"))
			if err != nil {
				t.Fatal(err)
			}
			lim := old
			lim.Cur = uint64(max(fi.Size(), 64<<10))
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
				t.Fatal(err)
			}
		}
		free = func() { _ = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) }
		t.Cleanup(free)
	}
	p, proxy := storeFaultDaemon(t, home)
	send := func(msg string) reply {
		return p.call(t, "POST", "/api/agents/chat/messages", map[string]string{"message": msg})
	}
	if r := send("before the disk filled"); r.Status != http.StatusOK {
		t.Fatalf("before: %v", r)
	}
	base := baseline(p.dropConns, proxy.DropConns)

	fill(t)
	var r reply
	var e apiError
	// SQLite may still have room in pages it already owns: write until
	// the store needs new space.
	for i := range 200 {
		r = send(fmt.Sprintf("while full %d %s", i, strings.Repeat("x", 4096)))
		if r.Status != http.StatusOK {
			break
		}
	}
	decodeJSON(t, r.Body, &e)
	low := strings.ToLower(e.Error.Message)
	if r.Status < 500 || !(strings.Contains(low, "full") || strings.Contains(low, "disk") || strings.Contains(low, "too large") || strings.Contains(low, "i/o")) {
		free()
		t.Fatalf("want a 5xx saying the disk is full, got %v", r)
	}
	fig(t, areaFaults, "Disk full under AGENTD_HOME: caller sees", "HTTP %d `%s` %q (%s)", r.Status, e.Error.Code, e.Error.Message, method)

	if h := p.call(t, "GET", "/api/health", nil); h.Status != http.StatusOK {
		t.Errorf("health while full: %v", h)
	}
	if s := p.call(t, "GET", "/api/sessions", nil); s.Status != http.StatusOK || !strings.Contains(string(s.Body), "before the disk filled") {
		t.Errorf("reads while full: %v", s)
	}
	fig(t, areaFaults, "Disk full: daemon", "stays up; /api/health 200 and reads 200 while full")

	free()
	if r := send("after space was freed"); r.Status != http.StatusOK {
		t.Fatalf("after freeing space: %v", r)
	}
	fig(t, areaFaults, "Disk full: after space is freed", "writes succeed again without a restart")
	after := settle(base, 3*time.Second, p.dropConns, proxy.DropConns)
	checkBaseline(t, "space freed", base, after)
}
