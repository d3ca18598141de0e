package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// MCP authorization (OAuth 2.1) for http servers with an [mcp_servers.oauth]
// table. The go-sdk's AuthorizationCodeHandler does the protocol: metadata
// discovery, client registration, PKCE, scope selection and step-up. What
// agentd adds is where the user is sent (OAuthOptions.Authorize), that a
// connect attempt waits for the user without its usual deadline, and that
// the grant survives a restart: the client registration and the tokens are
// kept in one 0600 file per server, and refreshed tokens are written back.

// ErrAuthorizationRequired is the error of a connect attempt that needs the
// user to authorize agentd when nothing can ask them (no Authorize
// function, or the user did not answer in time).
var ErrAuthorizationRequired = errors.New("authorization required")

// OAuthOptions configure MCP authorization for the servers that use it.
type OAuthOptions struct {
	// RedirectURL is where the authorization server sends the browser
	// back; a server's own redirect_url takes precedence.
	RedirectURL string
	// Authorize sends the user to authURL (logging it, opening a browser
	// or following it headlessly) and returns the authorization response
	// read from the redirect. It may block until the user has answered;
	// ctx ends when the attempt is abandoned. nil makes servers that need
	// authorization fail with ErrAuthorizationRequired.
	Authorize func(ctx context.Context, server, authURL string) (*auth.AuthorizationResult, error)
	// TokenDir holds one file per server with its client registration and
	// tokens (mode 0600). Empty keeps them in memory only.
	TokenDir string
	// Wait bounds how long a connect attempt waits for the user to
	// authorize; default 10 minutes.
	Wait time.Duration
}

