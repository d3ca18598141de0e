package a2aedge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/store"
)

// PusherOptions configure push-notification delivery. Zero values take
// the defaults.
type PusherOptions struct {
	// Policy is the SSRF guard for webhook URLs; nil allows public
	// addresses only.
	Policy *netguard.Policy
	// Timeout bounds one delivery attempt; default 10 s.
	Timeout time.Duration
	// Attempts per event, retrying 5xx, 429 and network errors with
	// exponential backoff; default 4.
	Attempts int
	// Backoff is the first retry's delay, doubled for each next; default 500 ms.
	Backoff time.Duration
	// Workers deliver in parallel; events of one task always go through the
	// same worker, in order. Default 4.
	Workers int
	// QueueSize bounds undelivered events per worker; beyond it events are
	// dropped (and logged). Default 1024.
	QueueSize int
	// MaxTasks bounds the tasks whose configs are kept (oldest dropped
	// first); default DefaultMaxTasks.
	MaxTasks int
	// Store keeps the configs so that they survive a restart; nil keeps
	// them in memory only. The configs' tokens and credentials are stored
	// with them: a webhook must still authenticate after a restart.
	Store  PushConfigStore
	Logger *slog.Logger
}

// PushConfigStore is the part of store.PushConfigStore a Pusher uses: it
// reads everything once and then serves reads from memory, since a2a-go
// lists a task's configs for every event of the task.
type PushConfigStore interface {
	PutPushConfig(ctx context.Context, c store.PushConfig) error
	ListPushConfigs(ctx context.Context, taskID string) ([]store.PushConfig, error)
	AllPushConfigs(ctx context.Context) ([]store.PushConfig, error)
	DeletePushConfig(ctx context.Context, taskID, id string) error
	DeletePushConfigs(ctx context.Context, taskID string) (int, error)
}

var _ PushConfigStore = store.PushConfigStore(nil)

// Pusher delivers A2A events to the webhooks clients register for their
// tasks. It is a2a-go's push.Sender, but it never blocks a task: SendPush
// queues the event and returns, and workers deliver with retries.
//
// Configs live in memory, and also in PusherOptions.Store when one is
// given, so that tasks/pushNotificationConfig/get and list still answer
// after a restart and Notify can reach the webhooks of a task the restart
// ended (see TaskStore.FailRunningTasks).
type Pusher struct {
	opts    PusherOptions
	log     *slog.Logger
	client  *http.Client
	configs *pushConfigs
	queues  []chan delivery
	stop    context.CancelFunc // cancels the workers' context
	wg      sync.WaitGroup
}

var _ push.Sender = (*Pusher)(nil)

type delivery struct {
	cfg  *a2a.PushConfig
	body []byte
}

// NewPusher starts the delivery workers; Close stops them.
func NewPusher(opts PusherOptions) *Pusher {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1024
	}
	if opts.MaxTasks <= 0 {
		opts.MaxTasks = DefaultMaxTasks
	}
	if opts.Policy == nil {
		opts.Policy = &netguard.Policy{}
	}
	client := opts.Policy.Client(opts.Timeout)
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pusher{
		opts: opts, log: orDiscard(opts.Logger), client: client, stop: cancel,
		configs: &pushConfigs{policy: opts.Policy, max: opts.MaxTasks, db: opts.Store, log: orDiscard(opts.Logger),
			byTask: map[a2a.TaskID][]*a2a.PushConfig{}},
	}
	for range opts.Workers {
		q := make(chan delivery, opts.QueueSize)
		p.queues = append(p.queues, q)
		p.wg.Go(func() { p.worker(ctx, q) })
	}
	return p
}

// Configs is the push-config store to give a2a-go.
func (p *Pusher) Configs() push.ConfigStore { return p.configs }

// Close stops the workers; undelivered events are dropped.
func (p *Pusher) Close() error {
	p.stop()
	p.wg.Wait()
	return nil
}

