// Package policy makes the pure decisions of the tool pipeline: may this
// agent call this tool now, and if so, must a human approve it first?
//
// It holds no state and performs no I/O, so every rule can be table-tested
// and fuzzed on its own; the tool runner applies the decisions.
package policy

import (
	"fmt"
	"path"
	"strings"
)

// Action is what the pipeline does with a call.
type Action string

// Actions, ordered from most to least permissive.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// ParseAction parses "allow", "ask" or "deny".
func ParseAction(s string) (Action, error) {
	switch a := Action(strings.ToLower(strings.TrimSpace(s))); a {
	case Allow, Ask, Deny:
		return a, nil
	}
	return "", fmt.Errorf("%q is not one of allow, ask, deny", s)
}

// Decision is the verdict on one call, with a reason the model can read.
type Decision struct {
	Action Action
	Reason string
}

// Rules are the inputs that do not change during a run.
type Rules struct {
	// Capabilities are the agent's tool patterns; a tool is callable only
	// if its name matches one.
	Capabilities []string
	// Servers, when non-empty, limits upstream tools to these servers.
	Servers []string
	// Untrusted maps tool patterns to the action taken while untrusted
	// data is in the context. The most restrictive matching rule wins.
	Untrusted map[string]Action
}

// Call is what is known about a call when it is decided.
type Call struct {
	Tool string
	// Server names the upstream for MCP and A2A tools; "" for built-ins.
	Server string
	// Tainted says untrusted data has entered the conversation.
	Tainted bool
}

// Match reports whether name matches the glob pattern. Patterns use
// path.Match syntax ('*', '?', '[...]'); since tool names contain no '/',
// '*' matches any run of characters. A malformed pattern matches nothing,
// so a typo can only deny, never grant.
func Match(pattern, name string) bool {
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

// MatchAny reports whether name matches any of patterns.
func MatchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}

// Visible reports whether the agent may see the tool at all: the
// capability and server checks, without the taint rule. Tools that are not
// visible are never offered to the model.
func (r *Rules) Visible(c Call) Decision {
	switch {
	case r.Sees(c):
		return Decision{Action: Allow}
	case !MatchAny(r.Capabilities, c.Tool):
		return Decision{Deny, fmt.Sprintf("tool %q is not in this agent's capabilities (%s)", c.Tool, patternList(r.Capabilities))}
	default:
		return Decision{Deny, fmt.Sprintf("server %q is not among this agent's allowed servers (%s)", c.Server, strings.Join(r.Servers, ", "))}
	}
}

// Sees is Visible's verdict without its reason: listing the tools a run
// offers its model asks about every registered tool, and an agent with
// few capabilities is refused most of them (formatting each refusal was
// 1.5% of the CPU of an A2A send to an agent with none).
func (r *Rules) Sees(c Call) bool {
	return MatchAny(r.Capabilities, c.Tool) && (c.Server == "" || len(r.Servers) == 0 || containsFold(r.Servers, c.Server))
}

// Decide returns the verdict on c.
func (r *Rules) Decide(c Call) Decision {
	if d := r.Visible(c); d.Action != Allow {
		return d
	}
	if !c.Tainted {
		return Decision{Action: Allow}
	}
	act := Allow
	var rule string
	for p, a := range r.Untrusted {
		if Match(p, c.Tool) && stricter(a, act) {
			act, rule = a, p
		}
	}
	switch act {
	case Deny:
		return Decision{Deny, fmt.Sprintf("tool %q is denied while untrusted data is in the conversation (rule %q)", c.Tool, rule)}
	case Ask:
		return Decision{Ask, fmt.Sprintf("tool %q needs approval while untrusted data is in the conversation (rule %q)", c.Tool, rule)}
	}
	return Decision{Action: Allow}
}

func stricter(a, b Action) bool { return rank(a) > rank(b) }

func rank(a Action) int {
	switch a {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func patternList(p []string) string {
	if len(p) == 0 {
		return "none granted"
	}
	return strings.Join(p, ", ")
}
