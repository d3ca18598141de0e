package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
)

// The principals routes (admins only): who may call the daemon, and the
// keys minted for them at runtime. Principals themselves are the
// config's ([[principals]], api_key): read here, changed by editing the
// file and reloading. Keys may be minted for a [[principals]] entry and
// revoked through the API; only their SHA-256 is stored (store.KeyStore),
// the key is in the minting answer and nowhere else. Every mint and
// revocation, and every refused attempt, is an audit record.

// PrincipalInfo is a principal as the principals routes show it: its
// rights, where its configured credential comes from (never the key
// itself) and its minted keys.
type PrincipalInfo struct {
	Name      string   `json:"name"`
	Admin     bool     `json:"admin"`
	Agents    []string `json:"agents"`
	Tools     []string `json:"tools"`
	DenyTools []string `json:"deny_tools"`
	AskTools  []string `json:"ask_tools"`
	A2AAgents []string `json:"a2a_agents"`
	// Source is where the principal is defined: "config" (a [[principals]]
	// entry), "api_key" (the top-level api_key's admin) or "local" (a
	// daemon without credentials).
	Source string `json:"source"`
	// Credential says how the principal proves itself besides minted
	// keys: "key_env NAME", "key_sha256 9f86d0…", "oauth" (access tokens
	// only), "api_key_env NAME", "api_key", or "none".
	Credential string `json:"credential"`
	// Mintable: keys may be minted for it (a [[principals]] entry).
	Mintable bool `json:"mintable"`
	// LiveKeys is how many of its minted keys are live.
	LiveKeys int `json:"live_keys"`
	// Keys are its minted keys, revoked ones included, newest first (in
	// GET /api/principals/{name} only).
	Keys []KeyInfo `json:"keys,omitempty"`
}

