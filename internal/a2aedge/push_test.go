package a2aedge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/sqlite"
)

// webhook records the notifications it receives; it fails the first
// failFirst requests with 503 to exercise retries.
type webhook struct {
	mu        sync.Mutex
	failFirst int
	seen      int
	events    []a2a.StreamResponse
	headers   []http.Header
	paths     []string
	got       chan struct{}
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen++
	if h.seen <= h.failFirst {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var ev a2a.StreamResponse
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	h.events = append(h.events, ev)
	h.headers = append(h.headers, r.Header.Clone())
	h.paths = append(h.paths, r.URL.Path)
	select {
	case h.got <- struct{}{}:
	default:
	}
}

func TestPushNotifications(t *testing.T) {
	f := newFixture(t, llmtest.Always(llmtest.Reply{Text: "pushed answer"}), fixtureOptions{})
	hook := &webhook{failFirst: 1, got: make(chan struct{}, 1)}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	cl := f.a2aClient("alpha")
	res, err := cl.SendMessage(context.Background(), &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: hs.URL + "/hook", Token: "tok-123",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred-456"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	deadline := time.After(10 * time.Second)
	for {
		hook.mu.Lock()
		var last a2a.Event
		if n := len(hook.events); n > 0 {
			last = hook.events[n-1].Event
		}
		hook.mu.Unlock()
		if su, ok := last.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State == a2a.TaskStateCompleted {
			break
		}
		select {
		case <-hook.got:
		case <-deadline:
			t.Fatalf("no completed notification; got %d events", len(hook.events))
		}
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if first, ok := hook.events[0].Event.(*a2a.Task); !ok || first.ID != task.ID {
		t.Fatalf("first notification %T, want the task (after a retried 503)", hook.events[0].Event)
	}
	h := hook.headers[0]
	if h.Get("X-A2A-Notification-Token") != "tok-123" || h.Get("Authorization") != "Bearer cred-456" {
		t.Fatalf("headers %v", h)
	}
	configs, err := cl.ListTaskPushConfigs(context.Background(), &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil || len(configs) != 1 || configs[0].URL != hs.URL+"/hook" {
		t.Fatalf("configs %+v %v", configs, err)
	}
}

func TestPushSSRFGuard(t *testing.T) {
	s := &pushConfigs{policy: &netguard.Policy{}, max: 10, byTask: map[a2a.TaskID][]*a2a.PushConfig{}}
	for _, u := range []string{"http://127.0.0.1:9/hook", "http://169.254.169.254/latest", "http://10.0.0.1/x", "file:///etc/passwd"} {
		if _, err := s.Save(context.Background(), "t", &a2a.PushConfig{URL: u}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("%s: accepted (%v)", u, err)
		}
	}
	if cfgs, _ := s.List(context.Background(), "t"); len(cfgs) != 0 {
		t.Fatalf("blocked configs stored: %+v", cfgs)
	}
	// Delivery is guarded too, in case a name resolves differently later.
	p := NewPusher(PusherOptions{Policy: &netguard.Policy{}, Attempts: 1})
	defer p.Close()
	retry, err := p.post(context.Background(), delivery{cfg: &a2a.PushConfig{URL: "http://127.0.0.1:9/hook"}, body: []byte("{}")})
	if !errors.Is(err, netguard.ErrBlocked) || retry {
		t.Fatalf("delivery to loopback: retry=%v err=%v", retry, err)
	}
}

func TestPushConfigStoreBounded(t *testing.T) {
	s := &pushConfigs{policy: &netguard.Policy{AllowPrivate: true}, max: 2, byTask: map[a2a.TaskID][]*a2a.PushConfig{}}
	ctx := context.Background()
	for _, id := range []a2a.TaskID{"a", "b", "c"} {
		if _, err := s.Save(ctx, id, &a2a.PushConfig{URL: "http://127.0.0.1:1/" + string(id)}); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := s.List(ctx, "a"); len(l) != 0 {
		t.Fatal("oldest task's configs kept beyond the bound")
	}
	saved, _ := s.List(ctx, "c")
	if len(saved) != 1 || saved[0].ID == "" || saved[0].TaskID != "c" {
		t.Fatalf("configs %+v", saved)
	}
	if err := s.Delete(ctx, "c", saved[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "c", saved[0].ID); err == nil {
		t.Fatal("deleted config still there")
	}
}

// waitUntil waits until done, called with h.mu held, reports true.
func (h *webhook) waitUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		h.mu.Lock()
		ok, n := done(), len(h.events)
		h.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-h.got:
		case <-deadline:
			t.Fatalf("webhook: %s did not arrive (%d events)", what, n)
		}
	}
}

// last returns the newest event that match accepts, with its headers and
// path; h.mu is held.
func (h *webhook) last(match func(a2a.Event) bool) (ev a2a.Event, hdr http.Header, path string, ok bool) {
	for i := len(h.events) - 1; i >= 0; i-- {
		if match(h.events[i].Event) {
			return h.events[i].Event, h.headers[i], h.paths[i], true
		}
	}
	return nil, nil, "", false
}

// terminal matches a status update to a terminal state.
func terminal(ev a2a.Event) bool {
	su, ok := ev.(*a2a.TaskStatusUpdateEvent)
	return ok && su.Status.State.Terminal()
}

// openDB opens the sqlite store at path, closed when t ends.
func openDB(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newStoredPusher is a Pusher over db that allows loopback webhooks,
// closed when t ends.
func newStoredPusher(t *testing.T, db PushConfigStore, maxTasks int) *Pusher {
	t.Helper()
	p := NewPusher(PusherOptions{Policy: &netguard.Policy{AllowPrivate: true}, Backoff: 10 * time.Millisecond,
		MaxTasks: maxTasks, Store: db})
	t.Cleanup(func() { p.Close() })
	return p
}

var _ PushConfigStore = (*sqlite.DB)(nil)

// TestPushConfigsSurviveRestart saves, replaces and deletes configs, then
// reads them back through a new Pusher over the same database file.
func TestPushConfigsSurviveRestart(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	c1 := &a2a.PushConfig{ID: "c1", URL: "http://127.0.0.1:1/one", Token: "tok-1",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred-1"}}
	c1b := &a2a.PushConfig{ID: "c1", URL: "http://127.0.0.1:1/one-b", Token: "tok-1b", Tenant: "acme"}
	var generated string
	t.Run("before", func(t *testing.T) {
		cs := newStoredPusher(t, openDB(t, path), 0).Configs()
		for _, c := range []struct {
			task a2a.TaskID
			cfg  *a2a.PushConfig
		}{
			{"t1", c1},
			{"t1", &a2a.PushConfig{ID: "c2", URL: "http://127.0.0.1:1/two"}},
			{"t1", &a2a.PushConfig{URL: "http://127.0.0.1:1/generated"}},
			{"t1", c1b}, // replaces c1 in place
			{"t2", &a2a.PushConfig{ID: "x", URL: "http://127.0.0.1:1/x"}},
			{"t3", &a2a.PushConfig{ID: "y", URL: "http://127.0.0.1:1/y"}},
		} {
			saved, err := cs.Save(ctx, c.task, c.cfg)
			if err != nil {
				t.Fatalf("Save(%s, %s): %v", c.task, c.cfg.URL, err)
			}
			if c.cfg.ID == "" {
				generated = saved.ID
			}
		}
		if err := cs.Delete(ctx, "t1", "c2"); err != nil {
			t.Fatal(err)
		}
		if err := cs.DeleteAll(ctx, "t3"); err != nil {
			t.Fatal(err)
		}
	})
	if generated == "" {
		t.Fatal("no generated config id")
	}
	cs := newStoredPusher(t, openDB(t, path), 0).Configs()
	want := []*a2a.PushConfig{
		{TaskID: "t1", ID: "c1", URL: c1b.URL, Token: c1b.Token, Tenant: "acme"},
		{TaskID: "t1", ID: generated, URL: "http://127.0.0.1:1/generated"},
	}
	got, err := cs.List(ctx, "t1")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("List(t1) after restart = %s, %v; want %s", jsonOf(t, got), err, jsonOf(t, want))
	}
	for _, c := range []struct {
		task a2a.TaskID
		id   string
		want *a2a.PushConfig
	}{
		{"t1", "c1", want[0]},
		{"t2", "x", &a2a.PushConfig{TaskID: "t2", ID: "x", URL: "http://127.0.0.1:1/x"}},
		{"t1", "c2", nil}, // deleted
		{"t3", "y", nil},  // deleted with its task's
		{"t2", "c1", nil}, // ids are per task
	} {
		got, err := cs.Get(ctx, c.task, c.id)
		switch {
		case c.want == nil && !errors.Is(err, push.ErrPushConfigNotFound):
			t.Errorf("Get(%s, %s) after restart = %s, %v; want ErrPushConfigNotFound", c.task, c.id, jsonOf(t, got), err)
		case c.want != nil && (err != nil || !reflect.DeepEqual(got, c.want)):
			t.Errorf("Get(%s, %s) after restart = %s, %v; want %s", c.task, c.id, jsonOf(t, got), err, jsonOf(t, c.want))
		}
	}
	if l, err := cs.List(ctx, "t3"); err != nil || len(l) != 0 {
		t.Errorf("List(t3) after DeleteAll and restart = %s, %v", jsonOf(t, l), err)
	}
}

// TestPushConfigsBoundPersisted checks that the per-task bound holds in the
// database too: evicted tasks' configs are deleted there, and a restart
// with a lower bound evicts the oldest.
func TestPushConfigsBoundPersisted(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	t.Run("before", func(t *testing.T) {
		cs := newStoredPusher(t, openDB(t, path), 2).Configs()
		for _, id := range []a2a.TaskID{"a", "b", "c"} {
			if _, err := cs.Save(ctx, id, &a2a.PushConfig{URL: "http://127.0.0.1:1/" + string(id)}); err != nil {
				t.Fatal(err)
			}
		}
	})
	db := openDB(t, path)
	if got := storedTasks(t, db); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("stored tasks after eviction = %q, want [b c]", got)
	}
	cs := newStoredPusher(t, db, 1).Configs()
	for id, want := range map[a2a.TaskID]int{"a": 0, "b": 0, "c": 1} {
		if l, err := cs.List(ctx, id); err != nil || len(l) != want {
			t.Errorf("List(%s) after a restart with MaxTasks 1 = %d configs, %v; want %d", id, len(l), err, want)
		}
	}
	if got := storedTasks(t, db); !slices.Equal(got, []string{"c"}) {
		t.Errorf("stored tasks after a restart with MaxTasks 1 = %q, want [c]", got)
	}
}

// storedTasks lists the tasks that have configs in db, in order.
func storedTasks(t *testing.T, db PushConfigStore) []string {
	t.Helper()
	all, err := db.AllPushConfigs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range all {
		if !slices.Contains(ids, c.TaskID) {
			ids = append(ids, c.TaskID)
		}
	}
	return ids
}

// TestPushDeliveryAfterRestart registers a webhook, restarts, and has the
// new Pusher deliver to it with the stored token and credentials.
func TestPushDeliveryAfterRestart(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	hook := &webhook{failFirst: 1, got: make(chan struct{}, 1)}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	t.Run("before", func(t *testing.T) {
		cs := newStoredPusher(t, openDB(t, path), 0).Configs()
		_, err := cs.Save(ctx, "t1", &a2a.PushConfig{URL: hs.URL + "/hook", Token: "tok-after",
			Auth: &a2a.PushAuthInfo{Scheme: "basic", Credentials: "dXNlcjpwdw=="}})
		if err != nil {
			t.Fatal(err)
		}
	})
	p := newStoredPusher(t, openDB(t, path), 0)
	task := &a2a.Task{ID: "t1", ContextID: "ctx"}
	failed := a2a.NewStatusUpdateEvent(task, a2a.TaskStateFailed, nil)
	if err := p.Notify(ctx, "t1", failed); err != nil {
		t.Fatal(err)
	}
	if err := p.Notify(ctx, "no-webhooks", failed); err != nil {
		t.Fatalf("Notify for a task without webhooks: %v", err)
	}
	var ev a2a.Event
	var h http.Header
	hook.waitUntil(t, "the failure notification", func() (ok bool) {
		ev, h, _, ok = hook.last(terminal)
		return ok
	})
	if su := ev.(*a2a.TaskStatusUpdateEvent); su.TaskID != "t1" || su.Status.State != a2a.TaskStateFailed {
		t.Errorf("delivered %+v, want t1 failed", su)
	}
	if h.Get("X-A2A-Notification-Token") != "tok-after" || h.Get("Authorization") != "Basic dXNlcjpwdw==" {
		t.Errorf("delivered with token %q, authorization %q: the stored secrets were not used",
			h.Get("X-A2A-Notification-Token"), h.Get("Authorization"))
	}
}

// TestPushConfigsSurviveRestartOverA2A goes through the protocol: a client
// registers webhooks with message/send and tasks/pushNotificationConfig/set,
// agentd restarts, and get and list still answer; a notification from the
// new process reaches the webhook.
func TestPushConfigsSurviveRestartOverA2A(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "agentd.db")
	hook := &webhook{got: make(chan struct{}, 1)}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	var taskID a2a.TaskID
	ok := t.Run("before", func(t *testing.T) {
		f := newFixture(t, llmtest.Always(llmtest.Reply{Text: "answer"}), fixtureOptions{dbPath: path, pushStore: true})
		cl := f.a2aClient("alpha")
		res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi")),
			Config:  &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{ID: "first", URL: hs.URL + "/first", Token: "tok-first"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		taskID = res.(*a2a.Task).ID
		hook.waitUntil(t, "the completion notification", func() bool { _, _, _, ok := hook.last(terminal); return ok })
		if _, err := cl.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: taskID, ID: "second", URL: hs.URL + "/second",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred-second"}}); err != nil {
			t.Fatal(err)
		}
	})
	if !ok {
		t.FailNow()
	}
	f := newFixture(t, llmtest.Always(llmtest.Reply{Text: "unused"}), fixtureOptions{dbPath: path, pushStore: true})
	cl := f.a2aClient("alpha")
	got, err := cl.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: taskID, ID: "first"})
	if err != nil || got.URL != hs.URL+"/first" || got.Token != "tok-first" {
		t.Fatalf("get after restart = %s, %v", jsonOf(t, got), err)
	}
	list, err := cl.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: taskID})
	if err != nil || len(list) != 2 || list[0].ID != "first" || list[1].ID != "second" {
		t.Fatalf("list after restart = %s, %v; want first and second", jsonOf(t, list), err)
	}

	hook.mu.Lock()
	before := len(hook.events)
	hook.mu.Unlock()
	note := a2a.NewStatusUpdateEvent(&a2a.Task{ID: taskID, ContextID: "c"}, a2a.TaskStateFailed, nil)
	if err := f.pusher.Notify(ctx, taskID, note); err != nil {
		t.Fatal(err)
	}
	hook.waitUntil(t, "both notifications", func() bool { return len(hook.events) >= before+2 })
	hook.mu.Lock()
	defer hook.mu.Unlock()
	// One task's events go through one worker, in config order.
	for i, want := range []struct{ path, token, auth string }{
		{"/first", "tok-first", ""},
		{"/second", "", "Bearer cred-second"},
	} {
		k := before + i
		h := hook.headers[k]
		if hook.paths[k] != want.path || h.Get("X-A2A-Notification-Token") != want.token || h.Get("Authorization") != want.auth {
			t.Errorf("notification %d after restart went to %s with token %q, authorization %q; want %s, %q, %q",
				i, hook.paths[k], h.Get("X-A2A-Notification-Token"), h.Get("Authorization"), want.path, want.token, want.auth)
		}
		if su, ok := hook.events[k].Event.(*a2a.TaskStatusUpdateEvent); !ok || su.TaskID != taskID || su.Status.State != a2a.TaskStateFailed {
			t.Errorf("notification %d after restart = %s, want task %s failed", i, jsonOf(t, hook.events[k]), taskID)
		}
	}
}

