package daemon

import (
	"context"
	"errors"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/bridge"
	"github.com/agentd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/mcpserver"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/store/storeretry"
)

// a2aEdge is the A2A server, its task store, push delivery, the A2A
// client and the MCP → A2A bridge, closed together.
type a2aEdge struct {
	server *a2aedge.Server
	client *a2aedge.Client
	pusher *a2aedge.Pusher
	tasks  *a2aedge.TaskStore
	bridge *bridge.Bridge
}

// Close stops runs first (their last writes need the store), then
// background discovery, push delivery and the pruner.
func (e *a2aEdge) Close() error {
	if e == nil {
		return nil
	}
	return errors.Join(e.bridge.Close(), e.server.Close(), e.client.Close(), e.pusher.Close(), e.tasks.Close())
}

// bridgeToMCP serves the A2A agents (external and local) as tools on the
// MCP edge: the MCP → A2A bridge. The MCP edge is built first, so the
// bridge joins it once the A2A edge exists.
func (e *a2aEdge) bridgeToMCP(srv *mcpserver.Server) {
	if e == nil || srv == nil {
		return
	}
	srv.AddToolSet(e.bridge)
	// MCP tasks are A2A tasks (mcptasks.go).
	srv.SetTasks(mcpTasks{e.bridge})
}

// mountA2A builds the A2A edge when [a2a] is enabled: it fails the tasks
// a previous process left running (alone on the store; among replicas,
// the tasks of dead replicas, as their leases expire), registers the external agents as a
// tool source (discovered in the background), and adds the A2A routes
// and /api/a2a/* to the mux. The caller must Close the returned edge.
func (d *Daemon) mountA2A(ctx context.Context) (*a2aEdge, error) {
	cfg := d.Config().A2A
	if !cfg.Enabled {
		return nil, nil
	}
	log := d.log.With("component", "a2a")
	key, err := d.bridgeKey(ctx)
	if err != nil {
		return nil, err
	}
	// The tasks' writes are on their runs' path: they wait out a store
	// outage as the runs' own writes do.
	tasks, err := a2aedge.OpenTaskStore(ctx, storeretry.Tasks(d.Store, d.retry), a2aedge.TaskStoreOptions{MaxTasks: cfg.MaxTasks, Logger: log, Meter: d.Telemetry.MeterProvider(),
		OnState: func(id, agent, owner, state string) {
			d.Changes.Publish(httpapi.Change{Topic: httpapi.TopicA2A, What: state, ID: id, Owner: owner})
		}})
	if err != nil {
		return nil, err
	}
	// A run does not survive the process. Alone on the store, this
	// daemon reports the tasks the last one left unfinished as failed,
	// before anyone can poll them. Among replicas, unfinished tasks may
	// be another replica's live work: only those of replicas whose lease
	// expired are failed, by the reaper set below.
	if d.Cluster == nil {
		n, err := tasks.FailRunningTasks(ctx)
		if err != nil {
			tasks.Close()
			return nil, err
		}
		if n > 0 {
			log.Warn("marked a2a tasks left unfinished by the previous run as failed", "tasks", n)
		}
	}
	external := make([]a2aedge.ExternalAgent, len(cfg.ExternalAgents))
	for i, e := range cfg.ExternalAgents {
		external[i] = a2aedge.ExternalAgent{Name: e.Name, URL: e.URL, TokenEnv: e.TokenEnv, AllowPrivate: e.AllowPrivate}
	}
	edge := &a2aEdge{tasks: tasks}
	// Webhook URLs come from remote clients: public addresses only,
	// unless the operator allows private ones (local development).
	push := &netguard.Policy{AllowPrivate: cfg.PushAllowPrivate, Proxy: d.proxy, Hint: "set push_allow_private = true in [a2a] to allow it"}
	edge.pusher = a2aedge.NewPusher(a2aedge.PusherOptions{Policy: push, MaxTasks: cfg.MaxTasks, Store: d.Store, Logger: log})
	edge.client = a2aedge.NewClient(a2aedge.ClientOptions{
		External:     external,
		LookupSecret: d.Config().LookupSecret,
		Guard: func(allowPrivate bool) *netguard.Policy {
			return &netguard.Policy{AllowPrivate: allowPrivate, Proxy: d.proxy}
		},
		UserAgent: "agentd/" + buildinfo.Version(),
		Tracer:    d.Telemetry.TracerProvider(),
		Logger:    log.With("role", "client"),
	})
	d.Tools.AddSource(edge.client)
	edge.client.OnToolsChanged(d.Tools.Changed)
	edge.server = a2aedge.New(a2aedge.Options{
		Kernel:       d.Kernel,
		Tasks:        tasks,
		Sessions:     d.Store,
		ListenPath:   cfg.ListenPath,
		PublicURL:    d.Config().PublicURL,
		DefaultAgent: d.Config().DefaultAgent,
		BearerAuth:   d.keys.Len() > 0 || d.tokens != nil,
		OAuth:        d.a2aOAuth(),
		Version:      buildinfo.Version(),
		Push:         edge.pusher,
		Client:       edge.client,
		ModelFree:    bridge.NewProxy(bridge.ProxyOptions{Kernel: d.Kernel, MCP: d.MCP}),
		Cluster:      d.a2aCluster(),
		Logger:       log,
		Meter:        d.Telemetry.MeterProvider(),
	})
	edge.server.Register(d.mux)
	if d.Cluster != nil {
		d.Cluster.SetTaskReaper(a2aedge.FailTask, edge.server.TasksFailed)
	}
	edge.bridge = bridge.NewBridge(bridge.BridgeOptions{Server: edge.server, Kernel: d.Kernel, Client: edge.client, Key: key, Logger: log.With("role", "mcp-bridge")})
	edge.client.Start()
	return edge, nil
}

// a2aCluster is what links the A2A edge to the other replicas: the
// cluster, or nil when this daemon is alone.
func (d *Daemon) a2aCluster() a2aedge.Cluster {
	if d.Cluster == nil {
		return nil
	}
	return d.Cluster
}
