package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/principal"
)

// AdminPrincipal is the name of the principal the top-level api_key
// stands for.
const AdminPrincipal = principal.AdminName

func checkPrincipals(r *report, src *source, root fieldPath, c *Config) {
	if o := c.Auth.OAuth; o != nil {
		op := root.key("auth").key("oauth")
		if o.Issuer == "" {
			r.add(src, op.key("issuer"), "required: the authorization server's issuer URL")
		} else {
			checkURL(r, src, op.key("issuer"), o.Issuer)
		}
		if o.JWKSURL != "" {
			checkURL(r, src, op.key("jwks_url"), o.JWKSURL)
		}
		nonNegative(r, src, op.key("leeway_secs"), o.LeewaySecs)
	}
	oauth := c.Auth.OAuth != nil
	seen := map[string]int{}
	subjects := map[string]int{} // oauth_subjects value → principal index
	hasAPIKey := c.APIKey != "" || c.APIKeyEnv != ""
	for i, p := range c.Principals {
		fp := root.key("principals").index(i)
		switch {
		case !manifest.ValidName(p.Name):
			r.add(src, fp.key("name"), "%q is not a valid name (%s)", p.Name, nameRules)
		case p.Name == AdminPrincipal && hasAPIKey:
			r.add(src, fp.key("name"), "%q is the principal of the top-level api_key; choose another name", p.Name)
		case p.Name == principal.Local.Name:
			r.add(src, fp.key("name"), "%q names the user of a daemon without keys; choose another name", p.Name)
		}
		if j, ok := seen[p.Name]; ok {
			r.add(src, fp.key("name"), "%q is already used by principals[%d]", p.Name, j)
		} else {
			seen[p.Name] = i
		}
		switch {
		case p.KeyEnv == "" && p.KeySHA256 == "" && oauth:
			// Reached only by access tokens whose principal claim names it.
		case p.KeyEnv == "" && p.KeySHA256 == "":
			r.add(src, fp, "needs a credential: key_env = \"VARIABLE_NAME\" or key_sha256 = \"<hex>\" (agentd principals new-key prints both)")
		case p.KeyEnv != "" && p.KeySHA256 != "":
			r.add(src, fp.key("key_sha256"), "key_env and key_sha256 are both set; keep one")
		case p.KeyEnv != "" && !ValidEnvName(p.KeyEnv):
			r.add(src, fp.key("key_env"), envNameMsg)
		case p.KeySHA256 != "":
			if b, err := hex.DecodeString(p.KeySHA256); err != nil || len(b) != sha256.Size {
				r.add(src, fp.key("key_sha256"), "must be 64 hex digits (the SHA-256 of the key, not the key)")
			}
		}
		if principal.Reserved(p.Name) && len(p.OAuthSubjects) > 0 {
			r.add(src, fp.key("oauth_subjects"), "%q is a reserved name, which no access token may claim: give this principal another name", p.Name)
		}
		for j, sub := range p.OAuthSubjects {
			sp := fp.key("oauth_subjects").index(j)
			switch {
			case !oauth:
				r.add(src, sp, "needs [auth.oauth]: oauth_subjects map access tokens to this principal")
			case sub == "":
				r.add(src, sp, "must not be empty")
			case principal.Reserved(sub):
				r.add(src, sp, "%q is reserved for the daemon's own credentials; no access token may claim it", sub)
			}
			if k, ok := subjects[sub]; ok && k != i {
				r.add(src, sp, "%q is already mapped to principals[%d]", sub, k)
			} else {
				subjects[sub] = i
			}
		}
		for k, globs := range map[string][]string{"agents": p.Agents, "tools": p.Tools, "deny_tools": p.DenyTools, "ask_tools": p.AskTools, "a2a_agents": p.A2AAgents} {
			for j, g := range globs {
				if _, err := path.Match(g, ""); err != nil {
					r.add(src, fp.key(k).index(j), "%q is not a valid glob (*, ?, [...])", g)
				}
			}
		}
	}
}

// TokenPrincipal returns the [[principals]] entry an access token whose
// principal claim is claim stands for: the entry that lists claim in its
// oauth_subjects, else the entry named claim. A reserved name ("admin",
// "local") is never a token's, even when an entry bears it.
func (c *Config) TokenPrincipal(claim string) (*principal.Principal, bool) {
	if claim == "" || principal.Reserved(claim) {
		return nil, false
	}
	for _, p := range c.Principals {
		for _, s := range p.OAuthSubjects {
			if s == claim {
				return toPrincipal(p), true
			}
		}
	}
	for _, p := range c.Principals {
		if p.Name == claim {
			return toPrincipal(p), true
		}
	}
	return nil, false
}

// PrincipalNamed returns the [[principals]] entry named name: whom a key
// minted for name stands for (never "admin" or "local", which no entry
// may be besides the api_key's own).
func (c *Config) PrincipalNamed(name string) (*principal.Principal, bool) {
	for _, p := range c.Principals {
		if p.Name == name {
			return toPrincipal(p), true
		}
	}
	return nil, false
}

func toPrincipal(p Principal) *principal.Principal {
	pr := &principal.Principal{Name: p.Name, Admin: p.Admin, Agents: p.Agents, Tools: p.Tools, DenyTools: p.DenyTools, AskTools: p.AskTools, A2AAgents: p.A2AAgents}
	if p.Admin && len(p.Agents) == 0 {
		pr.Agents = []string{"*"}
	}
	if p.Admin && len(p.Tools) == 0 {
		pr.Tools = []string{"*"}
	}
	return pr
}

// PrincipalKeys resolves the configured credentials: the top-level
// api_key as the admin principal and every [[principals]] entry. It
// returns an empty set when none is configured (no authentication), and
// an error naming the field when a key_env variable is unset: a principal
// that cannot log in is a mistake to report at start, not at first use.
func (c *Config) PrincipalKeys() (*principal.Keys, error) {
	keys := &principal.Keys{}
	if k := c.APIKeyValue(); k != "" {
		keys.Add(sha256.Sum256([]byte(k)), &principal.Principal{Name: AdminPrincipal, Admin: true, Agents: []string{"*"}, Tools: []string{"*"}})
	} else if c.APIKeyEnv != "" {
		return nil, fmt.Errorf("%s: api_key_env: the environment variable %s is not set", c.File, c.APIKeyEnv)
	}
	for i, p := range c.Principals {
		pr := toPrincipal(p)
		var sum [sha256.Size]byte
		if p.KeyEnv == "" && p.KeySHA256 == "" {
			continue // an OAuth-only principal
		}
		if p.KeySHA256 != "" {
			b, err := hex.DecodeString(strings.ToLower(p.KeySHA256))
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%s: principals[%d].key_sha256: must be 64 hex digits", c.File, i)
			}
			copy(sum[:], b)
		} else {
			v, ok := c.LookupSecret(p.KeyEnv)
			if !ok {
				return nil, fmt.Errorf("%s: principals[%d].key_env: the environment variable %s (key of principal %q) is not set", c.File, i, p.KeyEnv, p.Name)
			}
			sum = sha256.Sum256([]byte(v))
		}
		keys.Add(sum, pr)
	}
	return keys, nil
}
