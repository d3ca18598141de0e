package sqlite_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/sqlite"
)

// crashChildEnv names the database the helper process writes to; it is
// only set in the environment of the process TestCrashDurability starts.
const crashChildEnv = "AGENTD_SQLITE_CRASH_CHILD_DB"

// TestCrashChild is not a test on its own: it is the process
// TestCrashDurability kills. It commits writes in a loop and reports each
// one on stdout only after its commit returned.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("helper process of TestCrashDurability")
	}
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Never closed: the process is meant to die with the database open.
	deadline := time.Now().Add(time.Minute) // the parent kills us long before
	for i := 1; time.Now().Before(deadline); i++ {
		if _, err := db.AppendMessages(ctx, "s", []store.Message{{Role: "user", Content: crashPayload(i)}}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if _, err := db.CreateTask(ctx, store.Task{ID: crashTaskID(i), State: "working", Data: crashPayload(i)}); err != nil {
			t.Fatalf("create task %d: %v", i, err)
		}
		if i > 1 {
			if _, err := db.UpdateTask(ctx, store.Task{ID: crashTaskID(i - 1), State: "completed", Terminal: true, Data: crashPayload(i - 1)}, 1); err != nil {
				t.Fatalf("update task %d: %v", i-1, err)
			}
		}
		fmt.Printf("committed %d\n", i)
	}
}

func crashPayload(i int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)) }
func crashTaskID(i int) string           { return fmt.Sprint("t", i) }

// TestCrashDurability kills a writer with SIGKILL in the middle of its work
// and checks that everything it had seen committed survived, and that the
// database is intact: the promise synchronous=NORMAL with WAL makes.
func TestCrashDurability(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	db := open(t, path)
	if err := db.CreateSession(ctx, store.Session{ID: "s", Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestCrashChild$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const killAfter = 60 // reported commits; enough for WAL traffic, few enough to be quick
	reported := 0
	killed := false
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		n, found := strings.CutPrefix(lines.Text(), "committed ")
		if !found {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil || i != reported+1 {
			t.Fatalf("child reported %q after %d", lines.Text(), reported)
		}
		reported = i
		if reported == killAfter && !killed {
			// SIGKILL on Unix: no deferred code, no Close, no checkpoint.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("kill child: %v", err)
			}
			killed = true
		}
		// Keep reading: lines the child wrote before dying are still in the
		// pipe, and they count as committed too.
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited (%v) after %d commits before it was killed; stderr:\n%s", err, reported, stderr.Bytes())
	}
	t.Logf("child killed after reporting %d commits", reported)

	raw := rawDB(t, path)
	var check string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	if check != "ok" {
		t.Errorf("integrity_check = %q, want ok", check)
	}
	raw.Close()

	db = open(t, path)
	defer db.Close()
	msgs, err := db.Messages(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	// The child may have committed one more write than it reported.
	if len(msgs) < reported || len(msgs) > reported+1 {
		t.Errorf("%d messages survived, child reported %d commits", len(msgs), reported)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) || string(m.Content) != string(crashPayload(i+1)) {
			t.Errorf("message %d = Seq %d %s, want Seq %d %s", i, m.Seq, m.Content, i+1, crashPayload(i+1))
		}
	}
	for i := 1; i <= reported; i++ {
		tk, err := db.GetTask(ctx, crashTaskID(i))
		if err != nil {
			t.Errorf("task %d, reported committed, is lost: %v", i, err)
			continue
		}
		if i < reported && (tk.State != "completed" || tk.Version != 2) {
			t.Errorf("task %d = %s version %d, want completed version 2", i, tk.State, tk.Version)
		}
	}
	_, total, err := db.ListTasks(ctx, store.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if total < reported || total > reported+1 {
		t.Errorf("%d tasks survived, child reported %d commits", total, reported)
	}
	// The store still works after recovery.
	if _, err := db.AppendMessages(ctx, "s", []store.Message{{Role: "user", Content: crashPayload(0)}}); err != nil {
		t.Errorf("append after recovery: %v", err)
	}
}
