package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/store/postgres"
)

// follower applies on this replica the changes other replicas make
// through the API: agents (whose watchers, the MCP edge among them, must
// hear of them, so that MCP clients get tools/list_changed wherever they
// are connected) and MCP server registrations (each replica runs its own
// upstream connections and stdio children, so each connects a server
// registered anywhere, and drops one deleted anywhere).
//
// Notifications arrive on the cluster's listener goroutine, which must
// not block; the follower's own goroutine connects and disconnects
// upstreams, in order, coalescing bursts. After the notification
// connection was lost, it resyncs everything from the store.
type follower struct {
	d   *Daemon
	log *slog.Logger

	mu      sync.Mutex
	servers map[string]bool // MCP servers to sync
	all     bool            // sync every MCP server
	wake    chan struct{}

	unsub []func()
	stop  chan struct{}
	wg    sync.WaitGroup
}

// followReplicas starts following the other replicas' changes; Close on
// the returned follower stops it.
func (d *Daemon) followReplicas() *follower {
	f := &follower{d: d, log: d.log.With("component", "replicas"), servers: map[string]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{})}
	c := d.Cluster
	f.unsub = append(f.unsub,
		c.Subscribe(postgres.TopicAgent, func(string, []byte) { d.Kernel.Agents().Changed() }),
		c.Subscribe(postgres.TopicMCPServer, func(_ string, name []byte) { f.syncServer(string(name)) }),
		c.OnResync(func() {
			d.Kernel.Agents().Changed()
			f.syncServer("")
		}),
	)
	f.wg.Go(f.run)
	// Whatever changed between joining and subscribing is caught now.
	f.syncServer("")
	return f
}

// Close stops following and waits for the work in progress.
func (f *follower) Close() error {
	for _, u := range f.unsub {
		u()
	}
	close(f.stop)
	f.wg.Wait()
	return nil
}

// syncServer asks for MCP server name ("" for all) to be brought in line
// with the store. It never blocks.
func (f *follower) syncServer(name string) {
	f.mu.Lock()
	if name == "" {
		f.all = true
	} else {
		f.servers[name] = true
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *follower) run() {
	for {
		select {
		case <-f.stop:
			return
		case <-f.wake:
		}
		f.mu.Lock()
		all, names := f.all, f.servers
		f.all, f.servers = false, map[string]bool{}
		f.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := f.d.syncMCPServers(ctx, all, names); err != nil {
			f.log.Warn("applying another replica's MCP server change failed", "err", err)
		}
		cancel()
	}
}

// syncMCPServers connects, reconnects or removes the runtime MCP servers
// (those registered through the API) named in names, or all of them, so
// that this replica's upstreams match the store. Servers of the config
// file are each replica's own and are left alone.
func (d *Daemon) syncMCPServers(ctx context.Context, all bool, names map[string]bool) error {
	if !d.connectMCP {
		return nil // a daemon without upstreams follows none
	}
	d.mcpMu.Lock()
	defer d.mcpMu.Unlock()
	stored, err := d.Store.ListMCPServers(ctx)
	if err != nil {
		return err
	}
	want := map[string]json.RawMessage{}
	for _, s := range stored {
		want[s.Name] = s.Config
	}
	consider := names
	if all {
		consider = map[string]bool{}
		for n := range want {
			consider[n] = true
		}
		for n := range d.mcpApplied {
			consider[n] = true
		}
	}
	for name := range consider {
		if d.configServer(name) {
			continue
		}
		cfgJSON, stored := want[name]
		applied, running := d.mcpApplied[name]
		switch {
		case stored && running && string(applied) == string(cfgJSON):
			continue
		case running:
			if err := d.MCP.Remove(ctx, name); err != nil {
				d.log.Warn("removing an MCP server another replica changed", "mcp_server", name, "err", err)
			}
			delete(d.mcpApplied, name)
		}
		if !stored {
			d.log.Info("removed an MCP server deleted through another replica", "mcp_server", name)
			continue
		}
		var c config.MCPServer
		if err := json.Unmarshal(cfgJSON, &c); err != nil {
			d.log.Error("skipping stored mcp server with bad config", "server", name, "err", err)
			continue
		}
		if err := d.MCP.Add(ctx, c); err != nil {
			d.log.Warn("connecting an MCP server registered through another replica", "mcp_server", name, "err", err)
			continue
		}
		d.mcpApplied[name] = cfgJSON
		d.log.Info("connecting an MCP server registered through another replica", "mcp_server", name)
	}
	return nil
}

// configServer reports whether name is an MCP server of the config file.
func (d *Daemon) configServer(name string) bool {
	for _, s := range d.Config().MCPServers {
		if s.Name == name {
			return true
		}
	}
	return false
}
