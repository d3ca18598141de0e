package policy

import (
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	rules := &Rules{
		Capabilities: []string{"file_*", "shell_exec", "mcp_github_*", "web_fetch"},
		Servers:      []string{"github"},
		Untrusted:    map[string]Action{"shell_exec": Ask, "file_write": Ask, "file_*": Allow, "mcp_github_delete_*": Deny},
	}
	tests := []struct {
		name   string
		call   Call
		want   Action
		reason string
	}{
		{"capability granted", Call{Tool: "file_read"}, Allow, ""},
		{"capability missing", Call{Tool: "memory_store"}, Deny, "not in this agent's capabilities"},
		{"glob does not over-match prefix", Call{Tool: "xfile_read"}, Deny, "capabilities"},
		{"server allowed", Call{Tool: "mcp_github_list", Server: "github"}, Allow, ""},
		{"server not allowed", Call{Tool: "mcp_github_list", Server: "gitlab"}, Deny, "allowed servers"},
		{"clean context needs no approval", Call{Tool: "shell_exec"}, Allow, ""},
		{"tainted shell asks", Call{Tool: "shell_exec", Tainted: true}, Ask, "needs approval"},
		{"tainted write: stricter rule wins over file_*", Call{Tool: "file_write", Tainted: true}, Ask, "file_write"},
		{"tainted read allowed", Call{Tool: "file_read", Tainted: true}, Allow, ""},
		{"tainted deny", Call{Tool: "mcp_github_delete_repo", Server: "github", Tainted: true}, Deny, "denied while untrusted"},
		{"tainted unmatched tool allowed", Call{Tool: "web_fetch", Tainted: true}, Allow, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := rules.Decide(tt.call)
			if d.Action != tt.want {
				t.Fatalf("Decide(%+v) = %v (%s), want %v", tt.call, d.Action, d.Reason, tt.want)
			}
			if !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("reason %q does not contain %q", d.Reason, tt.reason)
			}
		})
	}
}

func TestNoCapabilitiesDeniesEverything(t *testing.T) {
	r := &Rules{}
	if d := r.Decide(Call{Tool: "file_read"}); d.Action != Deny || !strings.Contains(d.Reason, "none granted") {
		t.Fatalf("got %+v", d)
	}
}

func TestMalformedPatternMatchesNothing(t *testing.T) {
	if Match("file_[", "file_[") {
		t.Fatal("malformed pattern matched")
	}
}

func TestParseAction(t *testing.T) {
	for in, want := range map[string]Action{"allow": Allow, " ASK ": Ask, "deny": Deny} {
		got, err := ParseAction(in)
		if err != nil || got != want {
			t.Errorf("ParseAction(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseAction("maybe"); err == nil {
		t.Error("ParseAction(maybe) accepted")
	}
}

// FuzzDecide checks invariants that must hold for any rules and call: a
// tool outside the capabilities is always denied, and taint never makes a
// decision more permissive.
func FuzzDecide(f *testing.F) {
	f.Add("file_*", "file_read", "shell_exec", "ask", true)
	f.Add("*", "shell_exec", "shell_*", "deny", false)
	f.Add("[a-", "a", "*", "allow", true)
	f.Fuzz(func(t *testing.T, capPat, toolName, untrustedPat, action string, tainted bool) {
		a, err := ParseAction(action)
		if err != nil {
			a = Deny
		}
		r := &Rules{Capabilities: []string{capPat}, Untrusted: map[string]Action{untrustedPat: a}}
		d := r.Decide(Call{Tool: toolName, Tainted: tainted})
		if !Match(capPat, toolName) && d.Action != Deny {
			t.Fatalf("tool %q outside capability %q got %v", toolName, capPat, d.Action)
		}
		clean := r.Decide(Call{Tool: toolName})
		if rank(d.Action) < rank(clean.Action) {
			t.Fatalf("taint made %q more permissive: %v < %v", toolName, d.Action, clean.Action)
		}
		if d.Action != Allow && d.Reason == "" {
			t.Fatal("non-allow decision without a reason")
		}
	})
}

// TestSeesAgreesWithVisible checks that Sees, which tool listings use,
// answers as Visible does, with or without server and capability rules.
func TestSeesAgreesWithVisible(t *testing.T) {
	for _, r := range []*Rules{
		{},
		{Capabilities: []string{"file_*", "mcp_github_*"}},
		{Capabilities: []string{"file_*", "mcp_github_*"}, Servers: []string{"GitHub"}},
		{Capabilities: []string{"*"}, Servers: []string{"github", "linear"}},
	} {
		for _, c := range []Call{
			{Tool: "file_read"}, {Tool: "shell_exec"}, {Tool: "mcp_github_list", Server: "github"},
			{Tool: "mcp_github_list", Server: "gitlab"}, {Tool: "mcp_linear_x", Server: "linear"}, {Tool: "file_read", Server: "github"},
		} {
			if got, want := r.Sees(c), r.Visible(c).Action == Allow; got != want {
				t.Errorf("rules %+v, call %+v: Sees %v, Visible allows %v", r, c, got, want)
			}
		}
	}
}
