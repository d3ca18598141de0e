package daemon

import (
	"net/http"
	"slices"
	"sync"

	"github.com/agentd/agentd/internal/httpapi"
)

// routeMux is the daemon's ServeMux. It records every pattern it is given,
// so the set of routes can be enumerated (the auth matrix test proves each
// non-public one refuses a missing or wrong key).
type routeMux struct {
	*http.ServeMux

	mu       sync.Mutex
	patterns []string
}

func newRouteMux() *routeMux { return &routeMux{ServeMux: http.NewServeMux()} }

// Handle registers h for pattern.
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.record(pattern)
	m.ServeMux.Handle(pattern, tagged(pattern, h))
}

// HandleFunc registers f for pattern.
func (m *routeMux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.record(pattern)
	m.ServeMux.Handle(pattern, tagged(pattern, http.HandlerFunc(f)))
}

// tagged tells the observing middleware which pattern matched, for the
// route label of metrics and spans (a path would be unbounded).
func tagged(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.TagRoute(w, pattern)
		h.ServeHTTP(w, r)
	})
}

func (m *routeMux) record(p string) {
	m.mu.Lock()
	m.patterns = append(m.patterns, p)
	m.mu.Unlock()
}

// Routes returns every registered ServeMux pattern ("GET /api/agents",
// "/mcp", ...), sorted.
func (d *Daemon) Routes() []string {
	d.mux.mu.Lock()
	defer d.mux.mu.Unlock()
	out := slices.Clone(d.mux.patterns)
	slices.Sort(out)
	return out
}