// KeyInfo is a minted key as listed: never the key, nor its hash.
type KeyInfo struct {
	ID        string     `json:"id"`
	Principal string     `json:"principal"`
	Label     string     `json:"label"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	RevokedBy string     `json:"revoked_by,omitempty"`
}

// MintedKey is the answer to POST /api/principals/{name}/keys: the key,
// shown this once, and what the store keeps about it.
type MintedKey struct {
	KeyInfo
	Key string `json:"key"`
}

// MintRequest is the body of POST /api/principals/{name}/keys.
type MintRequest struct {
	// Label says what the key is for ("laptop", "ci"): 64 characters at
	// most, no control characters.
	Label string `json:"label"`
}

// MaxKeyLabel bounds a minted key's label, in characters.
const MaxKeyLabel = 64

// Audit record tools of the principals routes.
const (
	AuditMintKey   = "principals.mint_key"
	AuditRevokeKey = "principals.revoke_key"
)

func toKeyInfo(k store.APIKey) KeyInfo {
	out := KeyInfo{ID: k.ID, Principal: k.Principal, Label: k.Label, CreatedAt: k.CreatedAt, CreatedBy: k.CreatedBy, RevokedBy: k.RevokedBy}
	if k.Revoked() {
		at := k.RevokedAt
		out.RevokedAt = &at
	}
	return out
}

// principalList is the configured principals, with each one's count of
// live minted keys.
func (a *API) principalList(ctx context.Context) ([]PrincipalInfo, error) {
	if a.opts.Principals == nil {
		return nil, errorf(http.StatusServiceUnavailable, "unavailable", "principals are not available")
	}
	ps := a.opts.Principals()
	keys, err := a.opts.Store.ListAPIKeys(ctx, "")
	if err != nil {
		return nil, err
	}
	live := map[string]int{}
	for _, k := range keys {
		if !k.Revoked() {
			live[k.Principal]++
		}
	}
	for i := range ps {
		ps[i].LiveKeys = live[ps[i].Name]
	}
	return ps, nil
}

func (a *API) listPrincipals(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	pg, err := ParsePage(r)
	if err != nil {
		return err
	}
	ps, err := a.principalList(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, PageBody("principals", Window(ps, pg), len(ps), pg))
	return nil
}

// findPrincipal returns the configured principal name, with its keys.
func (a *API) findPrincipal(ctx context.Context, name string) (PrincipalInfo, error) {
	ps, err := a.principalList(ctx)
	if err != nil {
		return PrincipalInfo{}, err
	}
	i := slices.IndexFunc(ps, func(p PrincipalInfo) bool { return p.Name == name })
	if i < 0 {
		return PrincipalInfo{}, errorf(http.StatusNotFound, "not_found", "no principal %q: principals are the config's [[principals]] entries (and admin with api_key)", name)
	}
	p := ps[i]
	keys, err := a.opts.Store.ListAPIKeys(ctx, name)
	if err != nil {
		return PrincipalInfo{}, err
	}
	p.Keys = make([]KeyInfo, len(keys))
	for i, k := range keys {
		p.Keys[i] = toKeyInfo(k)
	}
	return p, nil
}

func (a *API) getPrincipal(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	p, err := a.findPrincipal(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (a *API) mintKey(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := requireAdmin(r); err != nil {
		_ = a.auditKey(r, AuditMintKey, "deny", "denied", fmt.Sprintf("mint a key for %q: not an admin", name))
		return err
	}
	var req MintRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := checkLabel(req.Label); err != nil {
		return err
	}
	p, err := a.findPrincipal(r.Context(), name)
	if err != nil {
		return err
	}
	if !p.Mintable {
		return &Error{Status: http.StatusBadRequest, Code: "invalid", Message: fmt.Sprintf(
			"principal %q is the daemon's own (%s): keys are minted for [[principals]] entries only; add one with admin = true for another admin", name, p.Source)}
	}
	key, hash, err := principal.NewKey()
	if err != nil {
		return err
	}
	k := store.APIKey{ID: newKeyID(), Principal: name, Label: req.Label, Hash: hash, CreatedBy: who(r).Name, CreatedAt: time.Now().UTC()}
	if err := a.opts.Store.CreateAPIKey(r.Context(), k); err != nil {
		return err
	}
	// No key without its record: if the audit log cannot take the mint,
	// the key is revoked before anyone has seen it.
	if err := a.auditKey(r, AuditMintKey, "allow", "ok", fmt.Sprintf("key %s for %q (%q)", k.ID, name, req.Label)); err != nil {
		if _, rerr := a.opts.Store.RevokeAPIKey(context.WithoutCancel(r.Context()), k.ID, who(r).Name, time.Time{}); rerr != nil {
			a.log.ErrorContext(r.Context(), "a minted key could not be audited nor revoked", "key", k.ID, "principal", name, "err", errors.Join(err, rerr))
		}
		return err
	}
	a.log.InfoContext(r.Context(), "api key minted", "key", k.ID, "principal", name, "by", who(r).Name)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, MintedKey{KeyInfo: toKeyInfo(k), Key: key})
	return nil
}

func (a *API) revokeKey(w http.ResponseWriter, r *http.Request) error {
	name, id := r.PathValue("name"), r.PathValue("id")
	if err := requireAdmin(r); err != nil {
		_ = a.auditKey(r, AuditRevokeKey, "deny", "denied", fmt.Sprintf("revoke key %s of %q: not an admin", id, name))
		return err
	}
	k, err := a.opts.Store.GetAPIKey(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (k.Principal != name || k.Revoked()) {
		return errorf(http.StatusNotFound, "not_found", "principal %q has no live key %q", name, id)
	}
	if err != nil {
		return err
	}
	if _, err := a.opts.Store.RevokeAPIKey(r.Context(), id, who(r).Name, time.Time{}); err != nil {
		if errors.Is(err, store.ErrNotFound) { // revoked meanwhile
			return errorf(http.StatusNotFound, "not_found", "principal %q has no live key %q", name, id)
		}
		return err
	}
	// The key is refused from here on; its record follows.
	if err := a.auditKey(r, AuditRevokeKey, "allow", "ok", fmt.Sprintf("key %s of %q (%q)", id, name, k.Label)); err != nil {
		a.log.ErrorContext(r.Context(), "a revoked key could not be audited", "key", id, "principal", name, "err", err)
		return err
	}
	a.log.InfoContext(r.Context(), "api key revoked", "key", id, "principal", name, "by", who(r).Name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// auditKey records a mint or revocation (or a refused attempt) in the
// audit log, as the operator's act: principal is who asked.
func (a *API) auditKey(r *http.Request, tool, decision, outcome, detail string) error {
	_, err := a.opts.Store.AppendAudit(context.WithoutCancel(r.Context()), store.AuditRecord{
		Agent: "operator", Tool: tool, Decision: decision, Outcome: outcome, Detail: detail, Principal: who(r).Name,
	})
	return err
}

func checkLabel(s string) error {
	bad := func(why string) error {
		return &Error{Status: http.StatusBadRequest, Code: "invalid", Field: "label", Message: "label: " + why,
			Fields: map[string]string{"label": why}}
	}
	switch {
	case !utf8.ValidString(s):
		return bad("must be UTF-8 text")
	case utf8.RuneCountInString(s) > MaxKeyLabel:
		return bad(fmt.Sprintf("at most %d characters, not %d", MaxKeyLabel, utf8.RuneCountInString(s)))
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return bad("must not hold control characters")
	}
	return nil
}

// newKeyID is a minted key's public name: random, unrelated to the key.
func newKeyID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "key_" + hex.EncodeToString(b[:])
}
