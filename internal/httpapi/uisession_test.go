package httpapi

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/principal"
)

// uiFixture is the API's dashboard routes behind Protect, plus a
// state-changing route (POST /api/ping) and /mcp to aim requests at.
type uiFixture struct {
	h   http.Handler
	ui  *UISessions
	now time.Time
}

func newUIFixture(t *testing.T, keys map[string]*principal.Principal) *uiFixture {
	t.Helper()
	f := &uiFixture{now: time.Unix(1_000_000, 0)}
	k := &principal.Keys{}
	for key, p := range keys {
		k.Add(sha256.Sum256([]byte(key)), p)
	}
	ui := NewUISessions(UISessionsOptions{Keys: k, Now: func() time.Time { return f.now }})
	f.ui = ui
	mux := http.NewServeMux()
	New(Options{UI: ui}).Register(mux)
	mux.HandleFunc("POST /api/ping", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(principal.NameOf(principal.FromContext(r.Context()))))
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("mcp")) })
	f.h = Protect(mux, ProtectOptions{Principals: k, UI: ui, Hosts: HostPolicy{Names: []string{"example.com", "agentd.example"}}, Public: func(r *http.Request) bool {
		p := r.URL.Path
		for _, pp := range []string{"/api/health", UIPath + "login"} {
			if p == pp {
				return true
			}
		}
		return false
	}})
	return f
}

// req sends one request; hdr holds extra headers ("Cookie", "Origin", ...).
func (f *uiFixture) req(method, target, body string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

func errorOf(t *testing.T, w *httptest.ResponseRecorder) Error {
	t.Helper()
	var e struct{ Error Error }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %q: %v", w.Body, err)
	}
	return e.Error
}

