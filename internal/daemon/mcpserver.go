package daemon

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/agentd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/mcpserver"
)

// mountMCP builds the MCP server edge and serves it on the daemon's mux:
// the Streamable HTTP endpoint ([mcp] path, default /mcp) and the
// gateways below it. Close cancels its calls and closes its sessions.
func (d *Daemon) mountMCP(ctx context.Context) (*mcpserver.Server, error) {
	srv, err := d.newMCPServer(ctx)
	if err != nil {
		return nil, err
	}
	srv.Mount(d.mux)
	d.closers = append(d.closers, srv.Close)
	return srv, nil
}

// newMCPServer builds an MCP server edge over the daemon's kernel, tools
// and store.
func (d *Daemon) newMCPServer(ctx context.Context) (*mcpserver.Server, error) {
	// Tools called directly by MCP clients (expose_tools) work in a
	// workspace of their own, like an agent's.
	ws := d.Config().WorkspaceDir(mcpserver.ClientAgent, manifest.Manifest{})
	if err := ensureDir(ws); err != nil {
		return nil, fmt.Errorf("create the mcp clients' workspace: %w", err)
	}
	opts := mcpserver.Options{
		Kernel:          d.Kernel,
		Tools:           d.Tools,
		Sessions:        d.Store,
		Config:          d.Config().MCP,
		MaxMessageBytes: d.Config().Limits.MaxBodyBytes,
		Workspace:       ws,
		Name:            "agentd",
		Version:         buildinfo.Version(),
		ConfigOrigin:    d.Config().Origin(),
		Logger:          d.log.With("component", "mcp-server"),
		Meter:           d.Telemetry.MeterProvider(),
		Tracer:          d.Telemetry.TracerProvider(),
	}
	if d.Cluster != nil {
		r, err := d.mcpReplicas(ctx)
		if err != nil {
			return nil, err
		}
		opts.Replicas = r
	}
	// Gateways forward resources and prompts when the client manager can
	// hand out its upstream sessions.
	if u, ok := any(d.MCP).(mcpserver.Upstreams); ok {
		opts.Upstreams = u
	}
	srv, err := mcpserver.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("mcp server: %w", err)
	}
	return srv, nil
}

// ServeMCPStdio serves MCP on a byte stream (stdin/stdout) with an
// in-process server, for `agentd mcp` when no daemon is running. It
// returns when in ends or ctx is done.
func (d *Daemon) ServeMCPStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	srv, err := d.newMCPServer(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(ctx)
	released := make(chan struct{})
	go func() {
		defer close(released)
		d.releaseStartupPages(ctx)
	}()
	defer func() { cancel(); <-released }()
	return srv.ServeStdio(ctx, in, out)
}

// mcpReplicas lets every replica serve the MCP sessions any of them
// initialized: the session ids are sealed with the keys of [cluster]
// session_key_env, or else with the key kept in the database.
func (d *Daemon) mcpReplicas(ctx context.Context) (*mcpserver.Replicas, error) {
	keys, err := d.clusterKeys(ctx)
	if err != nil {
		return nil, err
	}
	return &mcpserver.Replicas{Keys: keys, Cluster: d.Cluster}, nil
}

// clusterKeys are the secrets every replica shares: those of [cluster]
// session_key_env (the first seals, all open), or else the key kept in
// the database. They are read once.
func (d *Daemon) clusterKeys(ctx context.Context) ([][]byte, error) {
	if d.keysRead {
		return d.sharedKeys, nil
	}
	secrets, err := d.Config().SessionKeys()
	if err != nil {
		return nil, err
	}
	keys := make([][]byte, 0, len(secrets))
	for _, s := range secrets {
		keys = append(keys, []byte(s.Reveal()))
	}
	if len(keys) == 0 {
		key, err := d.Cluster.SessionKey(ctx)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	d.sharedKeys, d.keysRead = keys, true
	return keys, nil
}

// bridgeKey signs what the MCP → A2A bridge asks 2026-07-28 clients to
// echo: among replicas, a key derived from the shared secret, so that the
// echo may reach any replica; alone, nil (a key of the process's own).
func (d *Daemon) bridgeKey(ctx context.Context) ([]byte, error) {
	if d.Cluster == nil {
		return nil, nil
	}
	keys, err := d.clusterKeys(ctx)
	if err != nil {
		return nil, err
	}
	return hkdf.Key(sha256.New, keys[0], nil, "agentd a2a bridge requestState v1", 32)
}
