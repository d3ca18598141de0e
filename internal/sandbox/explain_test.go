package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	p := Policy{Write: []string{"/work/ws"}, Network: NetworkNone}
	tests := []struct {
		name, output string
		want         []Refusal
	}{
		{"cat of the store", "cat: /var/lib/agentd/agentd.db: Permission denied\n[exit code 1]", []Refusal{{"read", "/var/lib/agentd/agentd.db"}}},
		{"dash redirect", "sh: 1: cannot create /etc/passwd: Permission denied", []Refusal{{"write", "/etc/passwd"}}},
		{"touch", "touch: cannot touch '/opt/x': Permission denied", []Refusal{{"write", "/opt/x"}}},
		{"ls", "ls: cannot open directory '/root': Permission denied", []Refusal{{"read", "/root"}}},
		{"granted path is the file's own mode", "cat: /work/ws/locked: Permission denied", nil},
		{"system read is granted", "cat: /usr/share/x: Permission denied", nil},
		{"shadow is not", "cat: /etc/shadow: Permission denied", []Refusal{{"read", "/etc/shadow"}}},
		{"no path", "Permission denied", nil},
		{"twice counted once", "cat: /a: Permission denied\ncat: /a: Permission denied", []Refusal{{"read", "/a"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Explain(p, tc.output, 5); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Explain = %v, want %v", got, tc.want)
			}
		})
	}
}

func FuzzExplain(f *testing.F) {
	f.Add("cat: /var/lib/agentd/agentd.db: Permission denied")
	f.Add("sh: 1: cannot create /x: Permission denied\n")
	f.Add("'/': Operation not permitted")
	p := Policy{Write: []string{"/ws"}, Network: NetworkNone}
	f.Fuzz(func(t *testing.T, out string) {
		rs := Explain(p, out, 3)
		if len(rs) > 3 {
			t.Fatalf("%d refusals beyond the max", len(rs))
		}
		for _, r := range rs {
			if !strings.HasPrefix(r.Path, "/") || (r.Op != "read" && r.Op != "write") {
				t.Fatalf("bad refusal %+v", r)
			}
			if p.Covers(r.Path, r.Op == "write") {
				t.Fatalf("refusal %+v on a granted path", r)
			}
		}
	})
}

func TestDenyExcept(t *testing.T) {
	home := "/var/lib/agentd"
	ws := home + "/workspaces/coder"
	p := Policy{Write: []string{ws}, Network: NetworkNone, Deny: []string{home, home + "/workspaces/other"}, DenyExcept: []string{ws}}
	if err := p.Check(); err != nil {
		t.Fatalf("own workspace refused: %v", err)
	}
	p.Write = append(p.Write, home+"/workspaces")
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), `"/var/lib/agentd/workspaces"`) {
		t.Fatalf("the workspaces dir (all agents') allowed: %v", err)
	}
}
