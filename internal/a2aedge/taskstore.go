package a2aedge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
)

// settleEvery is how often unsettled task states are written again.
const settleEvery = time.Second

// DefaultMaxTasks bounds the task store when no bound is configured.
const DefaultMaxTasks = 1000

// TaskStoreOptions configure a TaskStore. Zero values take the defaults.
type TaskStoreOptions struct {
	// MaxTasks bounds the stored tasks; only terminal tasks are evicted,
	// oldest first. Default DefaultMaxTasks.
	MaxTasks int
	// FlushInterval bounds how long intermediate progress of a running task
	// (streamed text, tool activity) stays in memory only. Default 1 s.
	FlushInterval time.Duration
	Logger        *slog.Logger
	// Meter counts tasks entering each state (agentd.a2a.tasks); nil
	// counts nothing.
	Meter metric.MeterProvider
	// OnState, when set, is called after a task is created or enters a
	// new state, with its id, agent, owner (principal) and state as the
	// dashboard spells it (StateWord: "input-required"): the
	// dashboard's change stream hears of tasks this way. It must not
	// block: it runs on the task's path.
	OnState func(id, agent, owner, state string)
}

// TaskStore is a2a-go's taskstore.Store over agentd's persistent
// store.TaskStore.
//
// Writes are kept off the hot path: a task is written when it is created,
// whenever its state changes (working, input-required, a terminal state)
// and at most once per FlushInterval while it streams. A blocking send
// that finishes at once writes no task here: the kernel stores it,
// finished, with the model's reply (record, then created for the count). Between writes the
// running task lives in memory, where a2a-go's optimistic versions are
// checked; the store's own versions only order this process's writes.
// After a crash, FailRunningTasks turns every task left non-terminal into
// a failed one, so a client polling an id always gets a truthful answer.
type TaskStore struct {
	st      store.TaskStore
	max     int
	flush   time.Duration
	log     *slog.Logger
	tm      *taskMetrics // nil when metrics are off
	onState func(id, agent, owner, state string)

	mu    sync.Mutex
	live  map[a2a.TaskID]*liveTask
	count int // tasks in the store, as far as this process knows
	// unsettled are live tasks whose newest state the store did not take
	// (store.ErrUnavailable, after the store's own retries): the pruner
	// writes them again until it does. Meanwhile this process answers
	// for them from memory.
	unsettled map[a2a.TaskID]*liveTask

	pruneC chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup
}

var _ taskstore.Store = (*TaskStore)(nil)

// liveTask is a non-terminal task held in memory.
type liveTask struct {
	task    *a2a.Task
	version taskstore.TaskVersion
	agent   string
	owner   string // the principal that created it
	created time.Time
	flushed time.Time // last write to the store

	wmu sync.Mutex // orders this task's writes to the store
}

