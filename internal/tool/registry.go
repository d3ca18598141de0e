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
	mu    sync.Mutex
	fixed map[string]Tool
	// sorted is fixed's tools sorted by name, built by List and dropped by
	// Add: every model call lists the tools, and re-sorting the fixed ones
	// each time was 3% of an A2A send's allocations. The sources'
	// tools are not cached: a source may change its set a moment before
	// it calls Changed, and List must show the set of the moment.
	sorted   []Tool
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
	r.sorted = nil
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

// List returns every tool, sorted by name. The caller owns the slice.
func (r *Registry) List() []Tool {
	r.mu.Lock()
	fixed := r.sorted
	if fixed == nil {
		fixed = make([]Tool, 0, len(r.fixed))
		for _, t := range r.fixed {
			fixed = append(fixed, t)
		}
		slices.SortFunc(fixed, byName)
		r.sorted = fixed
	}
	// AddSource only appends: the elements up to len stay as they are.
	sources := r.sources
	r.mu.Unlock()
	var extra []Tool
	for _, s := range sources {
		extra = append(extra, s.Tools()...)
	}
	if len(extra) == 0 {
		return slices.Clone(fixed)
	}
	// Merge the sources' tools into the sorted fixed ones. The sort is
	// stable, so of several tools of one name the first source's comes
	// first and wins; a fixed tool wins over all of them.
	slices.SortStableFunc(extra, byName)
	out := make([]Tool, 0, len(fixed)+len(extra))
	i := 0
	prev := ""
	for k, t := range extra {
		name := t.Spec().Name
		if k > 0 && name == prev {
			continue
		}
		prev = name
		for i < len(fixed) && fixed[i].Spec().Name < name {
			out = append(out, fixed[i])
			i++
		}
		if i < len(fixed) && fixed[i].Spec().Name == name {
			continue
		}
		out = append(out, t)
	}
	return append(out, fixed[i:]...)
}

func byName(a, b Tool) int { return strings.Compare(a.Spec().Name, b.Spec().Name) }

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
