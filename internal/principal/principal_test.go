package principal

import (
	"context"
	"crypto/sha256"
	"errors"
	"path"
	"strings"
	"testing"
)

func TestRights(t *testing.T) {
	bot := &Principal{Name: "ci-bot", Agents: []string{"reviewer", "lint-*"}, Tools: []string{"file_read", "mcp_github_*"}}
	tests := []struct {
		name string
		p    *Principal
		what func(*Principal) bool
		want bool
	}{
		{"named agent", bot, func(p *Principal) bool { return p.MayRunAgent("reviewer") }, true},
		{"glob agent", bot, func(p *Principal) bool { return p.MayRunAgent("lint-go") }, true},
		{"other agent", bot, func(p *Principal) bool { return p.MayRunAgent("assistant") }, false},
		{"named tool", bot, func(p *Principal) bool { return p.MayCallTool("file_read") }, true},
		{"glob tool", bot, func(p *Principal) bool { return p.MayCallTool("mcp_github_create_issue") }, true},
		{"other tool", bot, func(p *Principal) bool { return p.MayCallTool("shell_exec") }, false},
		{"own session", bot, func(p *Principal) bool { return p.MaySee("ci-bot") }, true},
		{"someone else's session", bot, func(p *Principal) bool { return p.MaySee("alice") }, false},
		{"admin sees all", Local, func(p *Principal) bool { return p.MaySee("alice") }, true},
		{"local runs all", Local, func(p *Principal) bool { return p.MayRunAgent("x") && p.MayCallTool("y") }, true},
		{"nil has no rights", nil, func(p *Principal) bool { return p.MayRunAgent("x") || p.MayCallTool("y") || p.MaySee("") }, false},
		{"malformed glob grants nothing", &Principal{Agents: []string{"[a"}}, func(p *Principal) bool { return p.MayRunAgent("[a") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.what(tt.p); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	a, b := &Principal{Name: "a"}, &Principal{Name: "b"}
	var k Keys
	k.Add(sha256.Sum256([]byte("key-a")), a)
	k.Add(sha256.Sum256([]byte("key-b")), b)
	for _, tt := range []struct {
		token string
		want  *Principal
	}{
		{"key-a", a}, {"key-b", b}, {"key-c", nil}, {"", nil}, {"key-a ", nil}, {"key-", nil},
	} {
		got, ok := k.Lookup(tt.token)
		if got != tt.want || ok != (tt.want != nil) {
			t.Errorf("Lookup(%q) = %v, %v; want %v", tt.token, NameOf(got), ok, NameOf(tt.want))
		}
	}
	var none *Keys
	if _, ok := none.Lookup("key-a"); ok || none.Len() != 0 {
		t.Fatal("nil Keys resolved a key")
	}
}

func TestContext(t *testing.T) {
	if FromContext(context.Background()) != nil {
		t.Fatal("principal from an empty context")
	}
	p := &Principal{Name: "x"}
	if FromContext(NewContext(context.Background(), p)) != p {
		t.Fatal("principal lost in context")
	}
}

// FuzzMayRunAgent: a principal may run an agent only if one of its globs
// matches by path.Match; a malformed glob never grants.
func FuzzMayRunAgent(f *testing.F) {
	f.Add("lint-*", "lint-go")
	f.Add("[", "[")
	f.Add("*", "")
	f.Fuzz(func(t *testing.T, glob, name string) {
		p := &Principal{Agents: []string{glob}}
		got := p.MayRunAgent(name)
		ok, err := path.Match(glob, name)
		if got != (err == nil && ok) {
			t.Fatalf("MayRunAgent(%q) with glob %q = %v; path.Match = %v, %v", name, glob, got, ok, err)
		}
	})
}

// TestKeysReplace: Replace swaps the whole set in place (a reload): a
// holder of the same *Keys resolves the new keys and no longer the old;
// a Clone taken before is not affected.
func TestKeysReplace(t *testing.T) {
	k := &Keys{}
	alice := &Principal{Name: "alice"}
	k.Add(sha256.Sum256([]byte("ka")), alice)
	before := k.Clone()
	next := &Keys{}
	carol := &Principal{Name: "carol"}
	next.Add(sha256.Sum256([]byte("kc")), carol)
	k.Replace(next)
	if p, ok := k.Lookup("kc"); !ok || p != carol {
		t.Errorf("new key: %v %v", p, ok)
	}
	if _, ok := k.Lookup("ka"); ok {
		t.Error("the replaced key still resolves")
	}
	if p, ok := before.Lookup("ka"); !ok || p != alice {
		t.Errorf("the clone lost its key: %v %v", p, ok)
	}
	if k.Len() != 1 {
		t.Errorf("Len %d, want 1", k.Len())
	}
}

// mintedTable is a Minted over a map, recording what it was asked.
type mintedTable struct {
	keys  map[[sha256.Size]byte]*Principal
	err   error
	asked int
}

func (m *mintedTable) Resolve(_ context.Context, hash [sha256.Size]byte) (*Principal, error) {
	m.asked++
	if m.err != nil {
		return nil, m.err
	}
	return m.keys[hash], nil
}

func (m *mintedTable) Live(_ context.Context, id string) (bool, error) {
	m.asked++
	for _, p := range m.keys {
		if p.KeyID == id {
			return true, m.err
		}
	}
	return false, m.err
}

// TestResolveMinted: configured keys first, then minted ones, and only
// tokens that look like agentd's keys reach the minted keys (the store).
func TestResolveMinted(t *testing.T) {
	key, hash, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, KeyPrefix) || len(key) != len(KeyPrefix)+43 || hash != sha256.Sum256([]byte(key)) {
		t.Fatalf("NewKey = %q, %x", key, hash)
	}
	if other, _, _ := NewKey(); other == key {
		t.Fatal("NewKey repeated itself")
	}
	ci := &Principal{Name: "ci-bot", KeyID: "key_1"}
	configured := &Principal{Name: "ops", Admin: true}
	for _, tc := range []struct {
		name, token string
		err         error
		want        string // principal name, "" for none
		wantErr     bool
		asks        int
	}{
		{"configured key", "agentd_configured", nil, "ops", false, 0},
		{"minted key", key, nil, "ci-bot", false, 1},
		{"unknown agentd_ key", "agentd_unknown", nil, "", false, 1},
		{"not an agentd key", "eyJhbGciOi.a.jwt", nil, "", false, 0},
		{"empty", "", nil, "", false, 0},
		{"store down", key, errors.New("store unavailable"), "", true, 1},
		{"store down, configured key", "agentd_configured", errors.New("store unavailable"), "ops", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &mintedTable{keys: map[[sha256.Size]byte]*Principal{hash: ci}, err: tc.err}
			k := &Keys{}
			k.Add(sha256.Sum256([]byte("agentd_configured")), configured)
			k.SetMinted(m)
			// A reload's Replace keeps the minted keys; a Clone shares them.
			next := &Keys{}
			next.Add(sha256.Sum256([]byte("agentd_configured")), configured)
			k.Replace(next)
			for _, kk := range []*Keys{k, k.Clone()} {
				p, err := kk.Resolve(t.Context(), tc.token)
				if (err != nil) != tc.wantErr || NameOf(p) != tc.want {
					t.Errorf("Resolve(%q) = %v, %v; want %q (error %v)", tc.token, NameOf(p), err, tc.want, tc.wantErr)
				}
			}
			if m.asked != 2*tc.asks {
				t.Errorf("the minted keys were asked %d times, want %d", m.asked, 2*tc.asks)
			}
		})
	}
}

// TestLiveMinted: a principal proven by a minted key lasts while the key
// does; any other is live without a question.
func TestLiveMinted(t *testing.T) {
	m := &mintedTable{keys: map[[sha256.Size]byte]*Principal{{1}: {Name: "ci-bot", KeyID: "key_1"}}}
	k := &Keys{}
	k.SetMinted(m)
	for _, tc := range []struct {
		p    *Principal
		want bool
		asks int
	}{
		{&Principal{Name: "ops"}, true, 0},
		{&Principal{Name: "ci-bot", KeyID: "key_1"}, true, 1},
		{&Principal{Name: "ci-bot", KeyID: "key_gone"}, false, 1},
	} {
		m.asked = 0
		if got, err := k.Live(t.Context(), tc.p); err != nil || got != tc.want || m.asked != tc.asks {
			t.Errorf("Live(%+v) = %v, %v after %d questions; want %v after %d", tc.p, got, err, m.asked, tc.want, tc.asks)
		}
	}
	if got, _ := (&Keys{}).Live(t.Context(), &Principal{Name: "x", KeyID: "key_1"}); got {
		t.Error("a minted key is live on Keys that resolve no minted keys")
	}
}