// login logs in with key and returns the Cookie header value and the
// CSRF token.
func (f *uiFixture) login(t *testing.T, key string) (cookie, csrf string) {
	t.Helper()
	w := f.req("POST", "/api/ui/login", `{"key":"`+key+`"}`, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if w.Code != 200 {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	var info UISessionInfo
	if err := json.Unmarshal(w.Body.Bytes(), &info); err != nil || info.CSRFToken == "" {
		t.Fatalf("login body %s", w.Body)
	}
	c := w.Result().Cookies()
	if len(c) != 1 {
		t.Fatalf("login set %d cookies", len(c))
	}
	return c[0].Name + "=" + c[0].Value, info.CSRFToken
}

func TestUILoginCookie(t *testing.T) {
	alice := &principal.Principal{Name: "alice", Agents: []string{"a*"}}
	f := newUIFixture(t, map[string]*principal.Principal{"alice-key": alice})

	t.Run("wrong key names the field", func(t *testing.T) {
		w := f.req("POST", "/api/ui/login", `{"key":"nope"}`, nil)
		if e := errorOf(t, w); w.Code != 401 || e.Field != "key" || len(w.Result().Cookies()) != 0 {
			t.Fatalf("%d %+v cookies %v", w.Code, e, w.Result().Cookies())
		}
		w = f.req("POST", "/api/ui/login", `{}`, nil)
		if e := errorOf(t, w); w.Code != 400 || e.Field != "key" {
			t.Fatalf("empty key: %d %+v", w.Code, e)
		}
	})
	t.Run("cookie flags", func(t *testing.T) {
		w := f.req("POST", "/api/ui/login", `{"key":"alice-key"}`, nil)
		c := w.Result().Cookies()
		if w.Code != 200 || len(c) != 1 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		if !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/api/" || c[0].Secure || c[0].Name != SessionCookie {
			t.Fatalf("cookie over http: %+v", c[0])
		}
		if strings.Contains(w.Body.String(), "alice-key") || strings.Contains(c[0].Value, "alice-key") {
			t.Fatal("the key came back")
		}
		w = f.req("POST", "https://agentd.example/api/ui/login", `{"key":"alice-key"}`, nil)
		if c := w.Result().Cookies(); len(c) != 1 || !c[0].Secure {
			t.Fatalf("cookie over TLS is not Secure: %+v", c)
		}
	})
	t.Run("session answers who", func(t *testing.T) {
		cookie, csrf := f.login(t, "alice-key")
		w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": cookie})
		var info UISessionInfo
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &info) != nil || info.Principal != "alice" || info.Admin || info.CSRFToken != csrf || !info.AuthRequired {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		if w := f.req("GET", "/api/ui/session", "", nil); w.Code != 401 {
			t.Fatalf("without the cookie: %d", w.Code)
		}
	})
	t.Run("cookie is for the API only, and a wrong key wins", func(t *testing.T) {
		cookie, _ := f.login(t, "alice-key")
		if w := f.req("GET", "/mcp", "", map[string]string{"Cookie": cookie}); w.Code != 401 {
			t.Fatalf("/mcp with the cookie: %d", w.Code)
		}
		if w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": cookie, "Authorization": "Bearer wrong"}); w.Code != 401 {
			t.Fatalf("wrong bearer plus cookie: %d", w.Code)
		}
	})
	t.Run("logout ends the session", func(t *testing.T) {
		cookie, csrf := f.login(t, "alice-key")
		w := f.req("POST", "/api/ui/logout", "", map[string]string{"Cookie": cookie, CSRFHeader: csrf})
		if w.Code != 204 || len(w.Result().Cookies()) != 1 || w.Result().Cookies()[0].MaxAge >= 0 {
			t.Fatalf("logout: %d %v", w.Code, w.Result().Cookies())
		}
		if w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": cookie}); w.Code != 401 {
			t.Fatalf("after logout: %d", w.Code)
		}
	})
	t.Run("idle sessions expire", func(t *testing.T) {
		cookie, _ := f.login(t, "alice-key")
		f.now = f.now.Add(UISessionIdle - time.Minute)
		if w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": cookie}); w.Code != 200 {
			t.Fatalf("before the idle limit: %d", w.Code)
		}
		f.now = f.now.Add(UISessionIdle + time.Minute)
		if w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": cookie}); w.Code != 401 {
			t.Fatalf("after the idle limit: %d", w.Code)
		}
	})
}

func TestUICSRF(t *testing.T) {
	f := newUIFixture(t, map[string]*principal.Principal{"k": {Name: "bob", Admin: true}})
	cookie, csrf := f.login(t, "k")
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"cookie without the token", map[string]string{"Cookie": cookie}, 403},
		{"cookie with a wrong token", map[string]string{"Cookie": cookie, CSRFHeader: csrf + "x"}, 403},
		{"token from another site's page", map[string]string{"Cookie": cookie, CSRFHeader: csrf, "Sec-Fetch-Site": "cross-site"}, 403},
		{"token with a foreign Origin", map[string]string{"Cookie": cookie, CSRFHeader: csrf, "Origin": "https://evil.example"}, 403},
		{"same-origin page with the token", map[string]string{"Cookie": cookie, CSRFHeader: csrf, "Sec-Fetch-Site": "same-origin", "Origin": "http://example.com"}, 200},
		{"the key itself needs no token", map[string]string{"Authorization": "Bearer k"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := f.req("POST", "/api/ping", "", tc.hdr)
			if w.Code != tc.want {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, tc.want)
			}
			if w.Code == 403 && errorOf(t, w).Code != "csrf" {
				t.Fatalf("refusal %s", w.Body)
			}
			if w.Code == 200 && w.Body.String() != "bob" {
				t.Fatalf("served as %q", w.Body)
			}
		})
	}
	t.Run("GET needs no token", func(t *testing.T) {
		if w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "same-origin"}); w.Code != 200 {
			t.Fatalf("%d", w.Code)
		}
	})
	t.Run("GET from another site is refused too", func(t *testing.T) {
		// Reads across sites are refused on every route that is not
		// public: nothing of the API is another site's to embed or probe.
		w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "cross-site"})
		if w.Code != 403 || errorOf(t, w).Code != "csrf" {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
	t.Run("login from another site", func(t *testing.T) {
		w := f.req("POST", "/api/ui/login", `{"key":"k"}`, map[string]string{"Origin": "https://evil.example"})
		if w.Code != 403 || len(w.Result().Cookies()) != 0 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	})
}

