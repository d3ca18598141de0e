package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/principal"
)

// ReloadReport says what a config reload changed: what it applied to the
// running daemon, which changed keys only a restart applies (the daemon
// keeps their old values), and what failed while applying.
type ReloadReport struct {
	File    string   `json:"file"`
	Applied []string `json:"applied"`
	Restart []string `json:"needs_restart"`
	Failed  []string `json:"failed"`
}

// liveKeys are the config keys a reload applies to the running daemon;
// every other changed key is reported as needing a restart. The comments
// say how each goes live (docs/config.md, Reloading the config).
var liveKeys = map[string]bool{
	"agents":              true, // the kernel's agent directory (SetFixed)
	"agents_dir":          true, // its agents are part of "agents"
	"providers":           true, // built on first use from the running config (a changed one is built again)
	"mcp_servers":         true, // the MCP client manager, server by server
	"principals":          true, // the keys the admission layer resolves
	"api_key":             true,
	"api_key_env":         true,
	"limits.rate_per_sec": true, // the admission layer's rate limiters
	"limits.burst":        true,
	"sandbox.shell":       true, // read per shell command / server start
	"sandbox.agents":      true,
}

// errReloadBusy is returned when a reload is already running.
var errReloadBusy = errors.New("a reload is already running")

// ReloadFromFile rereads the config file the daemon was started with and
// applies it (Reload). SIGHUP and POST /api/admin/reload both come here.
func (d *Daemon) ReloadFromFile(ctx context.Context) (ReloadReport, error) {
	next, err := d.Config().Reread()
	if err != nil {
		return ReloadReport{File: d.Config().File}, err
	}
	if d.adjust != nil {
		d.adjust(next)
	}
	return d.Reload(ctx, next)
}

// Reload applies next to the running daemon without dropping a session
// or stream: the liveKeys (agents, providers, MCP servers, principals,
// [limits] rate_per_sec and burst, the shell's sandbox profiles) go live
// through their components; every other changed key keeps its running
// value and is reported as needing a restart. An error (next's
// principals cannot be resolved) changes nothing. The config
// Config() returns is swapped whole: readers see the old one or the new
// one, never half of each.
func (d *Daemon) Reload(ctx context.Context, next *config.Config) (ReloadReport, error) {
	if !d.reloadMu.TryLock() {
		return ReloadReport{File: next.File}, errReloadBusy
	}
	defer d.reloadMu.Unlock()
	cur := d.Config()
	rep := ReloadReport{File: next.File, Applied: []string{}, Restart: []string{}, Failed: []string{}}
	changed := diffConfig(cur, next)

	// Everything that can fail is resolved before anything changes.
	var keys *principal.Keys
	if slices.ContainsFunc(changed, isPrincipalKey) {
		k, err := next.PrincipalKeys()
		if err != nil {
			return rep, fmt.Errorf("principals: %w", err)
		}
		// Turning authentication on or off changes which routes admit
		// whom and whether the listener may face the network: the
		// admission layer decides that once, at start.
		if (k.Len() == 0) != (d.keys.Len() == 0) {
			for i, c := range changed {
				if isPrincipalKey(c) {
					changed[i] = "!" + c
				}
			}
		} else {
			keys = k
		}
	}

	// merged is next with the restart-only keys put back to their
	// running values: what such a key says stays as the daemon does it.
	merged := *next
	for _, c := range changed {
		if strings.HasPrefix(c, "!") {
			c = strings.TrimPrefix(c, "!")
			setKey(&merged, cur, c)
			rep.Restart = append(rep.Restart, c)
			continue
		}
		if !liveKeys[c] {
			setKey(&merged, cur, c)
			rep.Restart = append(rep.Restart, c)
			continue
		}
		rep.Applied = append(rep.Applied, c)
	}
	if len(rep.Applied) == 0 {
		return rep, nil
	}
	d.cfg.Store(&merged)

	if slices.Contains(rep.Applied, "agents") || slices.Contains(rep.Applied, "agents_dir") {
		d.Kernel.Agents().SetFixed(merged.Agents)
	}
	if keys != nil {
		d.keys.Replace(keys)
		// Bearer keys are checked on every request; a dashboard
		// session holds the principal it logged in as, so those of a
		// changed or removed principal end (log in again).
		gone := changedPrincipals(cur, &merged)
		if n := d.ui.EndWhere(func(p *principal.Principal) bool { return gone[p.Name] }); n > 0 {
			d.log.Info("config reload: ended the dashboard sessions of changed principals", "sessions", n)
		}
	}
	if merged.Limits.RatePerSec != cur.Limits.RatePerSec || merged.Limits.Burst != cur.Limits.Burst {
		d.rateLimits.Set(merged.Limits.RatePerSec, merged.Limits.Burst)
	}
	if slices.Contains(rep.Applied, "mcp_servers") {
		rep.Failed = append(rep.Failed, d.reloadMCP(ctx, cur.MCPServers, merged.MCPServers)...)
	}
	return rep, nil
}

// changedPrincipals names the principals whose entry differs between a
// and b, or exists in one only; "admin" when the api_key changed.
func changedPrincipals(a, b *config.Config) map[string]bool {
	out := map[string]bool{}
	was := map[string]config.Principal{}
	for _, p := range a.Principals {
		was[p.Name] = p
	}
	for _, p := range b.Principals {
		if old, ok := was[p.Name]; !ok || !reflect.DeepEqual(old, p) {
			out[p.Name] = true
		}
		delete(was, p.Name)
	}
	for name := range was {
		out[name] = true
	}
	if a.APIKey != b.APIKey || a.APIKeyEnv != b.APIKeyEnv {
		out[principal.AdminName] = true
	}
	return out
}