// OpenTaskStore returns a TaskStore over st and starts its background
// pruner; Close stops it.
func OpenTaskStore(ctx context.Context, st store.TaskStore, opts TaskStoreOptions) (*TaskStore, error) {
	if opts.MaxTasks <= 0 {
		opts.MaxTasks = DefaultMaxTasks
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = time.Second
	}
	s := &TaskStore{
		st: st, max: opts.MaxTasks, flush: opts.FlushInterval, log: orDiscard(opts.Logger), tm: newTaskMetrics(opts.Meter), onState: opts.OnState,
		live: map[a2a.TaskID]*liveTask{}, unsettled: map[a2a.TaskID]*liveTask{}, pruneC: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	_, total, err := st.ListTasks(ctx, store.TaskFilter{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("count a2a tasks: %w", err)
	}
	s.count = total
	s.wg.Add(1)
	go s.pruner()
	s.triggerPrune()
	return s, nil
}

// Close stops the pruner, after one last try at the unsettled writes.
// It does not close the underlying store. A task still unsettled stays
// non-terminal in the store, where the next start (FailRunningTasks) or
// another replica's reaper fails it.
func (s *TaskStore) Close() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.settle(ctx)
	return nil
}

// RestartReason is the status text of tasks FailRunningTasks fails.
const RestartReason = "agentd stopped while this task was %s; a run does not survive a restart, so the task failed. Send the message again to retry."

// FailRunningTasks marks every task a previous process left non-terminal
// as failed, with RestartReason in its status message. A daemon that is
// the only one on its store calls it once at start, before serving;
// replicas sharing a store fail only dead replicas' tasks (FailTask).
func (s *TaskStore) FailRunningTasks(ctx context.Context) (int, error) {
	n, err := s.st.FailRunningTasks(ctx, func(t store.Task) (json.RawMessage, string) {
		return failTask(t, func(state a2a.TaskState) string { return fmt.Sprintf(RestartReason, stateWord(state)) })
	})
	if err != nil {
		return 0, fmt.Errorf("fail a2a tasks left running: %w", err)
	}
	return n, nil
}

// FailTask returns the stored task t failed because reason (a clause
// such as "the agentd replica r1 that was running it stopped"): its new
// data, whose status message says why, and its new state. The message
// the task had is kept in its history.
func FailTask(t store.Task, reason string) (json.RawMessage, string) {
	return failTask(t, func(state a2a.TaskState) string {
		r := []rune(reason)
		if len(r) > 0 {
			r[0] = unicode.ToUpper(r[0])
		}
		return fmt.Sprintf("%s while this task was %s, so the task failed. Send the message again to retry.", string(r), stateWord(state))
	})
}

// failTask fails t with the status text why gives for its last state.
func failTask(t store.Task, why func(a2a.TaskState) string) (json.RawMessage, string) {
	now := time.Now().UTC()
	var task a2a.Task
	if err := json.Unmarshal(t.Data, &task); err != nil || task.ID == "" {
		task = a2a.Task{ID: a2a.TaskID(t.ID), ContextID: t.ContextID}
	}
	if task.Status.Message != nil {
		task.History = append(task.History, task.Status.Message)
	}
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, &task, a2a.NewTextPart(why(task.Status.State)))
	task.Status = a2a.TaskStatus{State: a2a.TaskStateFailed, Message: msg, Timestamp: &now}
	data, err := json.Marshal(&task)
	if err != nil {
		data = t.Data
	}
	return data, string(a2a.TaskStateFailed)
}

