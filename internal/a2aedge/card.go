package a2aedge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentd/agentd/internal/manifest"
)

// BearerScheme names the security scheme cards declare when the daemon
// requires an API key.
const BearerScheme a2a.SecuritySchemeName = "bearer"

// Card returns agent m's Agent Card as served at base (scheme://host).
// Every interface points at the agent's own endpoint; the same URL serves
// JSON-RPC for both 1.0 and 0.3 method names, and HTTP+JSON at 1.0 paths
// and at 0.3's /v1 paths.
func (s *Server) Card(base string, m manifest.Manifest) *a2a.AgentCard {
	endpoint := base + s.lp + "/agents/" + url.PathEscape(m.Name)
	desc := m.Description
	if desc == "" {
		desc = "agentd agent " + m.Name
	}
	in := []string{"text/plain", "application/json"}
	if m.Images {
		in = append(in, "image/png", "image/jpeg", "image/gif", "image/webp")
	}
	card := &a2a.AgentCard{
		Name:        m.Name,
		Description: desc,
		Version:     s.opts.Version,
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: endpoint, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version},
			{URL: endpoint, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
			{URL: endpoint, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version},
		},
		Capabilities:       *s.capabilities(),
		DefaultInputModes:  in,
		DefaultOutputModes: []string{"text/plain"},
		Provider:           &a2a.AgentProvider{Org: "agentd", URL: base},
		Skills:             []a2a.AgentSkill{},
	}
	for _, sk := range m.Skills {
		tags := sk.Tags
		if tags == nil {
			tags = []string{}
		}
		card.Skills = append(card.Skills, a2a.AgentSkill{
			ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: tags, Examples: sk.Examples,
		})
	}
	if m.Kind == manifest.KindMCPProxy && s.opts.ModelFree != nil {
		s.opts.ModelFree.Card(card, m)
	}
	if s.opts.BearerAuth {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{
			BearerScheme: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "agentd api_key: Authorization: Bearer <key>"},
		}
		card.SecurityRequirements = a2a.SecurityRequirementsOptions{{BearerScheme: a2a.SecuritySchemeScopes{}}}
	}
	return card
}

// OAuthScheme names the oauth2 security scheme in Agent Cards.
const OAuthScheme = "oauth2"

// addOAuth declares the oauth2 scheme (beside the bearer one) when the
// daemon accepts access tokens: a client may use either.
func (s *Server) addOAuth(ctx context.Context, card *a2a.AgentCard) {
	if s.opts.OAuth == nil {
		return
	}
	as, err := s.opts.OAuth(ctx)
	if err != nil {
		s.log.Warn("agent card: the authorization server's metadata is unavailable", "err", err)
		return
	}
	if card.SecuritySchemes == nil {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{}
	}
	card.SecuritySchemes[OAuthScheme] = a2a.OAuth2SecurityScheme{
		Description:       "OAuth 2.1 access token (JWT) from this authorization server",
		Oauth2MetadataURL: as.MetadataURL,
		Flows: a2a.AuthorizationCodeOAuthFlow{
			AuthorizationURL: as.AuthorizationURL, TokenURL: as.TokenURL,
			Scopes: map[string]string{"agentd:agents": "run every agent", "agentd:tools": "call tools", "agentd:admin": "everything"},
		},
	}
	card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{OAuthScheme: a2a.SecuritySchemeScopes{}})
}

// cardJSON renders m's card as a union of the 1.0 and 0.3 card shapes, so
// clients of either version (and the seed's, which read "url") can use it.
func (s *Server) cardJSON(r *http.Request, m manifest.Manifest) ([]byte, error) {
	card := s.Card(s.baseURL(r), m)
	s.addOAuth(r.Context(), card)
	p, ok := a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer)
	if !ok {
		return json.Marshal(card)
	}
	b, err := p.CardJSON(context.WithoutCancel(r.Context()))
	if err != nil {
		return nil, fmt.Errorf("render card of agent %q: %w", m.Name, err)
	}
	return b, nil
}

func (s *Server) writeCard(w http.ResponseWriter, r *http.Request, m manifest.Manifest) {
	b, err := s.cardJSON(r, m)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	// Cards are public documents: any origin may read them.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// baseURL is PublicURL, or else the scheme and host the request came
// to, which the admission layer has checked is one of the daemon's own
// names (loopback, the listen host, [server] allowed_hosts), so a
// request cannot make a card point elsewhere. X-Forwarded-* headers are ignored on purpose: any client can
// send them, and a card must not point wherever a caller says.
func (s *Server) baseURL(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
