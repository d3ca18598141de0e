// Package principal names who is asking and what they may do, whatever
// the protocol they came by: the HTTP API, MCP, A2A, ACP or the dashboard.
//
// A Principal is resolved once, at the edge (a bearer key or token), and
// then travels explicitly with every run and tool call, so one policy and
// one audit log cover every protocol. Keys are never kept: only their
// SHA-256, compared in constant time.
package principal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

// Principal is an identity with its rights.
type Principal struct {
	// Name identifies the principal in the audit log and on sessions.
	Name string
	// Admin may change agents and MCP servers and read every session and
	// the whole audit log.
	Admin bool
	// Agents are the name globs of the agents it may run.
	Agents []string
	// Tools are the name globs of the tools it may call directly (the
	// API's tool calls, /mcp expose_tools, gateways). What an agent it
	// runs may call is the agent's own business (its tools patterns).
	Tools []string
	// DenyTools and AskTools are tool globs refused, or needing approval,
	// in everything this principal starts, whichever agent makes the call:
	// the policy that follows the person, not the agent.
	DenyTools []string
	AskTools  []string
	// A2AAgents are the name globs of the external A2A agents (the
	// [[a2a.agents]] the daemon holds credentials for) it may send to,
	// and whose tasks it may read and cancel through /api/a2a. Admins may
	// use every one; discovery of new agents is an admin's business too,
	// since it makes the daemon fetch a URL the caller chose.
	A2AAgents []string
	// KeyID is the minted key (see Minted) the request proved, "" for a
	// configured key, an access token or the local user: a dashboard
	// session opened with a minted key ends when the key is revoked.
	KeyID string
}

// ToolRule reports whether p's own policy denies the named tool or asks
// for approval before it runs.
func (p *Principal) ToolRule(name string) (deny, ask bool) {
	if p == nil {
		return false, false
	}
	return matchAny(p.DenyTools, name), matchAny(p.AskTools, name)
}

// AdminName is the principal of the top-level api_key.
const AdminName = "admin"

// Reserved reports whether name belongs to the daemon's own credentials
// (the top-level api_key's "admin", the key-less daemon's "local"): no
// access token may claim it, whatever its subject says.
func Reserved(name string) bool { return name == AdminName || name == Local.Name }

// Local is the principal of a daemon without any credential configured:
// it listens on loopback only, and everyone who can reach it is the user.
var Local = &Principal{Name: "local", Admin: true, Agents: []string{"*"}, Tools: []string{"*"}}

// MayRunAgent reports whether p may run the named agent.
func (p *Principal) MayRunAgent(name string) bool { return p != nil && matchAny(p.Agents, name) }

// MayCallTool reports whether p may call the named tool directly.
func (p *Principal) MayCallTool(name string) bool { return p != nil && matchAny(p.Tools, name) }

// MayUseExternalAgent reports whether p may send to the external A2A agent
// name through the daemon (and so spend the credential the daemon holds
// for it): an admin, or a principal whose A2AAgents match it.
func (p *Principal) MayUseExternalAgent(name string) bool {
	return p != nil && (p.Admin || matchAny(p.A2AAgents, name))
}

// MaySee reports whether p may read, answer or cancel what owner (the
// principal named on a session, run, task, approval or audit record) did:
// its own, or anything for an admin. An object without an owner (made
// before objects had one, or by the daemon itself) is an admin's only:
// a principal never owns "" by having no name.
//
// Names compare exactly because each name is one identity: configured
// names are unique, the reserved ones ("admin", "local") belong to the
// daemon's own credentials, and an access token never claims a name the
// configuration did not give it (package oauthrs).
func (p *Principal) MaySee(owner string) bool {
	return p != nil && (p.Admin || p.Name != "" && p.Name == owner)
}

// NameOf returns p's name, or "" for nil (an unauthenticated request).
func NameOf(p *Principal) string {
	if p == nil {
		return ""
	}
	return p.Name
}

// matchAny matches name against path.Match globs; a malformed glob
// matches nothing, so a typo can only deny.
func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, err := path.Match(g, name); err == nil && ok {
			return true
		}
	}
	return false
}

// Keys resolves bearer keys to principals. A config reload replaces its
// entries in place (Replace): every holder of the *Keys (the admission
// layer, the dashboard's login) sees the new set at once.
type Keys struct {
	mu      sync.RWMutex
	entries []entry
	minted  Minted
}

