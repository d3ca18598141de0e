package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/store"
)

// Errors of the agent directory.
var (
	ErrAgentNotFound = errors.New("agent not found")
	// ErrReadOnly is returned when changing an agent defined in the
	// config file: edit the file instead.
	ErrReadOnly = errors.New("agent is defined in the config file")
)

// Entry is an agent and where it is defined.
type Entry struct {
	Manifest manifest.Manifest `json:"manifest"`
	// Source is "config" (read-only) or "api" (created at runtime).
	Source string `json:"source"`
}

// Agents is the directory of agents: those of the config file, read-only
// (a config reload replaces them whole: SetFixed), and those created
// through the API, persisted.
type Agents struct {
	st store.AgentStore

	mu       sync.Mutex
	fixed    []manifest.Manifest
	watchers map[int]func()
	next     int
}

// NewAgents returns a directory over the config's agents and st.
func NewAgents(fromConfig []manifest.Manifest, st store.AgentStore) *Agents {
	return &Agents{fixed: slices.Clone(fromConfig), st: st, watchers: map[int]func(){}}
}

// List returns every agent: config agents first in file order, then API
// agents by name.
func (a *Agents) List(ctx context.Context) ([]Entry, error) {
	fixed := a.config()
	out := make([]Entry, 0, len(fixed))
	for _, m := range fixed {
		out = append(out, Entry{Manifest: m, Source: "config"})
	}
	recs, err := a.st.ListAgents(ctx)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	slices.SortFunc(recs, func(x, y store.Agent) int { return strings.Compare(x.Name, y.Name) })
	for _, r := range recs {
		if slices.ContainsFunc(fixed, func(m manifest.Manifest) bool { return m.Name == r.Name }) {
			continue
		}
		var m manifest.Manifest
		if err := json.Unmarshal(r.Manifest, &m); err != nil {
			return nil, fmt.Errorf("decode stored agent %q: %w", r.Name, err)
		}
		out = append(out, Entry{Manifest: m, Source: "api"})
	}
	return out, nil
}

// Get returns the agent called name.
func (a *Agents) Get(ctx context.Context, name string) (Entry, error) {
	for _, m := range a.config() {
		if m.Name == name {
			return Entry{Manifest: m, Source: "config"}, nil
		}
	}
	r, err := a.st.GetAgent(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return Entry{}, fmt.Errorf("%w: %q", ErrAgentNotFound, name)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("get agent %q: %w", name, err)
	}
	var m manifest.Manifest
	if err := json.Unmarshal(r.Manifest, &m); err != nil {
		return Entry{}, fmt.Errorf("decode stored agent %q: %w", name, err)
	}
	return Entry{Manifest: m, Source: "api"}, nil
}

// Put creates or replaces an API agent after validating it.
func (a *Agents) Put(ctx context.Context, m manifest.Manifest) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if a.isFixed(m.Name) {
		return fmt.Errorf("%w: %q", ErrReadOnly, m.Name)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode agent %q: %w", m.Name, err)
	}
	now := time.Now().UTC()
	if err := a.st.PutAgent(ctx, store.Agent{Name: m.Name, Manifest: data, CreatedAt: now, UpdatedAt: now}); err != nil {
		return fmt.Errorf("store agent %q: %w", m.Name, err)
	}
	a.changed()
	return nil
}

// Delete removes an API agent.
func (a *Agents) Delete(ctx context.Context, name string) error {
	if a.isFixed(name) {
		return fmt.Errorf("%w: %q", ErrReadOnly, name)
	}
	err := a.st.DeleteAgent(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %q", ErrAgentNotFound, name)
	}
	if err != nil {
		return fmt.Errorf("delete agent %q: %w", name, err)
	}
	a.changed()
	return nil
}

// OnChange registers f, called after an agent is created, updated or
// deleted; the returned function unregisters it. f must not block.
func (a *Agents) OnChange(f func()) (cancel func()) {
	a.mu.Lock()
	id := a.next
	a.next++
	a.watchers[id] = f
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		delete(a.watchers, id)
		a.mu.Unlock()
	}
}

// Changed tells the directory that its agents changed elsewhere: another
// replica sharing the store created, updated or deleted one. The
// directory reads the store on every call, so only its watchers need
// telling; they run as after a change made here.
func (a *Agents) Changed() { a.changed() }

func (a *Agents) changed() {
	a.mu.Lock()
	fs := make([]func(), 0, len(a.watchers))
	for _, f := range a.watchers {
		fs = append(fs, f)
	}
	a.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// SetFixed replaces the config file's agents (a reload) and tells the
// watchers, as after any change: runs already started keep the manifest
// they began with; the next run of an agent uses its new one.
func (a *Agents) SetFixed(ms []manifest.Manifest) {
	a.mu.Lock()
	a.fixed = slices.Clone(ms)
	a.mu.Unlock()
	a.changed()
}

// config returns the config file's agents; the slice is never changed
// in place (SetFixed replaces it), so callers may range over it unlocked.
func (a *Agents) config() []manifest.Manifest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fixed
}

func (a *Agents) isFixed(name string) bool {
	for _, m := range a.config() {
		if m.Name == name {
			return true
		}
	}
	return false
}
