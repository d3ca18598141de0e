package mcpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func TestCallbacks(t *testing.T) {
	const authURL = "https://as.example/authorize?client_id=c&state=s1"
	tests := []struct {
		name       string
		query      string
		wantStatus int
		wantCode   string
		wantErr    string
	}{
		{"code delivered", "state=s1&code=abc&iss=https%3A%2F%2Fas.example", http.StatusOK, "abc", ""},
		{"refusal delivered", "state=s1&error=access_denied&error_description=no", http.StatusOK, "", "access_denied: no"},
		{"no code", "state=s1", http.StatusBadRequest, "", "without a code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCallbacks()
			type result struct {
				code string
				err  error
			}
			done := make(chan result, 1)
			go func() {
				res, err := c.Authorize(t.Context(), "srv", authURL)
				r := result{err: err}
				if res != nil {
					r.code = res.Code
				}
				done <- r
			}()
			// A redirect with a state nobody waits for is refused, also
			// while a real one is pending.
			waitPending(t, c, "s1")
			rec := httptest.NewRecorder()
			c.ServeHTTP(rec, httptest.NewRequest("GET", CallbackPath+"?state=forged&code=x", nil))
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("unknown state answered %d", rec.Code)
			}
			rec = httptest.NewRecorder()
			c.ServeHTTP(rec, httptest.NewRequest("GET", CallbackPath+"?"+tt.query, nil))
			if rec.Code != tt.wantStatus {
				t.Errorf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			r := <-done
			if r.code != tt.wantCode || (tt.wantErr == "") != (r.err == nil) || (r.err != nil && !strings.Contains(r.err.Error(), tt.wantErr)) {
				t.Errorf("got code %q err %v, want code %q err containing %q", r.code, r.err, tt.wantCode, tt.wantErr)
			}
			// The state is used up.
			rec = httptest.NewRecorder()
			c.ServeHTTP(rec, httptest.NewRequest("GET", CallbackPath+"?state=s1&code=again", nil))
			if rec.Code != http.StatusBadRequest {
				t.Errorf("replayed state answered %d", rec.Code)
			}
		})
	}
}

func TestCallbacksAbandoned(t *testing.T) {
	c := NewCallbacks()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Authorize(ctx, "srv", "https://as.example/authorize?state=s"); err == nil {
		t.Fatal("an abandoned authorization returned no error")
	}
	if _, err := c.Authorize(t.Context(), "srv", "https://as.example/authorize"); err == nil {
		t.Fatal("an authorization URL without state was accepted")
	}
}

func waitPending(t *testing.T, c *Callbacks, state string) {
	t.Helper()
	waitFor(t, 5*time.Second, "the authorization to be pending", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.pending[state]
		return ok
	})
}

func TestSaveGrantOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "oauth", "srv.json")
	g := &grant{ClientID: "c", TokenURL: "https://as.example/token", Token: &oauth2.Token{AccessToken: "secret-token"}}
	if err := saveGrant(path, g); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v: readable by others", p, perm)
		}
	}
}
