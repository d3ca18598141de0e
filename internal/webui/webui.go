// Package webui is agentd's web dashboard: static assets (HTML, CSS and
// plain ES modules, no build step) embedded in the binary and served at
// "/" by the daemon, so `go build` alone yields a working dashboard that
// needs no network at run time. The dashboard talks to the daemon only
// through the JSON API and its SSE streams (package httpapi), which also
// authenticate it (a login form exchanges the API key for a session
// cookie) and protect it against CSRF.
//
// Every response carries a strict Content-Security-Policy: scripts,
// styles and connections from the daemon's own origin only, no inline
// script or style, no framing.
package webui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// Prefix is the path below which the assets are served; the index is
// served at "/".
const Prefix = "/ui/"

// CSP is the Content-Security-Policy of every dashboard response. Images
// may be data: URLs (pictures in chats and tool results arrive inline).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Router is where Register adds its routes.
type Router interface {
	Handle(pattern string, h http.Handler)
}

// Handler serves the dashboard.
type Handler struct {
	files fs.FS
	etags map[string]string
}

// New returns the dashboard's handler over the embedded assets.
func New() *Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	h := &Handler{files: sub, etags: map[string]string{}}
	_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h.etags[p] = `"` + hex.EncodeToString(sum[:8]) + `"`
		return nil
	})
	return h
}

// Register adds the dashboard's routes: the index at "/" and the assets
// below Prefix.
func (h *Handler) Register(mux Router) {
	mux.Handle("GET /{$}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, "index.html") }))
	mux.Handle("GET "+Prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.serve(w, r, strings.TrimPrefix(r.URL.Path, Prefix))
	}))
}

// Headers sets the dashboard's security headers on w.
func Headers(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, name string) {
	Headers(w)
	name = path.Clean(name)
	etag, ok := h.etags[name]
	if !ok || strings.HasPrefix(name, ".") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	b, err := fs.ReadFile(h.files, name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if path.Ext(name) == ".js" {
		ct = "text/javascript; charset=utf-8" // some systems' mime tables lack it
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	// Revalidated on every load (the ETag makes that cheap), so a new
	// binary's dashboard is never mixed with a cached old module.
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write(b)
}