// Create implements taskstore.Store.
func (s *TaskStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	if task == nil || task.ID == "" {
		return taskstore.TaskVersionMissing, fmt.Errorf("create task: %w", a2a.ErrInvalidParams)
	}
	rec, err := s.record(agentFrom(ctx), ownerFrom(ctx), task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	now := rec.CreatedAt
	s.mu.Lock()
	if _, ok := s.live[task.ID]; ok {
		s.mu.Unlock()
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	var lt *liveTask
	if !rec.Terminal {
		lt = &liveTask{task: task, version: 1, agent: rec.Agent, owner: rec.Owner, created: now, flushed: now}
		lt.wmu.Lock() // Get waits for nothing: it reads the live copy
		s.live[task.ID] = lt
	}
	s.mu.Unlock()

	_, err = s.st.CreateTask(ctx, rec)
	if lt != nil {
		lt.wmu.Unlock()
	}
	if err != nil {
		if lt != nil {
			s.mu.Lock()
			delete(s.live, task.ID)
			s.mu.Unlock()
		}
		if errors.Is(err, store.ErrExists) {
			return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
		}
		return taskstore.TaskVersionMissing, fmt.Errorf("store task %s: %w", task.ID, err)
	}
	s.created(ctx, rec.Agent, task.Status.State)
	s.told(rec.ID, rec.Agent, rec.Owner, task.Status.State)
	return 1, nil
}

// told tells OnState that a task is in state.
func (s *TaskStore) told(id, agentName, owner string, state a2a.TaskState) {
	if s.onState != nil {
		s.onState(id, agentName, owner, StateWord(state))
	}
}

// record is task as the store keeps it, for agentName, owned by owner,
// created now.
func (s *TaskStore) record(agentName, owner string, task *a2a.Task) (store.Task, error) {
	data, err := json.Marshal(task)
	if err != nil {
		return store.Task{}, fmt.Errorf("encode task %s: %w", task.ID, err)
	}
	now := time.Now().UTC()
	return store.Task{
		ID: string(task.ID), ContextID: task.ContextID, Agent: agentName, Owner: owner, State: string(task.Status.State),
		Terminal: task.Status.State.Terminal(), Data: data, CreatedAt: now, UpdatedAt: now,
	}, nil
}

// created counts a task stored in state, by Create or by the kernel with
// the model's reply (a finished task, never live).
func (s *TaskStore) created(ctx context.Context, agentName string, state a2a.TaskState) {
	s.tm.entered(ctx, agentName, state)
	s.mu.Lock()
	s.count++
	// Eviction waits for a sixteenth more than the bound: pruning after
	// every new task made a busy server delete and count rows on every
	// request (5% of a send's CPU in a profile at 2,000 sends/s).
	over := s.count > s.max+s.max/16
	s.mu.Unlock()
	if over {
		s.triggerPrune()
	}
}

// Unfinished is the number of this process's tasks whose terminal state
// is not stored yet, less those waiting for the store to answer again
// (unsettled): the rest are running, or their end is on its way.
func (s *TaskStore) Unfinished() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id := range s.live {
		if _, ok := s.unsettled[id]; !ok {
			n++
		}
	}
	return n
}

// Update implements taskstore.Store.
func (s *TaskStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if req == nil || req.Task == nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("update task: %w", a2a.ErrInvalidParams)
	}
	id := req.Task.ID
	s.mu.Lock()
	lt, ok := s.live[id]
	if !ok {
		s.mu.Unlock()
		return s.updateStored(ctx, req)
	}
	if !allowed(ctx, lt.agent, lt.owner) {
		s.mu.Unlock()
		return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != lt.version {
		s.mu.Unlock()
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	prev := lt.task.Status.State
	lt.task = req.Task
	lt.version++
	version := lt.version
	now := time.Now()
	write := prev != req.Task.Status.State || req.Task.Status.State.Terminal() || now.Sub(lt.flushed) >= s.flush
	if write {
		lt.flushed = now
	}
	agentName, owner := lt.agent, lt.owner
	s.mu.Unlock()
	state := req.Task.Status.State
	if state != prev {
		s.tm.entered(ctx, agentName, state)
	}
	if !write {
		return version, nil
	}
	// The final write must land even if the request that caused it is
	// gone: the run's outcome is what a later GetTask reports.
	if err := s.write(context.WithoutCancel(ctx), lt); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	if state != prev {
		// After the write: whoever hears of it and lists the tasks finds
		// the new state.
		s.told(string(id), agentName, owner, state)
	}
	return version, nil
}

// write stores the newest state of lt, and forgets lt once the stored
// state is terminal. Taking the newest state under wmu means concurrent
// writers can never store an older state after a newer one.
func (s *TaskStore) write(ctx context.Context, lt *liveTask) error {
	lt.wmu.Lock()
	defer lt.wmu.Unlock()
	s.mu.Lock()
	task := lt.task
	s.mu.Unlock()
	data, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("encode task %s: %w", task.ID, err)
	}
	rec := store.Task{
		ID: string(task.ID), ContextID: task.ContextID, Agent: lt.agent, Owner: lt.owner, State: string(task.Status.State),
		Terminal: task.Status.State.Terminal(), Data: data, CreatedAt: lt.created, UpdatedAt: time.Now().UTC(),
	}
	if _, err := s.st.UpdateTask(ctx, rec, 0); err != nil {
		if !errors.Is(err, store.ErrUnavailable) {
			return fmt.Errorf("store task %s: %w", task.ID, err)
		}
		// The database is gone for longer than the store waits. The
		// task's state is kept here, where this process answers for it,
		// and written when the database returns (settle): a task must
		// not stay working in the store because its end came during an
		// outage.
		s.mu.Lock()
		_, was := s.unsettled[task.ID]
		s.unsettled[task.ID] = lt
		s.mu.Unlock()
		if !was {
			s.log.Warn("a2a task state not stored: the store is unavailable; stored once it answers", "task", task.ID, "state", rec.State)
		}
		return nil
	}
	s.mu.Lock()
	if s.unsettled[task.ID] == lt && lt.task == task {
		delete(s.unsettled, task.ID)
	}
	if rec.Terminal && s.live[task.ID] == lt && lt.task == task {
		delete(s.live, task.ID)
	}
	s.mu.Unlock()
	return nil
}

// settle writes the unsettled tasks again, newest state each.
func (s *TaskStore) settle(ctx context.Context) {
	s.mu.Lock()
	if len(s.unsettled) == 0 {
		s.mu.Unlock()
		return
	}
	pending := make([]*liveTask, 0, len(s.unsettled))
	for _, lt := range s.unsettled {
		pending = append(pending, lt)
	}
	s.mu.Unlock()
	for _, lt := range pending {
		if err := s.write(ctx, lt); err != nil {
			s.log.Warn("storing an a2a task's state failed", "err", err)
		}
	}
}

// updateStored updates a task that is not live (a terminal task, or one a
// previous process left behind).
func (s *TaskStore) updateStored(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	cur, err := s.st.GetTask(ctx, string(req.Task.ID))
	if errors.Is(err, store.ErrNotFound) {
		return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
	}
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("load task %s: %w", req.Task.ID, err)
	}
	if !allowed(ctx, cur.Agent, cur.Owner) {
		return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
	}
	data, err := json.Marshal(req.Task)
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("encode task %s: %w", req.Task.ID, err)
	}
	prev := cur.State
	cur.Data, cur.State, cur.Terminal, cur.UpdatedAt = data, string(req.Task.Status.State), req.Task.Status.State.Terminal(), time.Now().UTC()
	v, err := s.st.UpdateTask(ctx, cur, int64(req.PrevVersion))
	if errors.Is(err, store.ErrConflict) {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("store task %s: %w", req.Task.ID, err)
	}
	if cur.State != prev {
		s.told(cur.ID, cur.Agent, cur.Owner, req.Task.Status.State)
	}
	return taskstore.TaskVersion(v), nil
}

