package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/principal"
)

// The dashboard's browser sessions. A browser must not hold the API key
// where scripts (or other sites) can read it, so the login form exchanges
// the key once for a random session id in a cookie that is HttpOnly (no
// script reads it), SameSite=Strict (no other site's page sends it),
// Secure behind TLS, and scoped to /api/ (never sent to /mcp or A2A).
// Every state-changing request made with the cookie must also carry the
// session's CSRF token in a header, which only a same-origin script can
// have read, and pass the browser's Origin/Sec-Fetch-Site check.

// SessionCookie is the name of the dashboard's session cookie.
const SessionCookie = "agentd_session"

// CSRFHeader carries the session's CSRF token on state-changing requests.
const CSRFHeader = "X-CSRF-Token"

// Session lifetimes: idle sessions end after UISessionIdle, every session
// after UISessionMax; a restart of the daemon ends them all (they live in
// memory only).
const (
	UISessionIdle = 12 * time.Hour
	UISessionMax  = 7 * 24 * time.Hour
	// MaxUISessionsPerPrincipal bounds one principal's open sessions: a
	// new login beyond it ends that principal's least recently used
	// session, never another principal's (a principal opening sessions
	// in a loop once logged the admin out). Principals come from the
	// config's keys, so this also bounds the table.
	MaxUISessionsPerPrincipal = 32
)

// UISessionsOptions configure UISessions.
type UISessionsOptions struct {
	// Keys are the keys the login form accepts (the same as the API's).
	Keys *principal.Keys
	// Secure forces the cookie's Secure flag even when the request did not
	// come over TLS (the daemon behind a TLS proxy: public_url is https).
	Secure bool
	// AuthFailures counts wrong keys given to the login form; nil counts
	// none.
	AuthFailures *AuthLimiter
	// Now is the clock, for tests; nil = time.Now.
	Now func() time.Time
}

// UISessions are the dashboard's login sessions, in memory.
type UISessions struct {
	opts UISessionsOptions

	mu   sync.Mutex
	byID map[[sha256.Size]byte]*uiSession
}

type uiSession struct {
	p       *principal.Principal
	csrf    string
	created time.Time
	seen    time.Time
}

// NewUISessions returns an empty session table.
func NewUISessions(opts UISessionsOptions) *UISessions {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &UISessions{opts: opts, byID: map[[sha256.Size]byte]*uiSession{}}
}

// AuthRequired reports whether a key is needed to use the dashboard.
func (s *UISessions) AuthRequired() bool { return s.opts.Keys.Len() > 0 }

// login checks key and opens a session for its principal; an error when
// a minted key could not be checked.
func (s *UISessions) login(ctx context.Context, key string) (id string, sess *uiSession, ok bool, err error) {
	p, err := s.opts.Keys.Resolve(ctx, key)
	if err != nil || p == nil {
		return "", nil, false, err
	}
	id, sess = s.open(p)
	return id, sess, true, nil
}

// open starts a session for p and returns its id (the cookie's value).
func (s *UISessions) open(p *principal.Principal) (string, *uiSession) {
	id, csrf := randomToken(), randomToken()
	now := s.opts.Now()
	sess := &uiSession{p: p, csrf: csrf, created: now, seen: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	var oldest [sha256.Size]byte
	var at time.Time
	n := 0
	for h, x := range s.byID {
		// By name: a principal resolved from a minted key is a value
		// of its own on every request.
		if x.p.Name != p.Name {
			continue
		}
		n++
		if at.IsZero() || x.seen.Before(at) {
			oldest, at = h, x.seen
		}
	}
	if n >= MaxUISessionsPerPrincipal {
		delete(s.byID, oldest)
	}
	s.byID[sha256.Sum256([]byte(id))] = sess
	return id, sess
}

// lookup returns the live session whose id is the cookie's value.
func (s *UISessions) lookup(id string) *uiSession {
	if s == nil || id == "" {
		return nil
	}
	h := sha256.Sum256([]byte(id))
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.byID[h]
	if sess == nil {
		return nil
	}
	if now.Sub(sess.seen) > UISessionIdle || now.Sub(sess.created) > UISessionMax {
		delete(s.byID, h)
		return nil
	}
	sess.seen = now
	return sess
}

func (s *UISessions) logout(id string) {
	s.mu.Lock()
	delete(s.byID, sha256.Sum256([]byte(id)))
	s.mu.Unlock()
}

// EndWhere ends the dashboard sessions whose principal matches: a config
// reload that changed or removed a principal ends its sessions, which
// would otherwise keep the old rights until they expire. It returns how
// many it ended.
func (s *UISessions) EndWhere(match func(*principal.Principal) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for h, sess := range s.byID {
		if match(sess.p) {
			delete(s.byID, h)
			n++
		}
	}
	return n
}

// sweep drops expired sessions; the caller holds s.mu.
func (s *UISessions) sweep(now time.Time) {
	for h, x := range s.byID {
		if now.Sub(x.seen) > UISessionIdle || now.Sub(x.created) > UISessionMax {
			delete(s.byID, h)
		}
	}
}

// cookie builds the session cookie for r's connection.
func (s *UISessions) cookie(r *http.Request, id string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: SessionCookie, Value: id, Path: "/api/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.opts.Secure || r.TLS != nil,
	}
}

