package webui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func serve(t *testing.T, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	mux := http.NewServeMux()
	New().Register(mux)
	r := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w
}

func TestServesAssetsWithSecurityHeaders(t *testing.T) {
	for _, tc := range []struct {
		path, ctype, contains string
	}{
		{"/", "text/html; charset=utf-8", `<script type="module" src="/ui/js/app.js">`},
		{"/ui/js/app.js", "text/javascript; charset=utf-8", "export const PAGES"},
		{"/ui/app.css", "text/css; charset=utf-8", "--accent"},
		{"/ui/icon.svg", "image/svg+xml", "<svg"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			w := serve(t, "GET", tc.path, nil)
			if w.Code != 200 || w.Header().Get("Content-Type") != tc.ctype || !strings.Contains(w.Body.String(), tc.contains) {
				t.Fatalf("%d %q %.80q", w.Code, w.Header().Get("Content-Type"), w.Body)
			}
			csp := w.Header().Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "connect-src 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-") || strings.Contains(csp, "*") {
				t.Errorf("CSP %q allows more than the daemon's own origin", csp)
			}
			if w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("headers %v", w.Header())
			}
			etag := w.Header().Get("ETag")
			if w := serve(t, "GET", tc.path, map[string]string{"If-None-Match": etag}); etag == "" || w.Code != http.StatusNotModified {
				t.Errorf("revalidation with ETag %q: %d", etag, w.Code)
			}
		})
	}
	for _, p := range []string{"/ui/nope.js", "/ui/", "/ui/js/", "/ui/index.htm"} {
		if w := serve(t, "GET", p, nil); w.Code != 404 {
			t.Errorf("%s: %d, want 404", p, w.Code)
		}
	}
	if w := serve(t, "POST", "/", nil); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", w.Code)
	}
}

// TestAssetsKeepThePolicy reads every embedded asset: no inline script,
// style or event handler (the CSP would block them anyway, so this keeps
// the source honest), nothing fetched from another origin (the dashboard
// works offline), and no API text ever parsed as HTML.
func TestAssetsKeepThePolicy(t *testing.T) {
	sub, _ := fs.Sub(assets, "assets")
	inlineScript := regexp.MustCompile(`<script(?:\s[^>]*)?>`)
	handlerAttr := regexp.MustCompile(`(?i)<[^>]+\son[a-z]+\s*=`)
	remote := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[/"')]`)
	htmlSinks := regexp.MustCompile(`\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*'style'|\.style\.|\bstyle:`)
	n := 0
	err := fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		s := string(b)
		if strings.HasSuffix(p, ".html") {
			for _, tag := range inlineScript.FindAllString(s, -1) {
				if !strings.Contains(tag, ` src="/ui/`) {
					t.Errorf("%s: inline or foreign script %q", p, tag)
				}
			}
			if strings.Contains(s, "<style") || strings.Contains(s, " style=") {
				t.Errorf("%s: inline style", p)
			}
			if m := handlerAttr.FindString(s); m != "" {
				t.Errorf("%s: inline event handler %q", p, m)
			}
		}
		for _, m := range remote.FindAllString(s, -1) {
			if !strings.Contains(m, "www.w3.org") { // the SVG namespace, not a fetch
				t.Errorf("%s: refers to another origin: %q", p, m)
			}
		}
		if strings.HasSuffix(p, ".js") {
			if m := htmlSinks.FindString(s); m != "" {
				t.Errorf("%s: uses %q; build DOM nodes with h() instead", p, m)
			}
		}
		return nil
	})
	if err != nil || n < 5 {
		t.Fatalf("walked %d assets: %v", n, err)
	}
}
