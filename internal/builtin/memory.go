package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// MemoryStore is the part of store.MemoryStore the memory tools use.
type MemoryStore interface {
	PutMemory(ctx context.Context, m store.Memory) error
	RecallMemory(ctx context.Context, agent, query string, limit int) ([]store.Memory, error)
}

var _ MemoryStore = (store.MemoryStore)(nil)

const (
	maxMemoryKey      = 200
	maxMemoryValue    = 16 << 10
	defaultRecallSize = 20
	maxRecallSize     = 100
)

// MemoryTools returns memory_store and memory_recall, which keep facts
// per agent (tool.Call.Agent) across sessions.
func MemoryTools(s MemoryStore) []tool.Tool {
	return []tool.Tool{memoryStore(s), memoryRecall(s)}
}

func memoryStore(s MemoryStore) tool.Tool {
	return &funcTool{
		spec: tool.Spec{
			Name: "memory_store",
			Description: "Remember a fact for later sessions under a short key. Storing under an existing key replaces its value. " +
				"Use it for durable facts (preferences, decisions, names), not for scratch notes.",
			InputSchema: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "key": {"type": "string", "maxLength": %d, "description": "Short identifier, e.g. \"user.timezone\"."},
    "value": {"type": "string", "maxLength": %d, "description": "The fact to remember."}
  },
  "required": ["key", "value"],
  "additionalProperties": false
}`, maxMemoryKey, maxMemoryValue)),
			Origin: tool.OriginBuiltin,
		},
		call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
			var args struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			}
			if err := decodeArgs(c.Args, &args); err != nil {
				return errorf("%v", err), nil
			}
			args.Key = strings.TrimSpace(args.Key)
			switch {
			case args.Key == "":
				return errorf("key is required"), nil
			case utf8.RuneCountInString(args.Key) > maxMemoryKey:
				return errorf("key is longer than %d characters", maxMemoryKey), nil
			case args.Value == "":
				return errorf("value is required"), nil
			case len(args.Value) > maxMemoryValue:
				return errorf("value is longer than %d bytes; store a summary", maxMemoryValue), nil
			}
			if c.Agent == "" {
				return tool.Result{}, fmt.Errorf("memory_store: call has no agent")
			}
			now := time.Now().UTC()
			if err := s.PutMemory(ctx, store.Memory{Agent: c.Agent, Key: args.Key, Value: args.Value, CreatedAt: now, UpdatedAt: now}); err != nil {
				return tool.Result{}, fmt.Errorf("memory_store: put %q: %w", args.Key, err)
			}
			return tool.Result{Content: fmt.Sprintf("remembered %q", args.Key)}, nil
		},
	}
}

// recalled is one memory in memory_recall's structured result.
type recalled struct {
	Key       string    `json:"key"`
	Value     string    `json:"value"`
	UpdatedAt time.Time `json:"updated_at"`
}

func memoryRecall(s MemoryStore) tool.Tool {
	return &funcTool{
		spec: tool.Spec{
			Name: "memory_recall",
			Description: "Recall facts you stored with memory_store, most recently updated first. " +
				"With a query, returns only memories whose key or value contains it (case-insensitive).",
			InputSchema: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "description": "Text to look for in keys and values. Omit to list all memories."},
    "limit": {"type": "integer", "minimum": 1, "maximum": %d, "description": "Maximum number of memories to return. Default %d."}
  },
  "additionalProperties": false
}`, maxRecallSize, defaultRecallSize)),
			Origin:   tool.OriginBuiltin,
			ReadOnly: true,
		},
		call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
			var args struct {
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}
			if err := decodeArgs(c.Args, &args); err != nil {
				return errorf("%v", err), nil
			}
			if args.Limit < 0 {
				return errorf("limit must be positive"), nil
			}
			limit := args.Limit
			if limit == 0 {
				limit = defaultRecallSize
			}
			limit = min(limit, maxRecallSize)
			if c.Agent == "" {
				return tool.Result{}, fmt.Errorf("memory_recall: call has no agent")
			}
			ms, err := s.RecallMemory(ctx, c.Agent, strings.TrimSpace(args.Query), limit)
			if err != nil {
				return tool.Result{}, fmt.Errorf("memory_recall: %w", err)
			}
			if len(ms) > limit {
				ms = ms[:limit]
			}
			if len(ms) == 0 {
				if args.Query != "" {
					return tool.Result{Content: fmt.Sprintf("no memories match %q", args.Query)}, nil
				}
				return tool.Result{Content: "no memories stored yet"}, nil
			}
			var b strings.Builder
			out := make([]recalled, 0, len(ms))
			for _, m := range ms {
				fmt.Fprintf(&b, "- %s: %s\n", m.Key, m.Value)
				out = append(out, recalled{Key: m.Key, Value: m.Value, UpdatedAt: m.UpdatedAt})
			}
			return tool.Result{
				Content:    strings.TrimSuffix(b.String(), "\n"),
				Structured: structured(map[string]any{"memories": out}),
			}, nil
		},
	}
}
