package a2aedge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/netguard"
)

// webhook records the notifications it receives; it fails the first
// failFirst requests with 503 to exercise retries.
type webhook struct {
	mu        sync.Mutex
	failFirst int
	seen      int
	events    []a2a.StreamResponse
	headers   []http.Header
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