// Get implements taskstore.Store. Callers may change the returned task's
// fields; its slices are copies.
func (s *TaskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	t, v, _, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return &taskstore.StoredTask{Task: t, Version: v}, nil
}

// get returns a task, its version and its agent.
func (s *TaskStore) get(ctx context.Context, id a2a.TaskID) (*a2a.Task, taskstore.TaskVersion, string, error) {
	s.mu.Lock()
	if lt, ok := s.live[id]; ok {
		defer s.mu.Unlock()
		if !allowed(ctx, lt.agent, lt.owner) {
			return nil, 0, "", a2a.ErrTaskNotFound
		}
		return cloneTask(lt.task), lt.version, lt.agent, nil
	}
	s.mu.Unlock()
	rec, err := s.st.GetTask(ctx, string(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, "", a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, 0, "", fmt.Errorf("load task %s: %w", id, err)
	}
	if !allowed(ctx, rec.Agent, rec.Owner) {
		return nil, 0, "", a2a.ErrTaskNotFound
	}
	var t a2a.Task
	if err := json.Unmarshal(rec.Data, &t); err != nil {
		return nil, 0, "", fmt.Errorf("decode task %s: %w", id, err)
	}
	return &t, taskstore.TaskVersion(rec.Version), rec.Agent, nil
}

// List implements taskstore.Store: most recently updated first, scoped to
// the agent whose endpoint was called. Page tokens are opaque offsets.
func (s *TaskStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	pageSize := req.PageSize
	switch {
	case pageSize == 0:
		pageSize = 50
	case pageSize < 1 || pageSize > 100:
		return nil, fmt.Errorf("page size must be between 1 and 100, got %d: %w", pageSize, a2a.ErrInvalidParams)
	}
	offset := 0
	if req.PageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.PageToken)
		if err == nil {
			offset, err = strconv.Atoi(string(b))
		}
		if err != nil || offset < 0 {
			return nil, fmt.Errorf("bad page token: %w", a2a.ErrInvalidParams)
		}
	}
	status, err := listStatus(req.Status)
	if err != nil {
		return nil, err
	}
	f := store.TaskFilter{ContextID: req.ContextID, Agent: agentFrom(ctx), Owner: ownerFilter(ctx), State: string(status), Limit: pageSize, Offset: offset}
	if req.StatusTimestampAfter != nil {
		f.UpdatedAfter = *req.StatusTimestampAfter
	}
	recs, total, err := s.st.ListTasks(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	out := &a2a.ListTasksResponse{Tasks: make([]*a2a.Task, 0, len(recs)), TotalSize: total, PageSize: pageSize}
	for _, rec := range recs {
		var t *a2a.Task
		s.mu.Lock()
		if lt, ok := s.live[a2a.TaskID(rec.ID)]; ok {
			t = cloneTask(lt.task)
		}
		s.mu.Unlock()
		if t == nil {
			t = new(a2a.Task)
			if err := json.Unmarshal(rec.Data, t); err != nil {
				return nil, fmt.Errorf("decode task %s: %w", rec.ID, err)
			}
		}
		trimHistory(t, req.HistoryLength)
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		out.Tasks = append(out.Tasks, t)
	}
	if next := offset + len(recs); next < total && len(recs) > 0 {
		out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(next)))
	}
	return out, nil
}

