package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/agentd/agentd/internal/daemon"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/mcpserver"
	"github.com/agentd/agentd/internal/residency"
)

// mcpServe serves MCP on stdin/stdout for editors ({"command": "agentd",
// "args": ["mcp"]}). When a daemon of the same AGENTD_HOME (or config
// file) answers on the configured address, it relays to that daemon's
// /mcp, so editors share its sessions, upstream connections and agents;
// otherwise it boots the daemon in-process (without a listener). stdout
// carries protocol messages only: logs go to stderr.
func (e *env) mcpServe(ctx context.Context, standalone bool) error {
	cfg, err := e.loadConfig(false)
	if err != nil {
		return err
	}
	log := e.logger(cfg)
	base := e.baseURL(cfg)
	answers, h := false, httpapi.Health{}
	if !standalone {
		answers, h = daemonAnswers(ctx, base)
	}
	// The daemon must serve this home, or have read this config file (an
	// MCP host that starts `agentd mcp --config FILE` passes no
	// AGENTD_HOME): another home's daemon on this address would serve its
	// own agents to an editor configured for these.
	ours := h.Home == cfg.HomeID() || h.Config != "" && h.Config == cfg.FileID()
	other := answers && !ours
	if other {
		why := "it serves another AGENTD_HOME and config file"
		if h.Home == "" {
			why = "it does not say which AGENTD_HOME it serves (an older agentd?)"
		}
		log.Warn("agentd mcp: a daemon answers on the configured address but "+why+"; serving in-process",
			"addr", base, "config", cfg.Origin(), "home", cfg.Home)
		answers = false
	}
	if answers {
		url := base + cfg.MCP.Path
		log.Info("agentd mcp: relaying to the running daemon", "url", url, "config", cfg.Origin())
		// A relay per editor window lives as long as the editor: once it
		// runs, the executable's pages that only start-up touched (most
		// of its resident set, see package residency) can go.
		relCtx, cancel := context.WithCancel(ctx)
		released := make(chan struct{})
		go func() {
			defer close(released)
			rel, err := residency.ReleaseAfter(relCtx, 250*time.Millisecond)
			log.Debug("released start-up pages", "mappings", rel.Mappings, "bytes", rel.Bytes, "err", err)
		}()
		defer func() { cancel(); <-released }()
		return mcpserver.Forward(ctx, e.stdin, e.stdout, mcpserver.ForwardOptions{
			URL:             url,
			APIKey:          cfg.APIKeyValue(),
			MaxMessageBytes: cfg.Limits.MaxBodyBytes,
			Logger:          log,
		})
	}
	if !standalone && !other {
		log.Info("agentd mcp: no daemon answers; serving in-process", "addr", base, "config", cfg.Origin())
	}
	d, err := daemon.New(ctx, cfg, daemon.Options{Logger: log, ConnectMCP: true})
	if err != nil {
		return err
	}
	defer d.Close()
	return d.ServeMCPStdio(ctx, e.stdin, e.stdout)
}

// daemonAnswers reports whether an agentd daemon answers its health check
// at base within a second, and its health (which home and config file it
// serves).
func daemonAnswers(ctx context.Context, base string) (bool, httpapi.Health) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var h httpapi.Health
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/health", nil)
	if err != nil {
		return false, h
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, h
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, h
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&h)
	return true, h
}
