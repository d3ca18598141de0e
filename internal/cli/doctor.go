package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/sqlite"
)

func (e *env) doctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "check the config, the store, LLM providers, the sandbox and the port",
		Long: `Check what usually goes wrong and say how to fix it: the config, the store,
each LLM provider's endpoint and key, the sandbox this kernel enforces and
the listen port. Exits 1 when something that blocks ` + "`agentd start`" + ` is broken.`,
		Example: "  agentd doctor\n  agentd doctor --config /etc/agentd/config.toml",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.doctor(cmd.Context())
		},
	}
}

// doctor checks what usually goes wrong and says how to fix it. It
// fails when something that blocks `agentd start` is broken.
func (e *env) doctor(ctx context.Context) error {
	failed := false
	report := func(ok bool, what, detail string) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed = true
		}
		fmt.Fprintf(e.stdout, "[%s] %-22s %s\n", mark, what, detail)
	}
	note := func(what, detail string) { fmt.Fprintf(e.stdout, "[info] %-22s %s\n", what, detail) }

	cfg, err := e.loadConfig(false)
	if err != nil {
		report(false, "config", err.Error())
		return errors.New("config is invalid")
	}
	report(true, "config", cfg.File)

	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		report(false, "home", err.Error())
	} else if cfg.Store.Backend == config.BackendPostgres {
		ok, detail := checkPostgres(ctx, cfg)
		report(ok, "store", detail)
	} else if db, err := sqlite.Open(ctx, cfg.StorePath(), nil); err != nil {
		report(false, "store", err.Error())
	} else {
		probe := filepath.Join(cfg.Home, ".doctor-probe")
		werr := os.WriteFile(probe, []byte("ok"), 0o600)
		os.Remove(probe)
		db.Close()
		if werr != nil {
			report(false, "store", "home is not writable: "+werr.Error())
		} else {
			report(true, "store", cfg.StorePath())
		}
	}

	names := make([]string, 0, len(cfg.Providers))
	for n := range cfg.Providers {
		names = append(names, n)
	}
	slices.Sort(names)
	used := map[string]bool{}
	for _, a := range cfg.Agents {
		used[a.Provider] = true
	}
	for _, n := range names {
		p := cfg.Providers[n]
		label := "provider " + n
		// Which endpoint and why: base_url (file:line), the vendor's
		// variable (OPENAI_BASE_URL, ...) or the vendor's own, so a
		// surprising DNS error or a local server that is never asked can
		// be traced to its source.
		ep, _ := cfg.ProviderEndpoint(n)
		at := ep.Shown + " (" + ep.Source() + ")"
		switch {
		case ep.URL != "" && isLoopbackURL(ep.URL):
			ok := probeHTTP(ctx, strings.TrimSuffix(strings.TrimSuffix(ep.URL, "/"), "/v1")+"/")
			if ok {
				report(true, label, "local server answers at "+at)
			} else if used[n] {
				report(false, label, "no server at "+at+" (start it, e.g. `ollama serve`)")
			} else {
				note(label, "no server at "+at+" (unused)")
			}
		case p.APIKeyEnv != "":
			if v, ok := cfg.LookupSecret(p.APIKeyEnv); ok && v != "" {
				report(true, label, at+"; "+p.APIKeyEnv+" is set")
			} else if used[n] {
				report(false, label, at+"; set "+p.APIKeyEnv+" (used by an agent)")
			} else {
				note(label, at+"; "+p.APIKeyEnv+" not set (unused)")
			}
		default:
			note(label, at+"; no key configured")
		}
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err == nil {
		ln.Close()
		report(true, "port", cfg.Listen+" is free")
	} else if c, _, cerr := e.client(); cerr == nil {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		h, herr := c.Health(hctx)
		cancel()
		if herr == nil {
			note("port", fmt.Sprintf("agentd %s is already running on %s", h.Version, cfg.Listen))
		} else {
			report(false, "port", cfg.Listen+" is taken by another program: "+err.Error())
		}
	}
	doctorSandbox(cfg, report, note)
	if failed {
		return errors.New("some checks failed")
	}
	return nil
}

// isLoopbackURL reports whether raw points at this machine.
func isLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback()
	}
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// checkPostgres checks the [store] database the way `agentd start` will
// use it, changing nothing: the variable is set, the server answers within
// the start-up timeout, and the schema is one this agentd can use.
func checkPostgres(ctx context.Context, cfg *config.Config) (ok bool, detail string) {
	url, err := cfg.PostgresURL()
	if err != nil {
		return false, err.Error()
	}
	st, err := postgres.Check(ctx, url.Reveal(), 0)
	if err != nil {
		return false, fmt.Sprintf("postgres (URL from $%s): %v", cfg.Store.URLEnv, err)
	}
	where := fmt.Sprintf("postgres %s at %s, database %s, schema %s", st.Server, postgres.Redact(url.Reveal()), st.Database, st.Schema)
	switch {
	case st.Version > st.Latest:
		return false, fmt.Sprintf("%s: schema version %d is newer than this agentd supports (%d): upgrade agentd", where, st.Version, st.Latest)
	case st.Version == 0:
		return true, fmt.Sprintf("%s: reachable, no tables yet (agentd start creates schema version %d)", where, st.Latest)
	case st.Version < st.Latest:
		return true, fmt.Sprintf("%s: schema version %d (agentd start upgrades it to %d)", where, st.Version, st.Latest)
	default:
		return true, fmt.Sprintf("%s: schema version %d (current)", where, st.Version)
	}
}

func probeHTTP(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}