// jsonOf renders v for failure messages.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

// memPushDB is an in-memory PushConfigStore whose calls can be made to
// fail.
type memPushDB struct {
	mu      sync.Mutex
	rows    []store.PushConfig
	loads   int
	failAll error // AllPushConfigs fails once with it
	failPut error // PutPushConfig fails with it
}

func (m *memPushDB) PutPushConfig(_ context.Context, c store.PushConfig) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failPut != nil {
		return m.failPut
	}
	for i, r := range m.rows {
		if r.TaskID == c.TaskID && r.ID == c.ID {
			m.rows[i].Config = c.Config
			return nil
		}
	}
	m.rows = append(m.rows, c)
	return nil
}

func (m *memPushDB) AllPushConfigs(context.Context) ([]store.PushConfig, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	if err := m.failAll; err != nil {
		m.failAll = nil
		return nil, err
	}
	return slices.Clone(m.rows), nil
}

func (m *memPushDB) ListPushConfigs(_ context.Context, taskID string) ([]store.PushConfig, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.PushConfig
	for _, r := range m.rows {
		if r.TaskID == taskID {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memPushDB) DeletePushConfig(_ context.Context, taskID, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.rows)
	m.rows = slices.DeleteFunc(m.rows, func(r store.PushConfig) bool { return r.TaskID == taskID && r.ID == id })
	if len(m.rows) == n {
		return store.ErrNotFound
	}
	return nil
}

func (m *memPushDB) DeletePushConfigs(_ context.Context, taskID string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.rows)
	m.rows = slices.DeleteFunc(m.rows, func(r store.PushConfig) bool { return r.TaskID == taskID })
	return n - len(m.rows), nil
}

