package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// fakeMemory implements the store.MemoryStore contract in memory.
type fakeMemory struct {
	mu   sync.Mutex
	mems []store.Memory
	seq  int
	fail error
}

var _ MemoryStore = (*fakeMemory)(nil)

func (f *fakeMemory) PutMemory(_ context.Context, m store.Memory) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.seq++
	// A logical clock keeps "most recent first" deterministic.
	m.UpdatedAt = time.Unix(int64(f.seq), 0)
	for i, old := range f.mems {
		if old.Agent == m.Agent && old.Key == m.Key {
			m.CreatedAt = old.CreatedAt
			f.mems[i] = m
			return nil
		}
	}
	f.mems = append(f.mems, m)
	return nil
}

func (f *fakeMemory) RecallMemory(_ context.Context, agent, query string, limit int) ([]store.Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	q := strings.ToLower(query)
	var out []store.Memory
	for _, m := range f.mems {
		if m.Agent == agent && (strings.Contains(strings.ToLower(m.Key), q) || strings.Contains(strings.ToLower(m.Value), q)) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b store.Memory) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func memCall(t *testing.T, tl tool.Tool, agent string, args any) (tool.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	return tl.Call(t.Context(), &tool.Call{Agent: agent, Args: raw})
}

func TestMemoryTools(t *testing.T) {
	fm := &fakeMemory{}
	tools := MemoryTools(fm)
	put := toolByName(t, tools, "memory_store")
	recall := toolByName(t, tools, "memory_recall")

	steps := []struct {
		name    string
		tool    tool.Tool
		agent   string
		args    map[string]any
		want    string // exact content
		contain string
		isErr   bool
	}{
		{"store", put, "alice", map[string]any{"key": "user.tz", "value": "Europe/Paris"}, `remembered "user.tz"`, "", false},
		{"store second", put, "alice", map[string]any{"key": "lang", "value": "Go"}, `remembered "lang"`, "", false},
		{"other agent", put, "bob", map[string]any{"key": "user.tz", "value": "Asia/Tokyo"}, `remembered "user.tz"`, "", false},
		{"recall all, newest first", recall, "alice", map[string]any{}, "- lang: Go\n- user.tz: Europe/Paris", "", false},
		{"recall is per agent", recall, "bob", map[string]any{}, "- user.tz: Asia/Tokyo", "", false},
		{"replace", put, "alice", map[string]any{"key": "user.tz", "value": "America/New_York"}, `remembered "user.tz"`, "", false},
		{"recall after replace", recall, "alice", map[string]any{}, "- user.tz: America/New_York\n- lang: Go", "", false},
		{"query", recall, "alice", map[string]any{"query": "AMERICA"}, "- user.tz: America/New_York", "", false},
		{"limit", recall, "alice", map[string]any{"limit": 1}, "- user.tz: America/New_York", "", false},
		{"no match", recall, "alice", map[string]any{"query": "zzz"}, `no memories match "zzz"`, "", false},
		{"nothing stored", recall, "carol", map[string]any{}, "no memories stored yet", "", false},
		{"empty key", put, "alice", map[string]any{"key": " ", "value": "v"}, "", "key is required", true},
		{"empty value", put, "alice", map[string]any{"key": "k"}, "", "value is required", true},
		{"long key", put, "alice", map[string]any{"key": strings.Repeat("k", maxMemoryKey+1), "value": "v"}, "", "longer than", true},
		{"long value", put, "alice", map[string]any{"key": "k", "value": strings.Repeat("v", maxMemoryValue+1)}, "", "longer than", true},
		{"negative limit", recall, "alice", map[string]any{"limit": -1}, "", "positive", true},
		{"bad args", recall, "alice", map[string]any{"limit": "ten"}, "", "invalid arguments", true},
	}
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			res, err := memCall(t, tt.tool, tt.agent, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isErr {
				t.Errorf("IsError = %v: %s", res.IsError, res.Content)
			}
			if tt.want != "" && res.Content != tt.want {
				t.Errorf("content %q, want %q", res.Content, tt.want)
			}
			if tt.contain != "" && !strings.Contains(res.Content, tt.contain) {
				t.Errorf("content %q lacks %q", res.Content, tt.contain)
			}
		})
	}

	t.Run("structured recall", func(t *testing.T) {
		res, err := memCall(t, recall, "bob", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Memories []recalled `json:"memories"`
		}
		if err := json.Unmarshal(res.Structured, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Memories) != 1 || out.Memories[0].Key != "user.tz" || out.Memories[0].Value != "Asia/Tokyo" {
			t.Errorf("structured %+v", out)
		}
	})
	t.Run("store failure is a Go error", func(t *testing.T) {
		fm.fail = errors.New("disk on fire")
		defer func() { fm.fail = nil }()
		if _, err := memCall(t, put, "alice", map[string]any{"key": "k", "value": "v"}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Errorf("err = %v", err)
		}
		if _, err := memCall(t, recall, "alice", map[string]any{}); err == nil {
			t.Error("recall swallowed the store error")
		}
	})
	t.Run("no agent", func(t *testing.T) {
		if _, err := memCall(t, put, "", map[string]any{"key": "k", "value": "v"}); err == nil {
			t.Error("stored without an agent")
		}
	})
}
