package tool

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// mutableSource is a source whose set a test changes at will, without
// telling the registry (as the MCP manager does for a moment before its
// notification goroutine calls Changed).
type mutableSource struct {
	mu    sync.Mutex
	tools []Tool
}

func (s *mutableSource) Tools() []Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

func (s *mutableSource) set(tools ...Tool) {
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
}

// listed describes a List as "name/origin" items.
func listed(tools []Tool) string {
	var b strings.Builder
	for i, t := range tools {
		if i > 0 {
			b.WriteByte(' ')
		}
		sp := t.Spec()
		fmt.Fprintf(&b, "%s/%s", sp.Name, sp.Origin)
	}
	return b.String()
}

// TestRegistryListFollowsChanges checks that List, which keeps the fixed
// tools sorted between calls, shows every change at once: fixed tools
// added or replaced after a List, and sources' sets that changed with no
// Changed call.
func TestRegistryListFollowsChanges(t *testing.T) {
	reg := NewRegistry()
	src := &mutableSource{}
	reg.AddSource(src)
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"empty", func() {}, ""},
		{"fixed tools", func() { reg.Add(newTool("m", OriginBuiltin), newTool("c", OriginBuiltin)) }, "c/builtin m/builtin"},
		{"a fixed tool added after a List", func() { reg.Add(newTool("a", OriginBuiltin)) }, "a/builtin c/builtin m/builtin"},
		{"a fixed tool replaced", func() { reg.Add(newTool("c", OriginEditor)) }, "a/builtin c/editor m/builtin"},
		{"source tools merged in order", func() { src.set(newTool("z", OriginMCP), newTool("b", OriginMCP), newTool("n", OriginMCP)) }, "a/builtin b/mcp c/editor m/builtin n/mcp z/mcp"},
		{"a fixed tool wins over a source's", func() { src.set(newTool("m", OriginMCP), newTool("d", OriginMCP)) }, "a/builtin c/editor d/mcp m/builtin"},
		{"source emptied", func() { src.set() }, "a/builtin c/editor m/builtin"},
	}
	for _, st := range steps {
		st.do()
		if got := listed(reg.List()); got != st.want {
			t.Fatalf("%s: List = %q, want %q", st.name, got, st.want)
		}
	}
	// The caller owns the slice: changing it changes no later List.
	l := reg.List()
	l[0] = newTool("intruder", OriginMCP)
	if got := listed(reg.List()); got != "a/builtin c/editor m/builtin" {
		t.Fatalf("List after the caller changed its slice = %q", got)
	}
}

// TestRegistryListMatchesReference compares List with the straightforward
// merge (fixed tools first, then each source's new names, sorted) over
// random registries with clashing names.
func TestRegistryListMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	name := func() string { return string(rune('a' + rng.IntN(8))) }
	for round := range 300 {
		reg := NewRegistry()
		var fixed []Tool
		for range rng.IntN(5) {
			tl := newTool(name(), OriginBuiltin)
			fixed = append(fixed, tl)
			reg.Add(tl)
			if rng.IntN(2) == 0 {
				reg.List() // cache the sorted fixed tools between Adds
			}
		}
		var sources [][]Tool
		for s := range rng.IntN(4) {
			var tools []Tool
			for range rng.IntN(5) {
				tools = append(tools, newTool(name(), Origin(fmt.Sprintf("src%d", s))))
			}
			sources = append(sources, tools)
			reg.AddSource(sourceFunc(func() []Tool { return tools }))
		}
		want := referenceList(fixed, sources)
		if got := reg.List(); !slices.Equal(got, want) {
			t.Fatalf("round %d: List = %q, want %q", round, listed(got), listed(want))
		}
	}
}

// referenceList is what List returns, computed the plain way: the last
// fixed tool of a name, else the first source's, sorted by name.
func referenceList(fixed []Tool, sources [][]Tool) []Tool {
	byName := map[string]Tool{}
	for _, t := range fixed {
		byName[t.Spec().Name] = t
	}
	seen := map[string]bool{}
	for n := range byName {
		seen[n] = true
	}
	for _, tools := range sources {
		for _, t := range tools {
			if n := t.Spec().Name; !seen[n] {
				seen[n] = true
				byName[n] = t
			}
		}
	}
	out := make([]Tool, 0, len(byName))
	for _, t := range byName {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Spec().Name, b.Spec().Name) })
	return out
}

func BenchmarkRegistryList(b *testing.B) {
	reg := NewRegistry()
	for i := range 20 {
		reg.Add(newTool(fmt.Sprintf("builtin_%02d", i), OriginBuiltin))
	}
	reg.AddSource(sourceFunc(func() []Tool { return []Tool{newTool("a2a_send", OriginA2A), newTool("a2a_discover", OriginA2A)} }))
	b.ReportAllocs()
	for b.Loop() {
		reg.List()
	}
}