// Notify queues event for every webhook registered for taskID, as a2a-go
// does for the events of the tasks it runs. It serves the events a2a-go
// does not see, such as the failure of a task that a restart ended.
func (p *Pusher) Notify(ctx context.Context, taskID a2a.TaskID, event a2a.Event) error {
	cfgs, err := p.configs.List(ctx, taskID)
	if err != nil {
		return err
	}
	for _, c := range cfgs {
		_ = p.SendPush(ctx, c, event) // never fails: it queues or drops
	}
	return nil
}

// Reload reads taskID's configs from the store again: another replica
// sharing the store changed them, and this one may be running the task.
// Without a store it does nothing.
func (p *Pusher) Reload(ctx context.Context, taskID a2a.TaskID) error {
	return p.configs.reload(ctx, taskID)
}

// SendPush implements push.Sender: it queues the event for every webhook
// of its task and returns at once.
func (p *Pusher) SendPush(ctx context.Context, cfg *a2a.PushConfig, event a2a.Event) error {
	body, err := json.Marshal(a2a.StreamResponse{Event: event})
	if err != nil {
		p.log.Error("encode push notification", "task", cfg.TaskID, "err", err)
		return nil
	}
	h := fnv.New32a()
	h.Write([]byte(cfg.TaskID))
	q := p.queues[int(h.Sum32()%uint32(len(p.queues)))]
	select {
	case q <- delivery{cfg: cfg, body: body}:
	default:
		p.log.Warn("push notification dropped: delivery queue full", "task", cfg.TaskID)
	}
	return nil
}

func (p *Pusher) worker(ctx context.Context, q chan delivery) {
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-q:
			p.deliver(ctx, d)
		}
	}
}

