package agent

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/principal"
)

// RunInfo describes a run in progress or recently finished: what the
// dashboard shows as "recent runs", whatever protocol started them. Model
// errors are never in the audit log (no tool was called), so this is where
// an operator sees them.
type RunInfo struct {
	ID        string `json:"id"`
	Agent     string `json:"agent"`
	SessionID string `json:"session_id,omitempty"`
	Origin    string `json:"origin,omitempty"`
	Principal string `json:"principal,omitempty"`
	// Depth is above 0 for runs another agent delegated (agent_send).
	Depth      int        `json:"depth,omitempty"`
	Started    time.Time  `json:"started"`
	Ended      *time.Time `json:"ended,omitempty"`
	Running    bool       `json:"running"`
	StopReason StopReason `json:"stop_reason,omitempty"`
	Error      string     `json:"error,omitempty"`
	Iterations int        `json:"iterations,omitempty"`
	// ToolCalls counts the calls the run made so far.
	ToolCalls int `json:"tool_calls,omitempty"`
	// InputTokens and OutputTokens are what the run's model calls used,
	// as the provider reported them (set when the run ends).
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
}

// maxRecentRuns bounds the finished runs kept in memory.
const maxRecentRuns = 200

// runLog keeps the runs in progress and the last finished ones, in memory
// only: a restart starts a fresh log (the sessions and the audit log are
// the durable record).
type runLog struct {
	mu       sync.Mutex
	active   map[string]*RunInfo
	cancels  map[string]context.CancelCauseFunc // of the active runs
	finished []RunInfo                          // oldest first

	watchers map[int]func(RunInfo)
	nextW    int
}

func newRunLog() *runLog {
	return &runLog{active: map[string]*RunInfo{}, cancels: map[string]context.CancelCauseFunc{}, watchers: map[int]func(RunInfo){}}
}

func (l *runLog) start(req *RunRequest, cancel context.CancelCauseFunc) string {
	id := NewID()
	ri := &RunInfo{ID: id, Agent: req.Agent, SessionID: req.SessionID, Origin: req.Origin,
		Principal: principal.NameOf(req.Principal), Depth: req.Depth, Started: time.Now().UTC(), Running: true}
	l.mu.Lock()
	l.active[id] = ri
	l.cancels[id] = cancel
	fs := l.watching()
	info := *ri
	l.mu.Unlock()
	tell(fs, info)
	return id
}

// watching returns the watchers; l.mu is held.
func (l *runLog) watching() []func(RunInfo) {
	if len(l.watchers) == 0 {
		return nil
	}
	fs := make([]func(RunInfo), 0, len(l.watchers))
	for _, f := range l.watchers {
		fs = append(fs, f)
	}
	return fs
}

// tell calls the watchers, without the log's lock: a watcher may read
// the runs.
func tell(fs []func(RunInfo), ri RunInfo) {
	for _, f := range fs {
		f(ri)
	}
}

// OnRun registers f, called after a run starts and after it ends with
// the run as Runs would list it then (the dashboard's change stream
// hears of runs this way rather than by polling Runs); the returned
// function unregisters it. f must not block: it runs on the run's path.
func (k *Kernel) OnRun(f func(RunInfo)) (cancel func()) {
	l := k.runs
	l.mu.Lock()
	id := l.nextW
	l.nextW++
	l.watchers[id] = f
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.watchers, id)
		l.mu.Unlock()
	}
}

// observe updates a run from one of its events.
func (l *runLog) observe(id string, e Event) {
	if e.Type != EventSession && e.Type != EventToolStarted {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ri := l.active[id]
	if ri == nil {
		return
	}
	switch e.Type {
	case EventSession:
		ri.SessionID = e.SessionID
	case EventToolStarted:
		ri.ToolCalls++
	}
}

func (l *runLog) finish(id string, res *RunResult, err error) {
	l.mu.Lock()
	ri := l.active[id]
	if ri == nil {
		l.mu.Unlock()
		return
	}
	delete(l.active, id)
	delete(l.cancels, id)
	now := time.Now().UTC()
	ri.Ended, ri.Running = &now, false
	if res != nil {
		ri.StopReason, ri.Iterations = res.StopReason, res.Iterations
		ri.InputTokens, ri.OutputTokens = res.Usage.InputTokens, res.Usage.OutputTokens
		if res.SessionID != "" {
			ri.SessionID = res.SessionID
		}
	}
	if err != nil {
		ri.Error = err.Error()
	}
	l.finished = append(l.finished, *ri)
	if n := len(l.finished) - maxRecentRuns; n > 0 {
		l.finished = slices.Delete(l.finished, 0, n)
	}
	fs := l.watching()
	info := *ri
	l.mu.Unlock()
	tell(fs, info)
}

// Runs returns the runs in progress, then the recently finished ones,
// newest first in each group.
func (k *Kernel) Runs() []RunInfo {
	l := k.runs
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RunInfo, 0, len(l.active)+len(l.finished))
	for _, ri := range l.active {
		out = append(out, *ri)
	}
	slices.SortFunc(out, func(a, b RunInfo) int { return b.Started.Compare(a.Started) })
	for i := len(l.finished) - 1; i >= 0; i-- {
		out = append(out, l.finished[i])
	}
	return out
}

// Drain makes the kernel refuse new runs with ErrShuttingDown, for a
// daemon that is stopping: the runs under way go on (and the runs they
// delegate to, agent_send, which finish their turn). It cannot be undone.
func (k *Kernel) Drain() { k.draining.Store(true) }

// Draining reports whether Drain was called: edges refuse new work
// before starting any of it.
func (k *Kernel) Draining() bool { return k.draining.Load() }

// Active is the number of runs under way.
func (k *Kernel) Active() int {
	k.runs.mu.Lock()
	defer k.runs.mu.Unlock()
	return len(k.runs.active)
}

// FailRuns ends every run under way with cause: a run cancelled so
// returns cause as its error when it is ErrShuttingDown (the run failed,
// through no fault of its client), rather than StopCancelled.
func (k *Kernel) FailRuns(cause error) int {
	k.runs.mu.Lock()
	defer k.runs.mu.Unlock()
	for _, cancel := range k.runs.cancels {
		cancel(cause)
	}
	return len(k.runs.cancels)
}
