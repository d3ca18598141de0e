package daemon

import (
	"context"
	"sync"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// The dashboard's change stream (GET /api/events) is fed here from the
// components' own notifications: the kernel's runs, the approval queue,
// the MCP client manager's server states, the tool registry, the agent
// directory, the audit log's appends and the A2A task store. Each feed
// turns a notification into a small httpapi.Change; none blocks.

// feedChanges subscribes d.Changes to the components built so far and
// returns what unsubscribes them. The A2A tasks are fed by mountA2A
// (TaskStoreOptions.OnState).
func (d *Daemon) feedChanges() (stop func() error) {
	c := d.Changes
	var cancels []func()
	cancels = append(cancels, d.Kernel.OnRun(func(ri agent.RunInfo) {
		what := "started"
		switch {
		case ri.Running:
		case ri.Error != "":
			what = "failed"
		default:
			what = "ended"
		}
		c.Publish(httpapi.Change{Topic: httpapi.TopicRuns, What: what, ID: ri.ID, Owner: ri.Principal})
	}))
	ap := &approvalFeed{c: c, q: d.Approvals, seen: map[string]string{}}
	cancels = append(cancels, d.Approvals.OnChange(ap.changed))
	cancels = append(cancels, d.Tools.OnChange(func() { c.Publish(httpapi.Change{Topic: httpapi.TopicTools}) }))
	cancels = append(cancels, d.Kernel.Agents().OnChange(func() { c.Publish(httpapi.Change{Topic: httpapi.TopicAgents}) }))
	mf := &mcpFeed{c: c, d: d, seen: map[string]mcpSeen{}}
	d.MCP.OnStatusChanged(mf.changed) // lives as long as the manager
	return func() error {
		for _, f := range cancels {
			f()
		}
		return nil
	}
}

// approvalFeed tells of requests entering and leaving the queue, each to
// its run's principal (and admins): the queue's own notification says
// only that something changed.
type approvalFeed struct {
	c    *httpapi.Changes
	q    *tool.Approvals
	mu   sync.Mutex
	seen map[string]string // pending id → principal
}

func (f *approvalFeed) changed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := map[string]string{}
	for _, p := range f.q.Pending() {
		now[p.ID] = p.Principal
		if _, ok := f.seen[p.ID]; !ok {
			f.c.Publish(httpapi.Change{Topic: httpapi.TopicApprovals, What: "waiting", ID: p.ID, Owner: p.Principal})
		}
	}
	for id, who := range f.seen {
		if _, ok := now[id]; !ok {
			f.c.Publish(httpapi.Change{Topic: httpapi.TopicApprovals, What: "decided", ID: id, Owner: who})
		}
	}
	f.seen = now
}

// mcpFeed tells of upstream servers changing state: the manager's
// notification is coalesced, so the states are compared with the last
// ones seen. A server that dropped and came back between two looks is
// told of as "restarted" (its reconnect count moved).
type mcpFeed struct {
	c    *httpapi.Changes
	d    *Daemon
	mu   sync.Mutex
	seen map[string]mcpSeen
}

type mcpSeen struct {
	state      string
	reconnects int
	lastError  string
}

func (f *mcpFeed) changed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := map[string]mcpSeen{}
	for _, s := range f.d.MCP.Status() {
		v := mcpSeen{state: s.State, reconnects: s.Reconnects, lastError: s.LastError}
		now[s.Name] = v
		old, ok := f.seen[s.Name]
		if ok && old == v {
			continue
		}
		what := s.State
		if ok && old.state == v.state && v.reconnects > old.reconnects {
			what = "restarted"
		}
		f.c.Publish(httpapi.Change{Topic: httpapi.TopicMCP, What: what, ID: s.Name})
	}
	for name := range f.seen {
		if _, ok := now[name]; !ok {
			f.c.Publish(httpapi.Change{Topic: httpapi.TopicMCP, What: "removed", ID: name})
		}
	}
	f.seen = now
}

// auditFeed tells of each audit record written, to the principal that
// made the call (and admins); repeats of one tool and outcome merge in
// a slow stream (httpapi.Changes).
type auditFeed struct {
	tool.AuditLog
	c *httpapi.Changes
}

func (a auditFeed) AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error) {
	id, err := a.AuditLog.AppendAudit(ctx, r)
	if err == nil {
		a.c.Publish(httpapi.Change{Topic: httpapi.TopicAudit, What: r.Outcome, ID: r.Tool, Owner: r.Principal})
	}
	return id, err
}