// deliver posts one event, retrying transient failures.
func (p *Pusher) deliver(ctx context.Context, d delivery) {
	delay := p.opts.Backoff
	for attempt := 1; ; attempt++ {
		retry, err := p.post(ctx, d)
		if err == nil {
			return
		}
		if !retry || attempt >= p.opts.Attempts {
			// The URL is the client's; the token and credentials never
			// appear in logs.
			p.log.Warn("push notification failed", "task", d.cfg.TaskID, "config", d.cfg.ID, "attempts", attempt, "err", err)
			return
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		delay *= 2
	}
}

// post sends one attempt and says whether a failure is worth retrying.
func (p *Pusher) post(ctx context.Context, d delivery) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.cfg.URL, bytes.NewReader(d.body))
	if err != nil {
		return false, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if d.cfg.Token != "" {
		// The spec's header, and the spelling a2a-go's own sender uses.
		req.Header.Set("X-A2A-Notification-Token", d.cfg.Token)
		req.Header.Set("A2A-Notification-Token", d.cfg.Token)
	}
	if a := d.cfg.Auth; a != nil && a.Credentials != "" {
		switch strings.ToLower(a.Scheme) {
		case "bearer":
			req.Header.Set("Authorization", "Bearer "+a.Credentials)
		case "basic":
			req.Header.Set("Authorization", "Basic "+a.Credentials)
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return !errors.Is(err, netguard.ErrBlocked), err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, nil
	}
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, fmt.Errorf("webhook answered %s", resp.Status)
}

// pushConfigs is a bounded push.ConfigStore that refuses webhook URLs the
// SSRF guard blocks. It serves every read from memory; with a db, each
// change is written there first, and the first call loads what an earlier
// process stored.
type pushConfigs struct {
	policy *netguard.Policy
	max    int
	db     PushConfigStore // nil: memory only
	log    *slog.Logger

	// wmu orders changes (and the load), so that the db and the map
	// change in the same order; readers only take mu, and never wait
	// for the db except before the load.
	wmu    sync.Mutex
	loaded atomic.Bool // byTask holds db's configs

	mu     sync.RWMutex
	byTask map[a2a.TaskID][]*a2a.PushConfig
	order  []a2a.TaskID // tasks in the order their first config came
}

var _ push.ConfigStore = (*pushConfigs)(nil)

// ready loads the stored configs if that has not been done yet.
func (s *pushConfigs) ready(ctx context.Context) error {
	if s.db == nil || s.loaded.Load() {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.loadLocked(ctx)
}

// loadLocked reads every stored config into memory, once; s.wmu is held.
// A failure leaves nothing loaded, and the next call tries again.
func (s *pushConfigs) loadLocked(ctx context.Context) error {
	if s.db == nil || s.loaded.Load() {
		return nil
	}
	stored, err := s.db.AllPushConfigs(ctx)
	if err != nil {
		return fmt.Errorf("load push notification configs: %w", err)
	}
	byTask := map[a2a.TaskID][]*a2a.PushConfig{}
	var order []a2a.TaskID
	for _, r := range stored { // oldest first: order comes out as it was
		var c a2a.PushConfig
		if err := json.Unmarshal(r.Config, &c); err != nil || c.URL == "" {
			// Neither the payload nor the decoder's message (which may
			// quote it) is logged: it holds the webhook's secrets.
			s.log.Warn("stored push notification config is unreadable; ignored", "task", r.TaskID, "config", r.ID)
			continue
		}
		c.TaskID, c.ID = a2a.TaskID(r.TaskID), r.ID // the keys are the store's
		if _, ok := byTask[c.TaskID]; !ok {
			order = append(order, c.TaskID)
		}
		byTask[c.TaskID] = append(byTask[c.TaskID], &c)
	}
	s.mu.Lock()
	s.byTask, s.order = byTask, order
	evicted := s.evictLocked() // MaxTasks may be lower than last time
	tasks := len(s.order)
	s.mu.Unlock()
	s.loaded.Store(true)
	s.forget(ctx, evicted)
	if len(stored) > 0 {
		s.log.Debug("loaded push notification configs", "configs", len(stored), "tasks", tasks)
	}
	return nil
}

// evictLocked drops the oldest tasks beyond the bound and returns them;
// s.mu is held.
func (s *pushConfigs) evictLocked() []a2a.TaskID {
	var evicted []a2a.TaskID
	for len(s.order) > s.max {
		evicted = append(evicted, s.order[0])
		delete(s.byTask, s.order[0])
		s.order = s.order[1:]
	}
	return evicted
}

// forget deletes evicted tasks' configs from the db. A failure only
// leaves configs that the next load evicts again.
func (s *pushConfigs) forget(ctx context.Context, evicted []a2a.TaskID) {
	if s.db == nil {
		return
	}
	for _, id := range evicted {
		if _, err := s.db.DeletePushConfigs(ctx, string(id)); err != nil {
			s.log.Warn("delete evicted push notification configs", "task", id, "err", err)
		}
	}
}

// reload replaces taskID's configs in memory by the stored ones.
func (s *pushConfigs) reload(ctx context.Context, taskID a2a.TaskID) error {
	if s.db == nil {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if !s.loaded.Load() {
		return s.loadLocked(ctx) // reads every task's, this one's included
	}
	stored, err := s.db.ListPushConfigs(ctx, string(taskID))
	if err != nil {
		return fmt.Errorf("reload push notification configs of task %s: %w", taskID, err)
	}
	var list []*a2a.PushConfig
	for _, r := range stored {
		var c a2a.PushConfig
		if err := json.Unmarshal(r.Config, &c); err != nil || c.URL == "" {
			s.log.Warn("stored push notification config is unreadable; ignored", "task", r.TaskID, "config", r.ID)
			continue
		}
		c.TaskID, c.ID = taskID, r.ID
		list = append(list, &c)
	}
	s.mu.Lock()
	_, had := s.byTask[taskID]
	var evicted []a2a.TaskID
	switch {
	case len(list) == 0:
		delete(s.byTask, taskID)
		s.order = slices.DeleteFunc(s.order, func(id a2a.TaskID) bool { return id == taskID })
	case had:
		s.byTask[taskID] = list
	default:
		s.byTask[taskID] = list
		s.order = append(s.order, taskID)
		evicted = s.evictLocked()
	}
	s.mu.Unlock()
	s.forget(ctx, evicted)
	return nil
}

// Save implements push.ConfigStore.
func (s *pushConfigs) Save(ctx context.Context, taskID a2a.TaskID, cfg *a2a.PushConfig) (*a2a.PushConfig, error) {
	if cfg == nil || cfg.URL == "" {
		return nil, fmt.Errorf("%w: a push config needs a url", a2a.ErrInvalidParams)
	}
	if _, err := s.policy.CheckURL(ctx, cfg.URL); err != nil {
		return nil, fmt.Errorf("%w: push notification url: %w", a2a.ErrInvalidParams, err)
	}
	c := *cfg
	if c.Auth != nil {
		auth := *c.Auth
		c.Auth = &auth
	}
	if c.ID == "" {
		c.ID = agent.NewID()
	}
	c.TaskID = taskID
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.loadLocked(ctx); err != nil {
		return nil, err
	}
	if s.db != nil {
		data, err := json.Marshal(&c)
		if err != nil {
			return nil, fmt.Errorf("encode push notification config: %w", err)
		}
		if err := s.db.PutPushConfig(ctx, store.PushConfig{TaskID: string(taskID), ID: c.ID, Config: data}); err != nil {
			return nil, fmt.Errorf("save push notification config: %w", err)
		}
	}
	s.mu.Lock()
	list, ok := s.byTask[taskID]
	var evicted []a2a.TaskID
	if !ok {
		s.order = append(s.order, taskID)
		evicted = s.evictLocked()
	}
	replaced := false
	for i, old := range list {
		if old.ID == c.ID {
			list[i], replaced = &c, true
		}
	}
	if !replaced {
		list = append(list, &c)
	}
	s.byTask[taskID] = list
	s.mu.Unlock()
	s.forget(ctx, evicted)
	out := c
	return &out, nil
}

// Get implements push.ConfigStore.
func (s *pushConfigs) Get(ctx context.Context, taskID a2a.TaskID, id string) (*a2a.PushConfig, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, c := range s.byTask[taskID] {
		if c.ID == id {
			out := *c
			return &out, nil
		}
	}
	return nil, push.ErrPushConfigNotFound
}

// List implements push.ConfigStore. It runs for every task event, so the
// common case (loaded, no configs) allocates nothing.
func (s *pushConfigs) List(ctx context.Context, taskID a2a.TaskID) ([]*a2a.PushConfig, error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	list := s.byTask[taskID]
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]*a2a.PushConfig, len(list))
	for i, c := range list {
		cp := *c
		out[i] = &cp
	}
	return out, nil
}

// Delete implements push.ConfigStore. Deleting a config that is not there
// is not an error.
func (s *pushConfigs) Delete(ctx context.Context, taskID a2a.TaskID, id string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.loadLocked(ctx); err != nil {
		return err
	}
	if s.db != nil {
		if err := s.db.DeletePushConfig(ctx, string(taskID), id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("delete push notification config: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.byTask[taskID]
	for i, c := range list {
		if c.ID == id {
			s.byTask[taskID] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	return nil
}

// DeleteAll implements push.ConfigStore.
func (s *pushConfigs) DeleteAll(ctx context.Context, taskID a2a.TaskID) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.loadLocked(ctx); err != nil {
		return err
	}
	if s.db != nil {
		if _, err := s.db.DeletePushConfigs(ctx, string(taskID)); err != nil {
			return fmt.Errorf("delete push notification configs: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byTask[taskID]; ok {
		delete(s.byTask, taskID)
		// Out of the eviction order too: a later Save starts it afresh
		// instead of leaving a stale entry to evict a newer task's
		// configs.
		s.order = slices.DeleteFunc(s.order, func(id a2a.TaskID) bool { return id == taskID })
	}
	return nil
}