// taskStates are the states a ListTasks status filter may name.
var taskStates = []a2a.TaskState{
	a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired,
	a2a.TaskStateCompleted, a2a.TaskStateCanceled, a2a.TaskStateFailed, a2a.TaskStateRejected,
}

// listStatus reads ListTasks' status filter; "" means any state. An unset
// enum means any: a2a-go decodes TASK_STATE_UNSPECIFIED to "", and
// @a2a-js/sdk (ts-proto) sends an unset status as "UNRECOGNIZED", so its
// listTasks({}) would otherwise match nothing. Any other value that is
// not a task state is the client's mistake, reported as such rather than
// answered with an empty list.
func listStatus(s a2a.TaskState) (a2a.TaskState, error) {
	switch s {
	case a2a.TaskStateUnspecified, "TASK_STATE_UNSPECIFIED", "UNRECOGNIZED":
		return a2a.TaskStateUnspecified, nil
	}
	if slices.Contains(taskStates, s) {
		return s, nil
	}
	names := make([]string, len(taskStates))
	for i, st := range taskStates {
		names[i] = string(st)
	}
	return "", fmt.Errorf("status: %q is not a task state (want one of %s, or none for any): %w", string(s), strings.Join(names, ", "), a2a.ErrInvalidParams)
}

func (s *TaskStore) triggerPrune() {
	select {
	case s.pruneC <- struct{}{}:
	default:
	}
}

// pruner evicts terminal tasks beyond the bound, off the request path,
// and stores the unsettled tasks' states once the store answers again.
func (s *TaskStore) pruner() {
	defer s.wg.Done()
	tick := time.NewTicker(settleEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			// Bounded: a store that waits out an outage must not keep
			// Close waiting.
			ctx, cancel := context.WithTimeout(context.Background(), settleEvery)
			s.settle(ctx)
			cancel()
			continue
		case <-s.pruneC:
		}
		n, err := s.st.PruneTasks(context.Background(), s.max)
		if err != nil {
			s.log.Warn("pruning a2a tasks failed", "err", err)
			continue
		}
		_, total, err := s.st.ListTasks(context.Background(), store.TaskFilter{Limit: 1})
		if err != nil {
			s.log.Warn("counting a2a tasks failed", "err", err)
			continue
		}
		s.mu.Lock()
		s.count = total
		s.mu.Unlock()
		if n > 0 {
			s.log.Debug("evicted old a2a tasks", "deleted", n, "kept", total)
		}
	}
}

