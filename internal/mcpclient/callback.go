package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// CallbackPath is where a daemon receives the browser back from an
// authorization server (OAuthOptions.RedirectURL ends with it).
const CallbackPath = "/oauth/callback"

// Callbacks pairs authorization requests with the redirects that answer
// them: Authorize (for OAuthOptions.Authorize) waits for the redirect
// carrying its state, which ServeHTTP receives at the redirect URL. The
// route needs no API key (the browser has none): the state, random per
// request and known only to the waiting flow and the user's browser, is
// what binds a redirect to a request, and a redirect with an unknown
// state is refused.
type Callbacks struct {
	mu      sync.Mutex
	pending map[string]chan callbackResult
}

type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// NewCallbacks returns an empty set of pending authorizations.
func NewCallbacks() *Callbacks {
	return &Callbacks{pending: map[string]chan callbackResult{}}
}

// Authorize waits until the redirect for authURL's state arrives or ctx
// ends. The user opens authURL themselves (the caller has logged it and
// the server status shows it).
func (c *Callbacks) Authorize(ctx context.Context, server, authURL string) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("authorization URL for %q: %w", server, err)
	}
	state := u.Query().Get("state")
	if state == "" {
		return nil, fmt.Errorf("authorization URL for %q has no state", server)
	}
	ch := make(chan callbackResult, 1)
	c.mu.Lock()
	c.pending[state] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, state)
		c.mu.Unlock()
	}()
	select {
	case r := <-ch:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ServeHTTP receives the authorization server's redirect.
func (c *Callbacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	c.mu.Lock()
	ch, ok := c.pending[state]
	if ok {
		delete(c.pending, state)
	}
	c.mu.Unlock()
	if !ok || state == "" {
		page(w, http.StatusBadRequest, "This authorization is unknown or already used. Start again from agentd.")
		return
	}
	if e := q.Get("error"); e != "" {
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		ch <- callbackResult{err: errors.New("authorization refused: " + msg)}
		page(w, http.StatusOK, "Authorization was refused ("+msg+"). agentd will not connect to this server.")
		return
	}
	code := q.Get("code")
	if code == "" {
		ch <- callbackResult{err: errors.New("authorization redirect without a code")}
		page(w, http.StatusBadRequest, "The authorization server sent no code.")
		return
	}
	ch <- callbackResult{res: &auth.AuthorizationResult{Code: code, State: state, Iss: q.Get("iss")}}
	page(w, http.StatusOK, "agentd is authorized. You can close this tab.")
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>agentd</title><p>%s</p>\n", html.EscapeString(msg))
}