// Without any key the API serves everyone on loopback as the local user;
// a browser on another site's page must not be able to use that.
func TestNoAuthRefusesCrossSiteWrites(t *testing.T) {
	f := newUIFixture(t, nil)
	if w := f.req("POST", "/api/ping", "", map[string]string{"Origin": "https://evil.example"}); w.Code != 403 {
		t.Fatalf("cross-site POST: %d %s", w.Code, w.Body)
	}
	if w := f.req("POST", "/api/ping", "", map[string]string{"Sec-Fetch-Site": "cross-site"}); w.Code != 403 {
		t.Fatalf("cross-site POST (fetch metadata): %d %s", w.Code, w.Body)
	}
	if w := f.req("POST", "/api/ping", "", nil); w.Code != 200 || w.Body.String() != "local" {
		t.Fatalf("curl-like POST: %d %s", w.Code, w.Body)
	}
	// The dashboard gets a session (and a CSRF token) without logging in.
	w := f.req("GET", "/api/ui/session", "", nil)
	var info UISessionInfo
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &info) != nil || info.Principal != "local" || info.AuthRequired || len(w.Result().Cookies()) != 1 {
		t.Fatalf("session: %d %s", w.Code, w.Body)
	}
	cookie := w.Result().Cookies()[0]
	if w := f.req("POST", "/api/ping", "", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value}); w.Code != 403 {
		t.Fatalf("cookie without the token: %d", w.Code)
	}
	if w := f.req("POST", "/api/ping", "", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value, CSRFHeader: info.CSRFToken}); w.Code != 200 {
		t.Fatalf("cookie with the token: %d", w.Code)
	}
	if w := f.req("POST", "/api/ui/login", `{"key":"x"}`, nil); w.Code != 400 {
		t.Fatalf("login without keys: %d %s", w.Code, w.Body)
	}
}

// TestUISessionsBoundedPerPrincipal: a principal that opens sessions in a
// loop (1,000 logins once logged the admin out) only ever ends its own
// oldest sessions; the admin's session survives, and the principal keeps
// at most MaxUISessionsPerPrincipal.
func TestUISessionsBoundedPerPrincipal(t *testing.T) {
	admin := &principal.Principal{Name: "admin", Admin: true}
	mallory := &principal.Principal{Name: "mallory"}
	f := newUIFixture(t, map[string]*principal.Principal{"admin-key": admin, "mallory-key": mallory})
	adminCookie, _ := f.login(t, "admin-key")
	first, _ := f.login(t, "mallory-key")
	for range 1000 {
		f.now = f.now.Add(time.Millisecond)
		f.login(t, "mallory-key")
	}
	if w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": adminCookie}); w.Code != 200 {
		t.Fatalf("the admin was logged out by another principal's logins: %d %s", w.Code, w.Body)
	}
	if w := f.req("GET", "/api/ui/session", "", map[string]string{"Cookie": first}); w.Code != 401 {
		t.Fatalf("mallory's oldest session outlived %d newer ones: %d", MaxUISessionsPerPrincipal, w.Code)
	}
	f.ui.mu.Lock()
	n := 0
	for _, s := range f.ui.byID {
		if s.p == mallory {
			n++
		}
	}
	f.ui.mu.Unlock()
	if n != MaxUISessionsPerPrincipal {
		t.Fatalf("mallory holds %d sessions, want %d", n, MaxUISessionsPerPrincipal)
	}
}