func isPrincipalKey(k string) bool {
	k = strings.TrimPrefix(k, "!")
	return k == "principals" || k == "api_key" || k == "api_key_env"
}

// reloadMCP removes the config's MCP servers that are gone or changed and
// adds those that are new or changed; unchanged servers keep their
// connection (and the sessions of clients using their tools).
func (d *Daemon) reloadMCP(ctx context.Context, old, next []config.MCPServer) []string {
	if !d.connectMCP {
		return nil
	}
	d.mcpMu.Lock()
	defer d.mcpMu.Unlock()
	key := func(s config.MCPServer) string { b, _ := json.Marshal(s); return string(b) }
	was := map[string]string{}
	for _, s := range old {
		was[s.Name] = key(s)
	}
	now := map[string]bool{}
	var failed []string
	for _, s := range next {
		now[s.Name] = true
	}
	for _, s := range old {
		if !now[s.Name] {
			if err := d.MCP.Remove(ctx, s.Name); err != nil {
				failed = append(failed, fmt.Sprintf("mcp_servers %q: %v", s.Name, err))
			}
		}
	}
	for _, s := range next {
		prev, existed := was[s.Name]
		if existed && prev == key(s) {
			continue
		}
		if existed {
			if err := d.MCP.Remove(ctx, s.Name); err != nil {
				failed = append(failed, fmt.Sprintf("mcp_servers %q: %v", s.Name, err))
				continue
			}
		} else if _, runtime := d.mcpApplied[s.Name]; runtime {
			failed = append(failed, fmt.Sprintf("mcp_servers %q: a server added through the API has that name; remove it first", s.Name))
			continue
		}
		if err := d.MCP.Add(ctx, s); err != nil {
			failed = append(failed, fmt.Sprintf("mcp_servers %q: %v", s.Name, err))
		}
	}
	return failed
}

// diffConfig lists the keys whose values differ between a and b, as
// written in the file: top-level keys, and one level into tables
// ("limits.burst"). Secrets are compared, never shown.
func diffConfig(a, b *config.Config) []string {
	var out []string
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	t := va.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := tomlName(f)
		if name == "" {
			continue
		}
		fa, fb := va.Field(i), vb.Field(i)
		if f.Type.Kind() == reflect.Struct {
			for j := range f.Type.NumField() {
				sf := f.Type.Field(j)
				sub := tomlName(sf)
				if sub == "" {
					continue
				}
				if !reflect.DeepEqual(fa.Field(j).Interface(), fb.Field(j).Interface()) {
					out = append(out, name+"."+sub)
				}
			}
			continue
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			out = append(out, name)
		}
	}
	return out
}

// setKey copies key (as diffConfig names it) from src into dst.
func setKey(dst, src *config.Config, key string) {
	top, sub, nested := strings.Cut(key, ".")
	vd, vs := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range vd.NumField() {
		f := vd.Type().Field(i)
		if tomlName(f) != top {
			continue
		}
		if !nested {
			vd.Field(i).Set(vs.Field(i))
			return
		}
		for j := range f.Type.NumField() {
			if tomlName(f.Type.Field(j)) == sub {
				vd.Field(i).Field(j).Set(vs.Field(i).Field(j))
				return
			}
		}
	}
}

func tomlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// logReload logs a reload's outcome: what applied at INFO, what needs a
// restart or failed at WARN, a config that did not load at ERROR.
func (d *Daemon) logReload(rep ReloadReport, err error) {
	switch {
	case err != nil:
		d.log.Error("config reload refused: the daemon keeps running with its config unchanged", "file", rep.File, "err", err)
		return
	case len(rep.Applied) == 0 && len(rep.Restart) == 0:
		d.log.Info("config reloaded: nothing changed", "file", rep.File)
	case len(rep.Applied) > 0:
		d.log.Info("config reloaded", "file", rep.File, "applied", rep.Applied)
	}
	for _, k := range rep.Restart {
		d.log.Warn("config reload: needs a restart: "+k, "file", rep.File, "key", k)
	}
	for _, f := range rep.Failed {
		d.log.Warn("config reload: could not apply: "+f, "file", rep.File)
	}
}

// ReloadSignal handles SIGHUP: it rereads the config file, applies it and logs
// the report. Errors are logged, not returned: the daemon keeps running.
func (d *Daemon) ReloadSignal(ctx context.Context) {
	d.log.Info("SIGHUP: reloading the config", "file", d.Config().File)
	rep, err := d.ReloadFromFile(ctx)
	d.logReload(rep, err)
}

// serveReload is POST /api/admin/reload: the same reload as SIGHUP, for
// admins; the answer is the report.
func (d *Daemon) serveReload(w http.ResponseWriter, r *http.Request) {
	if p := principal.FromContext(r.Context()); p == nil || !p.Admin {
		httpapi.WriteError(w, http.StatusForbidden, "forbidden", "reloading the config is for admins: use an admin key")
		return
	}
	rep, err := d.ReloadFromFile(r.Context())
	d.logReload(rep, err)
	switch {
	case errors.Is(err, errReloadBusy):
		httpapi.WriteError(w, http.StatusConflict, "busy", err.Error())
		return
	case err != nil:
		httpapi.WriteError(w, http.StatusUnprocessableEntity, "invalid_config", "config not reloaded, nothing changed: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rep)
}