// cloneTask copies t deeply enough for callers to change its fields and
// append to its slices without touching the stored task.
func cloneTask(t *a2a.Task) *a2a.Task {
	c := *t
	c.History = slices.Clone(t.History)
	c.Artifacts = slices.Clone(t.Artifacts)
	return &c
}

func trimHistory(t *a2a.Task, n *int) {
	limit := 100
	if n != nil {
		limit = *n
	}
	switch {
	case limit == 0:
		t.History = []*a2a.Message{}
	case limit > 0 && len(t.History) > limit:
		t.History = t.History[len(t.History)-limit:]
	}
}

// stateWord names a task state in prose.
func stateWord(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateSubmitted:
		return "submitted"
	case a2a.TaskStateWorking:
		return "working"
	case a2a.TaskStateInputRequired:
		return "waiting for input"
	case a2a.TaskStateAuthRequired:
		return "waiting for authentication"
	}
	return string(s)
}

// agentKey scopes store access to the agent whose endpoint was called.
type agentKey struct{}

func withAgent(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, agentKey{}, name)
}

// agentFrom returns the agent a request addressed, "" for unscoped access
// (legacy routes, the daemon's own API).
func agentFrom(ctx context.Context) string {
	s, _ := ctx.Value(agentKey{}).(string)
	return s
}

// allowed reports whether a request may see a task of agent owned by
// owner: a task is visible only through its own agent's endpoint, so ids
// do not leak between agents, and only to the principal that created it
// (or an admin), so principals sharing an agent do not see each other's
// tasks, contexts, push configs or questions. Everything a2a-go does with
// a task (get, cancel, resubscribe, follow-up messages, push configs)
// reads it through here first.
//
// A task of another principal is answered like a missing one (a2a's
// TaskNotFound), never "forbidden": its id must not tell anyone that it
// exists.
func allowed(ctx context.Context, agent, owner string) bool {
	a := agentFrom(ctx)
	return (a == "" || a == agent) && mayOwn(ctx, owner)
}

// mayOwn reports whether the request's principal may act on an object
// owner owns. Requests without a principal come from inside the daemon
// (the reaper, replicas, the bridge's in-process calls).
func mayOwn(ctx context.Context, owner string) bool {
	p := principal.FromContext(ctx)
	return p == nil || p.MaySee(owner)
}

// ownerFrom is the owner a task created in ctx records: its principal's
// name, "" for the daemon's own work.
func ownerFrom(ctx context.Context) string { return principal.NameOf(principal.FromContext(ctx)) }

// ownerFilter narrows a listing to the request's principal's tasks; ""
// (everything) for admins and the daemon itself.
func ownerFilter(ctx context.Context) string {
	p := principal.FromContext(ctx)
	if p == nil || p.Admin {
		return ""
	}
	if p.Name == "" {
		// No name owns nothing: match no task rather than every one.
		return "\x00"
	}
	return p.Name
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// TaskRecord is a task with what the store knows about it beyond the
// protocol's fields: its agent and times.
type TaskRecord struct {
	Task      *a2a.Task
	Agent     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Recent lists tasks of every agent (or f's), most recently updated
// first, with their live state: the daemon's own view for its dashboard,
// not scoped to one agent's endpoint. It returns the total that match.
func (s *TaskStore) Recent(ctx context.Context, f store.TaskFilter) ([]TaskRecord, int, error) {
	recs, total, err := s.st.ListTasks(ctx, f)
	if err != nil {
		return nil, 0, fmt.Errorf("list tasks: %w", err)
	}
	out := make([]TaskRecord, 0, len(recs))
	for _, rec := range recs {
		tr := TaskRecord{Agent: rec.Agent, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
		s.mu.Lock()
		if lt, ok := s.live[a2a.TaskID(rec.ID)]; ok {
			tr.Task = cloneTask(lt.task)
		}
		s.mu.Unlock()
		if tr.Task == nil {
			tr.Task = new(a2a.Task)
			if err := json.Unmarshal(rec.Data, tr.Task); err != nil {
				return nil, 0, fmt.Errorf("decode task %s: %w", rec.ID, err)
			}
		}
		out = append(out, tr)
	}
	return out, total, nil
}
