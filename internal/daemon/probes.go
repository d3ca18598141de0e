package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/agentd/agentd/internal/httpapi"
)

// Probes for orchestrators and load balancers. /api/health only says the
// process answers, whatever state it is in: a replica whose database was
// gone stayed in rotation, and every request it took failed. So:
//
//   - GET /livez: the process serves HTTP. A failing liveness probe gets
//     the process restarted, so it checks nothing a restart cannot fix
//     (a database outage is not one).
//   - GET /readyz: the replica can do work now: its store answers within
//     readyTimeout and it is not draining. A failing readiness probe
//     takes it out of rotation until it passes again; each probe asks
//     the store afresh, so readiness follows an outage within one probe
//     period.
//
// Both are public (probes carry no keys) and never rate limited.

// readyTimeout bounds the store's answer to a readiness probe: a
// database that takes longer is as good as gone for the requests the
// replica would take.
const readyTimeout = 2 * time.Second

// Readiness is the body of /readyz.
type Readiness struct {
	Status string `json:"status"` // "ready" or "not_ready"
	// Checks names each check and its state: store "ok" or
	// "unreachable", draining "no" or "yes".
	Checks map[string]string `json:"checks"`
}

func (d *Daemon) mountProbes() {
	d.mux.HandleFunc("GET /livez", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "live"})
	})
	d.mux.HandleFunc("GET /readyz", d.readyz)
}

func (d *Daemon) readyz(w http.ResponseWriter, r *http.Request) {
	res := Readiness{Status: "ready", Checks: map[string]string{"store": "ok", "draining": "no"}}
	if d.draining.Load() {
		res.Status, res.Checks["draining"] = "not_ready", "yes"
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := d.Store.Ping(ctx); err != nil {
		// The error may name the database's host and user: it goes to
		// the log, the probe's answer says only what failed.
		d.log.WarnContext(r.Context(), "readiness: the store does not answer", "err", err)
		res.Status, res.Checks["store"] = "not_ready", "unreachable"
	}
	status := http.StatusOK
	if res.Status != "ready" {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, status, res)
}
