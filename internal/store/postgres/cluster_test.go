package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// fast are cluster timings short enough for tests: a replica is presumed
// dead 300 ms after its last heartbeat.
func fast(name string) postgres.ClusterOptions {
	return postgres.ClusterOptions{Name: name, Heartbeat: 50 * time.Millisecond, Lease: 300 * time.Millisecond, Backoff: 20 * time.Millisecond}
}

// join opens a store on url and joins it as a replica; both end with t.
func join(t *testing.T, url string, opts postgres.ClusterOptions) (*postgres.DB, *postgres.Cluster) {
	t.Helper()
	db := open(t, url)
	c, err := db.Join(t.Context(), opts)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return db, c
}

// inbox records what one replica hears on some topics.
type inbox struct {
	mu   sync.Mutex
	got  []string // "topic from body"
	wake chan struct{}
}

func listenTo(c *postgres.Cluster, topics ...string) *inbox {
	in := &inbox{wake: make(chan struct{}, 1)}
	for _, topic := range topics {
		c.Subscribe(topic, func(from string, body []byte) {
			in.mu.Lock()
			in.got = append(in.got, topic+" "+from+" "+string(body))
			in.mu.Unlock()
			select {
			case in.wake <- struct{}{}:
			default:
			}
		})
	}
	return in
}

// wait returns once want has been heard, failing t after 10 s.
func (in *inbox) wait(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		in.mu.Lock()
		for _, g := range in.got {
			if g == want {
				in.mu.Unlock()
				return
			}
		}
		got := strings.Join(in.got, " | ")
		in.mu.Unlock()
		select {
		case <-in.wake:
		case <-deadline:
			t.Fatalf("never heard %q; heard: %s", want, got)
		}
	}
}

func (in *inbox) all() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.got...)
}