// fromCookie returns the session r's cookie names, if any. A session
// opened with a minted key lasts while the key does: a revoked key's
// session ends at its next request, on whichever replica it lands (the
// key's state is read from the shared store, not held here).
func (s *UISessions) fromCookie(r *http.Request) (string, *uiSession) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return "", nil
	}
	sess := s.lookup(c.Value)
	if sess == nil || sess.p.KeyID == "" {
		return c.Value, sess
	}
	live, err := s.opts.Keys.Live(r.Context(), sess.p)
	if err != nil {
		return c.Value, nil // unknown now: not this time, and not ended
	}
	if !live {
		s.logout(c.Value)
		return c.Value, nil
	}
	return c.Value, sess
}

// checkCSRF reports whether a state-changing request made with sess's
// cookie carries its token.
func (sess *uiSession) checkCSRF(r *http.Request) bool {
	got := r.Header.Get(CSRFHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) == 1
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// safeMethod reports whether m changes nothing (RFC 9110 safe methods).
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// UIPath is the prefix of the dashboard's own API routes (login, logout,
// the session); the cookie is honoured below /api/ only.
const UIPath = "/api/ui/"

// cookieScope reports whether the session cookie may authenticate a
// request for path: the REST API only, never /mcp or A2A.
func cookieScope(path string) bool { return strings.HasPrefix(path, "/api/") }

// UISessionInfo is the body of GET /api/ui/session and POST /api/ui/login:
// who the browser is signed in as, and the token its state-changing
// requests must send in X-CSRF-Token.
type UISessionInfo struct {
	Principal    string   `json:"principal"`
	Admin        bool     `json:"admin"`
	Agents       []string `json:"agents"`
	Tools        []string `json:"tools"`
	AuthRequired bool     `json:"auth_required"`
	CSRFToken    string   `json:"csrf_token"`
}

func (s *UISessions) info(sess *uiSession) UISessionInfo {
	return UISessionInfo{Principal: sess.p.Name, Admin: sess.p.Admin, Agents: orEmpty(sess.p.Agents), Tools: orEmpty(sess.p.Tools),
		AuthRequired: s.AuthRequired(), CSRFToken: sess.csrf}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// uiSession answers who the browser is. Without keys configured there is
// nothing to log in with: the first visit opens a session for the local
// user, so the dashboard has a CSRF token like any other.
func (a *API) uiSession(w http.ResponseWriter, r *http.Request) error {
	s := a.opts.UI
	if s == nil {
		return errorf(http.StatusNotFound, "not_found", "the dashboard is not enabled")
	}
	if _, sess := s.fromCookie(r); sess != nil {
		writeJSON(w, http.StatusOK, s.info(sess))
		return nil
	}
	p := who(r)
	if s.AuthRequired() && p == principal.Local {
		return errorf(http.StatusUnauthorized, "unauthorized", "log in with an API key")
	}
	// A bearer client (or the local user) asking for a browser session:
	// open one for the principal it authenticated as.
	id, sess := s.open(p)
	http.SetCookie(w, s.cookie(r, id, int(UISessionMax.Seconds())))
	writeJSON(w, http.StatusOK, s.info(sess))
	return nil
}

// LoginRequest is the body of POST /api/ui/login.
type LoginRequest struct {
	Key string `json:"key"`
}

func (a *API) uiLogin(w http.ResponseWriter, r *http.Request) error {
	s := a.opts.UI
	if s == nil {
		return errorf(http.StatusNotFound, "not_found", "the dashboard is not enabled")
	}
	var req LoginRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Key) == "" {
		return &Error{Status: http.StatusBadRequest, Code: "invalid", Message: "key: required", Field: "key"}
	}
	if !s.AuthRequired() {
		return errorf(http.StatusBadRequest, "invalid", "this daemon has no api_key or principals: there is nothing to log in to")
	}
	id, sess, ok, err := s.login(r.Context(), strings.TrimSpace(req.Key))
	if err != nil {
		return errorf(http.StatusServiceUnavailable, "unavailable", "cannot check the key now (the store is unavailable): retry")
	}
	if !ok {
		// A wrong key here is a guess like a wrong bearer key: it counts
		// against the same per-address budget (Protect refuses the
		// address's next logins once it is spent).
		s.opts.AuthFailures.Failed(ClientAddr(r.Context()))
		return &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "wrong key", Field: "key"}
	}
	http.SetCookie(w, s.cookie(r, id, int(UISessionMax.Seconds())))
	writeJSON(w, http.StatusOK, s.info(sess))
	return nil
}

func (a *API) uiLogout(w http.ResponseWriter, r *http.Request) error {
	s := a.opts.UI
	if s == nil {
		return errorf(http.StatusNotFound, "not_found", "the dashboard is not enabled")
	}
	if id, _ := s.fromCookie(r); id != "" {
		s.logout(id)
	}
	http.SetCookie(w, s.cookie(r, "", -1))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