// storedPushConfigs is a pushConfigs over db, with its log in buf.
func storedPushConfigs(db PushConfigStore, maxTasks int, buf *bytes.Buffer) *pushConfigs {
	return &pushConfigs{policy: &netguard.Policy{AllowPrivate: true}, max: maxTasks, db: db,
		log: slog.New(slog.NewTextHandler(buf, nil)), byTask: map[a2a.TaskID][]*a2a.PushConfig{}}
}

func TestPushConfigsStoreFailures(t *testing.T) {
	ctx := t.Context()
	boom := errors.New("disk on fire")
	t.Run("LoadRetried", func(t *testing.T) {
		db := &memPushDB{failAll: boom, rows: []store.PushConfig{{TaskID: "t", ID: "c", Config: json.RawMessage(`{"url":"http://127.0.0.1:1/"}`)}}}
		s := storedPushConfigs(db, 10, &bytes.Buffer{})
		if _, err := s.List(ctx, "t"); !errors.Is(err, boom) {
			t.Fatalf("List while the store fails = %v, want %v", err, boom)
		}
		for range 2 {
			if l, err := s.List(ctx, "t"); err != nil || len(l) != 1 || l[0].ID != "c" || l[0].TaskID != "t" {
				t.Fatalf("List once the store works = %s, %v", jsonOf(t, l), err)
			}
		}
		if db.loads != 2 {
			t.Errorf("store read %d times, want 2 (one failure, then once for good)", db.loads)
		}
	})
	t.Run("SaveFails", func(t *testing.T) {
		db := &memPushDB{failPut: boom}
		s := storedPushConfigs(db, 10, &bytes.Buffer{})
		if _, err := s.Save(ctx, "t", &a2a.PushConfig{ID: "c", URL: "http://127.0.0.1:1/"}); !errors.Is(err, boom) {
			t.Fatalf("Save while the store fails = %v, want %v", err, boom)
		}
		if _, err := s.Get(ctx, "t", "c"); !errors.Is(err, push.ErrPushConfigNotFound) {
			t.Errorf("a config the store refused is served from memory (Get: %v)", err)
		}
	})
	t.Run("BlockedURLNotStored", func(t *testing.T) {
		db := &memPushDB{}
		s := storedPushConfigs(db, 10, &bytes.Buffer{})
		s.policy = &netguard.Policy{}
		if _, err := s.Save(ctx, "t", &a2a.PushConfig{URL: "http://169.254.169.254/latest"}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Fatalf("Save of a metadata-service URL = %v", err)
		}
		if len(db.rows) != 0 {
			t.Errorf("blocked config reached the store: %+v", db.rows)
		}
	})
	// A row that does not decode is skipped, and neither it nor the
	// decoder's message (which can quote it) reaches the log.
	t.Run("UnreadableSkippedQuietly", func(t *testing.T) {
		var buf bytes.Buffer
		db := &memPushDB{rows: []store.PushConfig{
			{TaskID: "t", ID: "bad", Config: json.RawMessage(`{"url":"http://127.0.0.1:1/","token":"s3cret-token"`)},
			{TaskID: "t", ID: "nourl", Config: json.RawMessage(`{"token":"s3cret-other"}`)},
			{TaskID: "t", ID: "good", Config: json.RawMessage(`{"id":"ignored","taskId":"ignored","url":"http://127.0.0.1:1/"}`)},
		}}
		s := storedPushConfigs(db, 10, &buf)
		l, err := s.List(ctx, "t")
		if err != nil || len(l) != 1 || l[0].ID != "good" || l[0].TaskID != "t" {
			t.Fatalf("List = %s, %v; want only good, keyed as stored", jsonOf(t, l), err)
		}
		if log := buf.String(); !strings.Contains(log, "bad") || !strings.Contains(log, "nourl") || strings.Contains(log, "s3cret") {
			t.Errorf("log %q: want both unreadable configs named and no secret", log)
		}
	})
	// DeleteAll takes a task out of the eviction order: a new config for
	// it is then the newest, and the task saved after it is not evicted.
	t.Run("DeleteAllResetsOrder", func(t *testing.T) {
		db := &memPushDB{}
		s := storedPushConfigs(db, 2, &bytes.Buffer{})
		save := func(id a2a.TaskID) {
			t.Helper()
			if _, err := s.Save(ctx, id, &a2a.PushConfig{URL: "http://127.0.0.1:1/" + string(id)}); err != nil {
				t.Fatal(err)
			}
		}
		save("a")
		save("b")
		if err := s.DeleteAll(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		save("a") // now b, a
		save("c") // evicts b
		for id, want := range map[a2a.TaskID]int{"a": 1, "b": 0, "c": 1} {
			if l, _ := s.List(ctx, id); len(l) != want {
				t.Errorf("List(%s) = %d configs, want %d", id, len(l), want)
			}
		}
		if got := storedTasks(t, db); !slices.Equal(got, []string{"a", "c"}) {
			t.Errorf("stored tasks = %q, want [a c]", got)
		}
	})
}

// FuzzPushConfigRoundTrip checks that whatever a client registers comes
// back unchanged after a restart: encoded into the store and decoded by a
// fresh config store.
func FuzzPushConfigRoundTrip(f *testing.F) {
	f.Add("t1", "c1", "/hook", "tok", "Bearer", "cred", "")
	f.Add("ü-task", "", "/a b?q=1#x", "", "", "", "tenant")
	f.Add("t", "id\x00\"\\", "/", "tok\u2028en", "basic", "dXNlcjpwdw==", "")
	f.Fuzz(func(t *testing.T, task, id, path, token, scheme, creds, tenant string) {
		for _, s := range []string{task, id, path, token, scheme, creds, tenant} {
			if !utf8.ValidString(s) {
				t.Skip("not valid UTF-8: JSON could not have carried it")
			}
		}
		if task == "" {
			t.Skip("a task id is required")
		}
		cfg := &a2a.PushConfig{ID: id, URL: "http://127.0.0.1:1" + (&url.URL{Path: "/" + path}).EscapedPath(),
			Token: token, Tenant: tenant}
		if scheme != "" || creds != "" {
			cfg.Auth = &a2a.PushAuthInfo{Scheme: scheme, Credentials: creds}
		}
		db := &memPushDB{}
		saved, err := storedPushConfigs(db, 10, &bytes.Buffer{}).Save(t.Context(), a2a.TaskID(task), cfg)
		if err != nil {
			t.Fatalf("Save: %v", err)
		}
		want := *cfg
		want.TaskID, want.ID = a2a.TaskID(task), saved.ID
		if !reflect.DeepEqual(saved, &want) {
			t.Fatalf("Save returned %s, want %s", jsonOf(t, saved), jsonOf(t, &want))
		}
		got, err := storedPushConfigs(db, 10, &bytes.Buffer{}).Get(t.Context(), a2a.TaskID(task), saved.ID)
		if err != nil || !reflect.DeepEqual(got, &want) {
			t.Fatalf("after restart Get = %s, %v; want %s", jsonOf(t, got), err, jsonOf(t, &want))
		}
	})
}