// TestReplicaLeases kills one of two replicas (its heartbeat stops, its
// row stays, as after kill -9): the other must fail the killed one's
// running task and interrupted turn with a reason naming it, within the
// lease and a few heartbeats, and leave its own running task alone.
func TestReplicaLeases(t *testing.T) {
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	dbA, a := join(t, url, fast("a"))
	dbB, b := join(t, url, fast("b"))
	_, watcher := join(t, url, fast("watcher"))
	ended := listenTo(watcher, postgres.TopicTaskEnd)

	type failedTurn struct{ session, reason string }
	turns := make(chan failedTurn, 4)
	var reasons sync.Map
	failedTasks := make(chan []store.Task, 4)
	b.SetTaskReaper(func(tk store.Task, reason string) (json.RawMessage, string) {
		reasons.Store(tk.ID, reason)
		return json.RawMessage(fmt.Sprintf(`{"failed":%q}`, reason)), "failed"
	}, func(_ context.Context, ts []store.Task) { failedTasks <- ts })
	b.SetTurnReaper(func(ctx context.Context, session, reason string) error {
		// The reaper holds the turn while it records the failure.
		if ok, err := a.TryLockTurn(ctx, session); ok || err != nil {
			t.Errorf("TryLockTurn during the reaper = %v, %v; want busy", ok, err)
		}
		turns <- failedTurn{session, reason}
		return nil
	})

	ctx := t.Context()
	if _, err := dbA.CreateTask(ctx, store.Task{ID: "on-a", Agent: "x", State: "working", Data: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := dbB.CreateTask(ctx, store.Task{ID: "on-b", Agent: "x", State: "working", Data: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.TryLockTurn(ctx, "conversation"); !ok || err != nil {
		t.Fatalf("TryLockTurn on a = %v, %v", ok, err)
	}
	if ok, _ := b.TryLockTurn(ctx, "conversation"); ok {
		t.Fatal("b claimed a session a is running a turn of")
	}

	killed := time.Now()
	a.Crash()
	var ft failedTurn
	select {
	case ft = <-turns:
	case <-time.After(10 * time.Second):
		t.Fatal("the dead replica's turn was never failed")
	}
	if ft.session != "conversation" || !strings.Contains(ft.reason, a.ID()) || !strings.Contains(ft.reason, "no heartbeat") {
		t.Errorf("failed turn = %+v, want session conversation and a reason naming %s", ft, a.ID())
	}
	var ts []store.Task
	select {
	case ts = <-failedTasks:
	case <-time.After(10 * time.Second):
		t.Fatal("the dead replica's task was never failed")
	}
	t.Logf("dead replica's work failed %v after the kill", time.Since(killed).Round(time.Millisecond))
	if len(ts) != 1 || ts[0].ID != "on-a" || ts[0].State != "failed" || !ts[0].Terminal {
		t.Fatalf("tasks failed = %+v, want on-a only", ts)
	}
	got, err := dbB.GetTask(ctx, "on-a")
	if err != nil || got.State != "failed" || !got.Terminal || !strings.Contains(string(got.Data), a.ID()) {
		t.Errorf("stored on-a = %+v, %v; want failed with the reason", got, err)
	}
	ended.wait(t, postgres.TopicTaskEnd+" "+b.ID()+" on-a")
	if got, _ := dbB.GetTask(ctx, "on-b"); got.Terminal {
		t.Errorf("the live replica's task was failed: %+v", got)
	}
	// The turn is free again once the reaper has returned: it releases
	// the turn after the hook above, which the test may outrun.
	for deadline := time.Now().Add(5 * time.Second); ; {
		ok, err := b.TryLockTurn(ctx, "conversation")
		if ok && err == nil {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Errorf("TryLockTurn after the reaper = %v, %v", ok, err)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rs, err := b.Replicas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.ID == a.ID() {
			t.Errorf("dead replica still listed: %+v", rs)
		}
	}
	if len(rs) != 2 {
		t.Errorf("replicas = %+v, want b and watcher", rs)
	}
}

// TestReplicaLeavesGracefully: a replica that closes leaves the table at
// once, and what it left running is failed by the others at their next
// heartbeat, not a lease later.
func TestReplicaLeavesGracefully(t *testing.T) {
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	opts := fast("a")
	opts.Lease = time.Hour // only leaving can free its work in time
	dbA, a := join(t, url, opts)
	_, b := join(t, url, fast("b"))
	failed := make(chan string, 1)
	b.SetTaskReaper(func(tk store.Task, reason string) (json.RawMessage, string) {
		failed <- reason
		return json.RawMessage(`{}`), "failed"
	}, nil)
	if _, err := dbA.CreateTask(t.Context(), store.Task{ID: "t", Agent: "x", State: "working"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-failed:
		if !strings.Contains(r, a.ID()) {
			t.Errorf("reason %q does not name %s", r, a.ID())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the departed replica's task was never failed")
	}
}

// TestReplicaNotifications: what one replica publishes, and the changes
// its store commits, reach the others (not itself), in order, large
// bodies included.
func TestReplicaNotifications(t *testing.T) {
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	dbA, a := join(t, url, fast("a"))
	_, b := join(t, url, fast("b"))
	atA := listenTo(a, "greeting", postgres.TopicAgent)
	atB := listenTo(b, "greeting", postgres.TopicAgent, postgres.TopicMCPServer, postgres.TopicPush, postgres.TopicTaskEnd)
	ctx := t.Context()

	for i := range 20 {
		if err := a.Publish(ctx, "greeting", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	big := strings.Repeat("é", 10000) // 20,000 bytes: more than NOTIFY carries
	if err := a.Publish(ctx, "greeting", big); err != nil {
		t.Fatal(err)
	}
	atB.wait(t, "greeting "+a.ID()+" "+big)
	var order []string
	for _, g := range atB.all() {
		if strings.HasPrefix(g, "greeting ") && len(g) < 100 {
			order = append(order, strings.TrimPrefix(g, "greeting "+a.ID()+" "))
		}
	}
	if want := fmt.Sprint([]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19"}); fmt.Sprint(order) != want {
		t.Errorf("order = %v, want %v", order, want)
	}

	if err := dbA.PutAgent(ctx, store.Agent{Name: "helper", Manifest: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	atB.wait(t, postgres.TopicAgent+" "+a.ID()+" helper")
	if err := dbA.DeleteAgent(ctx, "helper"); err != nil {
		t.Fatal(err)
	}
	if err := dbA.PutMCPServer(ctx, store.MCPServer{Name: "fs", Config: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	atB.wait(t, postgres.TopicMCPServer+" "+a.ID()+" fs")
	if err := dbA.PutPushConfig(ctx, store.PushConfig{TaskID: "t1", ID: "c", Config: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	atB.wait(t, postgres.TopicPush+" "+a.ID()+" t1")
	if _, err := dbA.CreateTask(ctx, store.Task{ID: "t1", State: "working"}); err != nil {
		t.Fatal(err)
	}
	if _, err := dbA.UpdateTask(ctx, store.Task{ID: "t1", State: "completed", Terminal: true}, 1); err != nil {
		t.Fatal(err)
	}
	atB.wait(t, postgres.TopicTaskEnd+" "+a.ID()+" t1")
	// A failed write announces nothing that did not happen.
	if err := dbA.PutAgent(ctx, store.Agent{Name: "bad\x00name"}); err == nil {
		t.Fatal("PutAgent of a name with NUL succeeded")
	}
	for _, g := range atA.all() {
		t.Errorf("a heard its own notification: %q", g)
	}
}

// TestReplicaResync cuts a replica's notification connection: it
// reconnects, tells its OnResync functions (notifications may have been
// lost), and hears notifications again.
func TestReplicaResync(t *testing.T) {
	url := pgtest.Schema(t, pgtest.Database(t, os.LookupEnv))
	_, a := join(t, url, fast("a"))
	_, b := join(t, url, fast("b"))
	atB := listenTo(b, "ping")
	resynced := make(chan struct{}, 1)
	b.OnResync(func() {
		select {
		case resynced <- struct{}{}:
		default:
		}
	})
	conn := raw(t, url)
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, postgres.ListenerApplicationName).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("terminated %d listener connections, want 2", n)
	}
	select {
	case <-resynced:
	case <-time.After(10 * time.Second):
		t.Fatal("no resync after the connection was cut")
	}
	if err := a.Publish(t.Context(), "ping", "after"); err != nil {
		t.Fatal(err)
	}
	atB.wait(t, "ping "+a.ID()+" after")
}
