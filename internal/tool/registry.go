package tool

import (
	"slices"
	"strings"
	"sync"
)

// Registry merges fixed tools (built-ins) with changing sources (MCP
// connections, the A2A client) into one name space. A fixed tool wins over a
// source's tool of the same name, so an upstream can never shadow a
// built-in.
type Registry struct {
	mu       sync.Mutex
	fixed    map[string]Tool
	sources  []Source
	watchers map[int]func()
	next     int
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{fixed: map[string]Tool{}, watchers: map[int]func(){}}
}

// Add registers fixed tools. A later tool with the same name replaces an
// earlier one.
func (r *Registry) Add(tools ...Tool) {
	r.mu.Lock()
	for _, t := range tools {
		r.fixed[t.Spec().Name] = t
	}
	r.mu.Unlock()
	r.Changed()
}

// AddSource registers a changing source of tools. The source should call
// Changed when its set changes.
func (r *Registry) AddSource(s Source) {
	r.mu.Lock()
	r.sources = append(r.sources, s)
	r.mu.Unlock()
	r.Changed()
}

// List returns every tool, sorted by name.
func (r *Registry) List() []Tool {
	r.mu.Lock()
	out := make([]Tool, 0, len(r.fixed))
	seen := make(map[string]bool, len(r.fixed))
	for name, t := range r.fixed {
		out = append(out, t)
		seen[name] = true
	}
	sources := slices.Clone(r.sources)
	r.mu.Unlock()
	for _, s := range sources {
		for _, t := range s.Tools() {
			name := t.Spec().Name
			if !seen[name] {
				seen[name] = true
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Spec().Name, b.Spec().Name) })
	return out
}

// Lookup returns the tool called name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.Lock()
	t, ok := r.fixed[name]
	sources := slices.Clone(r.sources)
	r.mu.Unlock()
	if ok {
		return t, true
	}
	for _, s := range sources {
		for _, t := range s.Tools() {
			if t.Spec().Name == name {
				return t, true
			}
		}
	}
	return nil, false
}

// OnChange registers f to be called after the tool set changes; the
// returned function unregisters it. f must not block.
func (r *Registry) OnChange(f func()) (cancel func()) {
	r.mu.Lock()
	id := r.next
	r.next++
	r.watchers[id] = f
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.watchers, id)
		r.mu.Unlock()
	}
}

// Changed tells watchers that the tool set changed.
func (r *Registry) Changed() {
	r.mu.Lock()
	fs := make([]func(), 0, len(r.watchers))
	for _, f := range r.watchers {
		fs = append(fs, f)
	}
	r.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
