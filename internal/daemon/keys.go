package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"strings"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
)

// mintedKeys resolves the API keys minted at runtime: a key's hash is
// looked up in the store on every request that presents one, and its
// principal in the config as it is now. Nothing is cached, so a
// revocation (or a reload that removes the principal) holds from the
// next request, on every replica of a shared store; the price is one
// indexed read per request made with a minted key (configured keys,
// tokens and strings without principal.KeyPrefix cost none).
type mintedKeys struct {
	keys store.KeyStore
	cfg  func() *config.Config
}

var _ principal.Minted = mintedKeys{}

// Resolve implements principal.Minted.
func (m mintedKeys) Resolve(ctx context.Context, hash [sha256.Size]byte) (*principal.Principal, error) {
	k, err := m.keys.LiveAPIKey(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, ok := m.cfg().PrincipalNamed(k.Principal)
	if !ok {
		return nil, nil // its principal left the config: the key is nobody's
	}
	p.KeyID = k.ID
	return p, nil
}

// Live implements principal.Minted.
func (m mintedKeys) Live(ctx context.Context, id string) (bool, error) {
	k, err := m.keys.GetAPIKey(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, configured := m.cfg().PrincipalNamed(k.Principal)
	return !k.Revoked() && configured, nil
}

// principalInfos lists cfg's principals for the API, sorted by name:
// the api_key's admin, every [[principals]] entry, or the local user of
// a daemon without credentials. Keys are minted for entries only.
func principalInfos(cfg *config.Config) []httpapi.PrincipalInfo {
	all := []string{"*"}
	var out []httpapi.PrincipalInfo
	switch {
	case cfg.APIKeyEnv != "":
		out = append(out, httpapi.PrincipalInfo{Name: principal.AdminName, Admin: true, Agents: all, Tools: all, A2AAgents: all,
			Source: "api_key", Credential: "api_key_env " + cfg.APIKeyEnv})
	case cfg.APIKey != "":
		out = append(out, httpapi.PrincipalInfo{Name: principal.AdminName, Admin: true, Agents: all, Tools: all, A2AAgents: all,
			Source: "api_key", Credential: "api_key"})
	}
	for _, e := range cfg.Principals {
		p, _ := cfg.PrincipalNamed(e.Name)
		cred := "oauth"
		switch {
		case e.KeyEnv != "":
			cred = "key_env " + e.KeyEnv
		case e.KeySHA256 != "":
			cred = "key_sha256 " + e.KeySHA256[:min(12, len(e.KeySHA256))] + "…"
		case cfg.Auth.OAuth == nil:
			cred = "none"
		}
		a2a := p.A2AAgents
		if p.Admin {
			a2a = all
		}
		out = append(out, httpapi.PrincipalInfo{Name: p.Name, Admin: p.Admin, Agents: orNone(p.Agents), Tools: orNone(p.Tools),
			DenyTools: orNone(p.DenyTools), AskTools: orNone(p.AskTools), A2AAgents: orNone(a2a),
			Source: "config", Credential: cred, Mintable: true})
	}
	if len(out) == 0 {
		out = append(out, httpapi.PrincipalInfo{Name: principal.Local.Name, Admin: true, Agents: all, Tools: all, A2AAgents: all,
			Source: "local", Credential: "none"})
	}
	for i := range out {
		out[i].DenyTools, out[i].AskTools = orNone(out[i].DenyTools), orNone(out[i].AskTools)
	}
	slices.SortFunc(out, func(a, b httpapi.PrincipalInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