// KeyPrefix starts every key agentd makes (`agentd principals new-key`,
// POST /api/principals/{name}/keys): only a token with it is looked for
// among the minted keys, so an access token or a stranger's string costs
// no store read.
const KeyPrefix = "agentd_"

// NewKey returns a random key and its SHA-256: 256 bits from crypto/rand,
// base64url after KeyPrefix.
func NewKey() (key string, hash [sha256.Size]byte, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", hash, fmt.Errorf("read random bytes: %w", err)
	}
	key = KeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	return key, sha256.Sum256([]byte(key)), nil
}

// Minted resolves the keys minted at runtime, which live in the store
// (only their hash) rather than in the config: Keys asks it about a
// token that none of its own entries has. It is asked on every request,
// not cached, so that a revocation holds from the next request on, on
// every replica sharing the store.
type Minted interface {
	// Resolve returns the principal of the live minted key whose SHA-256
	// is hash, with KeyID set; nil, nil when there is none (never minted,
	// revoked, or its principal is no longer configured). An error means
	// the keys could not be read now.
	Resolve(ctx context.Context, hash [sha256.Size]byte) (*Principal, error)
	// Live reports whether the minted key id still resolves.
	Live(ctx context.Context, id string) (bool, error)
}

// SetMinted makes k resolve minted keys through m as well (nil: none).
// Replace keeps it: a reload changes the configured keys only.
func (k *Keys) SetMinted(m Minted) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.minted = m
}

// Resolve returns the principal whose key is token: a configured key
// (Lookup), else a live minted key. nil, nil when token is no key of
// this daemon; an error when the minted keys could not be read.
func (k *Keys) Resolve(ctx context.Context, token string) (*Principal, error) {
	if p, ok := k.Lookup(token); ok {
		return p, nil
	}
	if k == nil || !strings.HasPrefix(token, KeyPrefix) {
		return nil, nil
	}
	k.mu.RLock()
	m := k.minted
	k.mu.RUnlock()
	if m == nil {
		return nil, nil
	}
	return m.Resolve(ctx, sha256.Sum256([]byte(token)))
}

// Live reports whether p may still act on what its key proved: always,
// unless it came with a minted key (KeyID) that no longer resolves.
func (k *Keys) Live(ctx context.Context, p *Principal) (bool, error) {
	if p == nil || p.KeyID == "" || k == nil {
		return true, nil
	}
	k.mu.RLock()
	m := k.minted
	k.mu.RUnlock()
	if m == nil {
		return false, nil
	}
	return m.Live(ctx, p.KeyID)
}

type entry struct {
	hash [sha256.Size]byte
	p    *Principal
}

// Add registers the principal whose key has the given SHA-256.
func (k *Keys) Add(hash [sha256.Size]byte, p *Principal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.entries = append(k.entries, entry{hash, p})
}

// Replace makes k resolve exactly the keys of other: a reload's new
// principals. A request already admitted keeps the principal it got.
func (k *Keys) Replace(other *Keys) {
	entries := other.snapshot()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.entries = entries
}

// Clone returns a copy of k that later changes to k's entries do not
// affect; it resolves minted keys through the same Minted.
func (k *Keys) Clone() *Keys {
	c := &Keys{entries: k.snapshot()}
	if k != nil {
		k.mu.RLock()
		c.minted = k.minted
		k.mu.RUnlock()
	}
	return c
}

func (k *Keys) snapshot() []entry {
	if k == nil {
		return nil
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return slices.Clone(k.entries)
}

// Len is the number of keys.
func (k *Keys) Len() int {
	if k == nil {
		return 0
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.entries)
}

// Lookup returns the principal whose key is token. Every entry is
// compared, in constant time, whatever matches: the answer's timing says
// nothing about which key, or how much of one, was right.
func (k *Keys) Lookup(token string) (*Principal, bool) {
	if k == nil || token == "" {
		return nil, false
	}
	got := sha256.Sum256([]byte(token))
	var found *Principal
	k.mu.RLock()
	defer k.mu.RUnlock()
	for _, e := range k.entries {
		if subtle.ConstantTimeCompare(got[:], e.hash[:]) == 1 {
			found = e.p
		}
	}
	return found, found != nil
}

type ctxKey struct{}

// NewContext returns ctx carrying p: the HTTP middleware's hand-over to
// the handler of one request. Handlers pass it on explicitly from there.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal of the request ctx belongs to, or nil.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}
