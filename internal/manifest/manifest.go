// Package manifest defines an agent's manifest: what model it uses, what it
// may call and how it is exposed. It is shared vocabulary between the
// config file, the store, the HTTP API and the agent loop.
package manifest

import (
	"errors"
	"fmt"
	"path"
	"regexp"
)

// Kinds of agent.
const (
	// KindLLM is an agent driven by a language model (the default).
	KindLLM = "llm"
	// KindMCPProxy is the built-in model-free agent that runs MCP tool
	// calls described in A2A data parts.
	KindMCPProxy = "mcp_proxy"
)

// Manifest describes one agent.
type Manifest struct {
	Name        string `toml:"name" json:"name"`
	Description string `toml:"description" json:"description,omitempty"`
	Kind        string `toml:"kind" json:"kind,omitempty"` // KindLLM when empty
	// Provider names a [providers.NAME] entry.
	Provider    string   `toml:"provider" json:"provider,omitempty"`
	Model       string   `toml:"model" json:"model,omitempty"`
	Temperature *float64 `toml:"temperature" json:"temperature,omitempty"`
	MaxTokens   int      `toml:"max_tokens" json:"max_tokens,omitempty"`
	// Reasoning asks a reasoning model to think first: "low", "medium" or
	// "high" effort; empty leaves the provider's default.
	Reasoning     string `toml:"reasoning" json:"reasoning,omitempty"`
	MaxIterations int    `toml:"max_iterations" json:"max_iterations,omitempty"` // tool rounds per run; 0 = default
	TokenBudget   int    `toml:"token_budget" json:"token_budget,omitempty"`     // total tokens per run; 0 = unlimited
	SystemPrompt  string `toml:"system_prompt" json:"system_prompt,omitempty"`
	// Tools are capability patterns (globs such as "file_*",
	// "mcp_github_*"); a tool is offered only if it matches one.
	Tools []string `toml:"tools" json:"tools,omitempty"`
	// MCPServers limits which upstream MCP servers' tools the agent sees;
	// empty means every server its Tools patterns match.
	MCPServers []string `toml:"mcp_servers" json:"mcp_servers,omitempty"`
	Skills     []Skill  `toml:"skills" json:"skills,omitempty"`
	Expose     Exposure `toml:"expose" json:"expose"`
	// Workspace is the directory file tools are confined to; relative
	// paths are under AGENTD_HOME/workspaces.
	Workspace string `toml:"workspace" json:"workspace,omitempty"`
	// Images says the model accepts image input.
	Images bool `toml:"images" json:"images,omitempty"`
}

// Skill is an A2A Agent Card skill.
type Skill struct {
	ID          string   `toml:"id" json:"id"`
	Name        string   `toml:"name" json:"name"`
	Description string   `toml:"description" json:"description,omitempty"`
	Tags        []string `toml:"tags" json:"tags,omitempty"`
	Examples    []string `toml:"examples" json:"examples,omitempty"`
}

// Exposure says which protocols serve the agent.
type Exposure struct {
	MCP bool `toml:"mcp" json:"mcp"`
	A2A bool `toml:"a2a" json:"a2a"`
}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$`)

// ValidName reports whether s can name an agent, an MCP server or a
// provider: 1-64 letters, digits, '-' or '_', not starting with '-' or '_'.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// ValidReasoning reports whether s is a reasoning effort a manifest may
// name (or empty).
func ValidReasoning(s string) bool {
	switch s {
	case "", "low", "medium", "high":
		return true
	}
	return false
}

// Validate reports the first problem with m, naming the field.
func (m *Manifest) Validate() error {
	// Every problem, one "field: what" line each, so that a form can mark
	// each field at once instead of one per submit.
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !ValidName(m.Name) {
		bad("name: %q is not a valid agent name (1-64 letters, digits, '-' or '_')", m.Name)
	}
	switch m.Kind {
	case "", KindLLM:
		if m.Provider == "" {
			bad("provider: required for agent %q", m.Name)
		}
		if m.Model == "" {
			bad("model: required for agent %q", m.Name)
		}
	case KindMCPProxy:
	default:
		bad("kind: %q is not one of %q, %q", m.Kind, KindLLM, KindMCPProxy)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max_iterations", m.MaxIterations}, {"max_tokens", m.MaxTokens}, {"token_budget", m.TokenBudget}} {
		if f.v < 0 {
			bad("%s: %d must not be negative", f.name, f.v)
		}
	}
	if !ValidReasoning(m.Reasoning) {
		bad("reasoning: %q is not one of \"low\", \"medium\", \"high\"", m.Reasoning)
	}
	if m.Temperature != nil && (*m.Temperature < 0 || *m.Temperature > 2) {
		bad("temperature: %v is outside 0..2", *m.Temperature)
	}
	for i, t := range m.Tools {
		// A malformed glob matches nothing (policy.Match): the agent would
		// silently lose the tools it was meant to have.
		if t == "" {
			bad("tools[%d]: empty pattern", i)
		} else if _, err := path.Match(t, ""); err != nil {
			bad("tools[%d]: %q is not a valid pattern (use *, ? and [...])", i, t)
		}
	}
	for i, s := range m.Skills {
		if s.ID == "" || s.Name == "" {
			bad("skills[%d]: id and name are required", i)
		}
	}
	return errors.Join(errs...)
}