// grant is what is kept of an authorization between restarts.
type grant struct {
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	RedirectURL  string        `json:"redirect_url,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

func (g *grant) oauthConfig() *oauth2.Config {
	return &oauth2.Config{
		ClientID: g.ClientID, ClientSecret: g.ClientSecret, RedirectURL: g.RedirectURL, Scopes: g.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: g.AuthURL, TokenURL: g.TokenURL, AuthStyle: oauth2.AuthStyle(g.AuthStyle)},
	}
}

// oauthState is one server's authorization: the handler, kept across
// reconnects so that a token obtained once is reused, and where its grant
// is saved.
type oauthState struct {
	handler *auth.AuthorizationCodeHandler
	path    string // "" = not persisted

	mu      sync.Mutex
	pending string // the authorization URL the user has been sent to, while waiting
}

// authorizeURL is the URL the user must open, while a connect attempt
// waits for them; "" otherwise.
func (o *oauthState) authorizeURL() string {
	if o == nil {
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pending
}

// oauthHandler returns the server's handler, building it on first use with
// the SSRF-guarded client hc for every request it makes.
func (s *server) oauthHandler(hc *http.Client) (*auth.AuthorizationCodeHandler, error) {
	s.oauthMu.Lock()
	defer s.oauthMu.Unlock()
	if s.oauth != nil {
		return s.oauth.handler, nil
	}
	oc, opts := s.cfg.OAuth, s.m.opts.OAuth
	st := &oauthState{}
	if opts.TokenDir != "" {
		st.path = filepath.Join(opts.TokenDir, s.name+".json")
	}
	redirect := oc.RedirectURL
	if redirect == "" {
		redirect = opts.RedirectURL
	}
	if redirect == "" {
		return nil, errors.New("oauth: no redirect URL (set redirect_url)")
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         redirect,
		RequestRefreshToken: true,
		Client:              hc,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return s.fetchCode(ctx, st, args.URL)
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			g := &grant{
				ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL,
				AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes, RedirectURL: c.RedirectURL,
			}
			return s.savingSource(st, g, c.TokenSource(ctx, tok), tok, true), nil
		},
	}
	if len(oc.Scopes) > 0 {
		scopes := oc.Scopes
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	switch {
	case oc.ClientMetadataURL != "":
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: oc.ClientMetadataURL}
	case oc.ClientID != "":
		creds := &oauthex.ClientCredentials{ClientID: oc.ClientID}
		if oc.ClientSecretEnv != "" {
			secret, ok := s.lookupEnv(oc.ClientSecretEnv)
			if !ok || secret == "" {
				return nil, fmt.Errorf("oauth: environment variable %s (client_secret_env) is not set", oc.ClientSecretEnv)
			}
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
		}
		cfg.PreregisteredClient = creds
	}
	if oc.ClientID == "" {
		// Registration is also the fallback when the metadata document
		// is not supported by the authorization server.
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:              s.m.opts.ClientName,
			RedirectURIs:            []string{redirect},
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	if g := s.loadGrant(st); g != nil {
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
		cfg.InitialTokenSource = s.savingSource(st, g, g.oauthConfig().TokenSource(ctx, g.Token), g.Token, false)
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	st.handler = h
	s.oauth = st
	return h, nil
}

func (s *server) lookupEnv(name string) (string, bool) {
	if s.m.opts.LookupEnv == nil {
		return "", false
	}
	return s.m.opts.LookupEnv(name)
}

// fetchCode sends the user to authURL through OAuthOptions.Authorize. The
// connect attempt's deadline is paused meanwhile: people take longer than
// a handshake.
func (s *server) fetchCode(ctx context.Context, st *oauthState, authURL string) (*auth.AuthorizationResult, error) {
	authorize := s.m.opts.OAuth.Authorize
	if authorize == nil {
		return nil, fmt.Errorf("%w: MCP server %q needs the user's approval and nothing here can ask for it", ErrAuthorizationRequired, s.name)
	}
	if d := deadlineFrom(ctx); d != nil {
		d.pause()
		defer d.resume()
	}
	wait := s.m.opts.OAuth.Wait
	if wait <= 0 {
		wait = 10 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	st.mu.Lock()
	st.pending = authURL
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		st.pending = ""
		st.mu.Unlock()
	}()
	// The URL carries no secret (PKCE keeps the verifier here); the
	// operator needs it to approve.
	s.log.Warn("MCP server needs authorization: open this URL in a browser", "url", authURL)
	res, err := authorize(wctx, s.name, authURL)
	if err != nil {
		if errors.Is(wctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("%w: nobody approved MCP server %q within %s", ErrAuthorizationRequired, s.name, wait)
		}
		return nil, err
	}
	return res, nil
}

// loadGrant reads the saved grant, if any; a damaged file is logged and
// ignored (the user is asked again).
func (s *server) loadGrant(st *oauthState) *grant {
	if st.path == "" {
		return nil
	}
	b, err := os.ReadFile(st.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var g grant
	if err == nil {
		err = json.Unmarshal(b, &g)
	}
	if err == nil && (g.Token == nil || g.TokenURL == "" || g.ClientID == "") {
		err = errors.New("incomplete grant")
	}
	if err != nil {
		s.log.Warn("ignoring saved OAuth grant", "file", st.path, "err", err)
		return nil
	}
	return &g
}

// savingSource wraps ts so that every token other than first is saved with
// g; first is saved too when fresh (just obtained, not read from the file).
func (s *server) savingSource(st *oauthState, g *grant, ts oauth2.TokenSource, first *oauth2.Token, fresh bool) oauth2.TokenSource {
	ss := &savingSource{inner: ts, save: func(t *oauth2.Token) {
		g.Token = t
		if err := saveGrant(st.path, g); err != nil {
			s.log.Warn("could not save OAuth tokens; the next start will ask again", "file", st.path, "err", err)
		}
	}}
	if first != nil {
		ss.last = first.AccessToken
		if fresh {
			ss.save(first)
		}
	}
	return ss
}

type savingSource struct {
	inner oauth2.TokenSource
	save  func(*oauth2.Token)

	mu   sync.Mutex
	last string
}

func (ss *savingSource) Token() (*oauth2.Token, error) {
	t, err := ss.inner.Token()
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if t.AccessToken != ss.last {
		ss.last = t.AccessToken
		ss.save(t)
	}
	return t, nil
}

// saveGrant writes g to path atomically, readable by its owner only.
func saveGrant(path string, g *grant) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".grant-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// connectDeadline is a connect attempt's deadline that the authorization
// flow can pause: it cancels the attempt when its timer fires.
type connectDeadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	d      time.Duration
	paused int
}

type deadlineKey struct{}

// withConnectDeadline returns a ctx cancelled after d unless paused, and
// its cancel function.
func withConnectDeadline(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	cd := &connectDeadline{d: d}
	cd.timer = time.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	ctx = context.WithValue(ctx, deadlineKey{}, cd)
	return ctx, func() {
		cd.timer.Stop()
		cancel(context.Canceled)
	}
}

func deadlineFrom(ctx context.Context) *connectDeadline {
	d, _ := ctx.Value(deadlineKey{}).(*connectDeadline)
	return d
}

func (c *connectDeadline) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused++; c.paused == 1 {
		c.timer.Stop()
	}
}

// resume restarts the whole deadline: what follows the user's approval
// (token exchange, then the handshake) gets its usual time.
func (c *connectDeadline) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused--; c.paused == 0 {
		c.timer.Reset(c.d)
	}
}
