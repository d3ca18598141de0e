// Package httpapi is agentd's REST + SSE API: health, agents, messages
// (JSON or a stream of events), sessions, tools, MCP servers and the audit
// log. It is a thin edge: each handler decodes, calls the kernel, encodes.
// Middleware (auth, rate limit, body limits) wraps the whole daemon mux.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// Store is what the API reads directly: sessions, the audit log and the
// minted API keys.
type Store interface {
	store.SessionStore
	store.AuditStore
	store.KeyStore
}

// MCPAdmin manages upstream MCP servers at runtime. The daemon implements
// it over the MCP client manager and the store.
type MCPAdmin interface {
	// Servers returns the servers' state in the seed's shape
	// ({"configured": [...], "connected": [...]}) as who may see it:
	// commands, arguments, URLs, headers and errors only for an admin.
	Servers(ctx context.Context, who *principal.Principal) (any, error)
	// Add validates, persists and connects a server from its JSON config.
	Add(ctx context.Context, cfg json.RawMessage) error
	Remove(ctx context.Context, name string) error
	// SetEnabled disconnects (false) or reconnects (true) a server
	// registered through the API, persisting the choice.
	SetEnabled(ctx context.Context, name string, enabled bool) error
}

// Options are the API's dependencies.
type Options struct {
	Kernel  *agent.Kernel
	Store   Store
	Tools   tool.Lookup
	MCP     MCPAdmin // nil = MCP routes answer 503
	Version string
	Logger  *slog.Logger
	// Started is when the daemon started, for uptime in health.
	Started time.Time
	// Replica is this daemon's replica id when it shares its store with
	// others (health shows it, so that behind a load balancer one can
	// tell who answered); "" when alone.
	Replica string
	// HomeID identifies the AGENTD_HOME served, and ConfigID the config
	// file read, for health.
	HomeID, ConfigID string
	// UI holds the dashboard's browser sessions; nil = no /api/ui routes.
	UI *UISessions
	// Approvals is the operator's queue of approval requests; nil = the
	// approval routes answer 503.
	Approvals *tool.Approvals
	// Changes is the change stream GET /api/events serves; nil = it
	// answers 503.
	Changes *Changes
	// Principals returns the configured principals (the config's, as it
	// is now), sorted by name; nil = the principals routes answer 503.
	Principals func() []PrincipalInfo
}

// API serves the REST routes.
type API struct {
	opts Options
	log  *slog.Logger

	openAPIOnce sync.Once
	openAPIBody []byte
	openAPIErr  error
}

// New returns the API.
func New(opts Options) *API {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Started.IsZero() {
		opts.Started = time.Now()
	}
	return &API{opts: opts, log: log}
}

// UnlimitedPaths are never rate limited (a load balancer's probe must not
// take the node out because one client is busy). The login is limited:
// guessing keys is.
var UnlimitedPaths = []string{"/api/health"}

// Register adds the API's routes to mux. This is the route table.
func (a *API) Register(mux Router) {
	h := func(pattern string, f func(http.ResponseWriter, *http.Request) error) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := f(w, r); err != nil {
				writeError(w, a.log, r, err)
			}
		})
	}
	h("GET /api/health", a.health)
	h("GET "+OpenAPIPath, a.openAPI)
	h("GET /api/agents", a.listAgents)
	h("POST /api/agents", a.createAgent)
	h("GET /api/agents/{name}", a.getAgent)
	h("PUT /api/agents/{name}", a.updateAgent)
	h("DELETE /api/agents/{name}", a.deleteAgent)
	h("POST /api/agents/{name}/messages", a.sendMessage)
	h("GET /api/sessions", a.listSessions)
	h("GET /api/sessions/{id}", a.getSession)
	h("DELETE /api/sessions/{id}", a.deleteSession)
	h("GET /api/tools", a.listTools)
	h("POST /api/tools/{name}/call", a.callTool)
	h("GET /api/audit", a.queryAudit)
	h("GET /api/runs", a.listRuns)
	h("GET /api/events", a.events)
	h("GET /api/approvals", a.listApprovals)
	h("POST /api/approvals/{id}", a.decideApproval)
	h("GET /api/principals", a.listPrincipals)
	h("GET /api/principals/{name}", a.getPrincipal)
	h("POST /api/principals/{name}/keys", a.mintKey)
	h("DELETE /api/principals/{name}/keys/{id}", a.revokeKey)
	h("GET "+UIPath+"session", a.uiSession)
	h("POST "+UIPath+"login", a.uiLogin)
	h("POST "+UIPath+"logout", a.uiLogout)
	h("GET /api/mcp/servers", a.mcpServers)
	h("POST /api/mcp/servers", a.addMCPServer)
	h("DELETE /api/mcp/servers/{name}", a.removeMCPServer)
	h("PATCH /api/mcp/servers/{name}", a.patchMCPServer)
	h("/api/", func(w http.ResponseWriter, r *http.Request) error {
		return errorf(http.StatusNotFound, "not_found", "no route for %s %s", r.Method, r.URL.Path)
	})
}

// Health is the body of GET /api/health.
type Health struct {
	Status  string  `json:"status"`
	Version string  `json:"version"`
	Uptime  float64 `json:"uptime_seconds"`
	Replica string  `json:"replica,omitempty"`
	// Home identifies the AGENTD_HOME the daemon serves
	// (config.Config.HomeID): `agentd mcp` relays only to a daemon of
	// its own.
	Home string `json:"home,omitempty"`
	// Config identifies the config file the daemon read
	// (config.Config.FileID), for the same check.
	Config string `json:"config,omitempty"`
}

func (a *API) health(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.healthNow())
	return nil
}

func (a *API) healthNow() Health {
	return Health{Status: "ok", Version: a.opts.Version, Uptime: time.Since(a.opts.Started).Seconds(), Replica: a.opts.Replica, Home: a.opts.HomeID, Config: a.opts.ConfigID}
}

// listRuns lists the runs in progress and the recently finished ones
// that the principal may see (its own; an admin sees all).
func (a *API) listRuns(w http.ResponseWriter, r *http.Request) error {
	pg, err := ParsePage(r)
	if err != nil {
		return err
	}
	p := who(r)
	runs := []agent.RunInfo{}
	for _, ri := range a.opts.Kernel.Runs() {
		if p.MaySee(ri.Principal) {
			runs = append(runs, ri)
		}
	}
	writeJSON(w, http.StatusOK, PageBody("runs", Window(runs, pg), len(runs), pg))
	return nil
}

// listApprovals lists the approval requests waiting for an operator that
// the principal may decide: those of its own runs (an admin: all).
func (a *API) listApprovals(w http.ResponseWriter, r *http.Request) error {
	if a.opts.Approvals == nil {
		return errorf(http.StatusServiceUnavailable, "unavailable", "approvals are not enabled")
	}
	pg, err := ParsePage(r)
	if err != nil {
		return err
	}
	p := who(r)
	out := []tool.PendingApproval{}
	for _, x := range a.opts.Approvals.Pending() {
		if p.MaySee(x.Principal) {
			out = append(out, x)
		}
	}
	body := PageBody("approvals", Window(out, pg), len(out), pg)
	body["timeout_seconds"] = a.opts.Approvals.Timeout().Seconds()
	writeJSON(w, http.StatusOK, body)
	return nil
}

// DecisionRequest is the body of POST /api/approvals/{id}.
type DecisionRequest struct {
	// Decision is "once" (approve this call), "session" (and every later
	// call of the tool in the session) or "reject".
	Decision tool.Decision `json:"decision"`
}

func (a *API) decideApproval(w http.ResponseWriter, r *http.Request) error {
	if a.opts.Approvals == nil {
		return errorf(http.StatusServiceUnavailable, "unavailable", "approvals are not enabled")
	}
	var req DecisionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	switch req.Decision {
	case tool.ApproveOnce, tool.ApproveAll, tool.Reject:
	default:
		return &Error{Status: http.StatusBadRequest, Code: "invalid", Field: "decision",
			Message: fmt.Sprintf("decision: %q is not one of \"once\", \"session\", \"reject\"", req.Decision)}
	}
	id := r.PathValue("id")
	x, ok := a.opts.Approvals.Get(id)
	if !ok || !who(r).MaySee(x.Principal) {
		return errorf(http.StatusNotFound, "not_found", "no pending approval %q: it was decided, timed out, or its run ended", id)
	}
	if err := a.opts.Approvals.Decide(id, req.Decision, who(r)); err != nil {
		if errors.Is(err, tool.ErrNoSuchApproval) {
			return errorf(http.StatusNotFound, "not_found", "%s", err)
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) listAgents(w http.ResponseWriter, r *http.Request) error {
	pg, err := ParsePage(r)
	if err != nil {
		return err
	}
	all, err := a.opts.Kernel.Agents().List(r.Context())
	if err != nil {
		return err
	}
	// A principal sees the agents it may run.
	p := who(r)
	entries := make([]agent.Entry, 0, len(all))
	for _, e := range all {
		if p.Admin || p.MayRunAgent(e.Manifest.Name) {
			entries = append(entries, e)
		}
	}
	writeJSON(w, http.StatusOK, PageBody("agents", Window(entries, pg), len(entries), pg))
	return nil
}

func (a *API) getAgent(w http.ResponseWriter, r *http.Request) error {
	e, err := a.opts.Kernel.Agents().Get(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	if p := who(r); !p.Admin && !p.MayRunAgent(e.Manifest.Name) {
		return fmt.Errorf("%w: %q", agent.ErrAgentNotFound, e.Manifest.Name)
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

func (a *API) createAgent(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	var m manifest.Manifest
	if err := decode(r, &m); err != nil {
		return err
	}
	if _, err := a.opts.Kernel.Agents().Get(r.Context(), m.Name); err == nil {
		return errorf(http.StatusConflict, "exists", "agent %q already exists; use PUT /api/agents/%s to replace it", m.Name, m.Name)
	}
	return a.putAgent(w, r, m, http.StatusCreated)
}

func (a *API) updateAgent(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	var m manifest.Manifest
	if err := decode(r, &m); err != nil {
		return err
	}
	if m.Name == "" {
		m.Name = r.PathValue("name")
	}
	if m.Name != r.PathValue("name") {
		return errorf(http.StatusBadRequest, "bad_request", "name: %q does not match the URL's %q", m.Name, r.PathValue("name"))
	}
	return a.putAgent(w, r, m, http.StatusOK)
}

func (a *API) putAgent(w http.ResponseWriter, r *http.Request, m manifest.Manifest, status int) error {
	var bad *Error
	if err := m.Validate(); err != nil {
		bad = invalid(err)
	}
	if (m.Kind == "" || m.Kind == manifest.KindLLM) && m.Provider != "" {
		// An unknown provider would only fail at the first message; a
		// missing API key is the operator's to fix later, not an error here.
		// It joins the manifest's problems: a form shows them all at once.
		if _, err := a.opts.Kernel.Provider(m.Provider); err != nil && !errors.Is(err, llm.ErrAuth) {
			if bad == nil {
				bad = &Error{Status: http.StatusBadRequest, Code: "invalid", Message: "provider: " + err.Error(), Field: "provider", Fields: map[string]string{}}
			} else {
				bad.Message += "\nprovider: " + err.Error()
				if bad.Fields == nil {
					bad.Fields = map[string]string{}
				}
			}
			bad.Fields["provider"] = err.Error()
		}
	}
	if bad != nil {
		return bad
	}
	if err := a.opts.Kernel.Agents().Put(r.Context(), m); err != nil {
		return err
	}
	writeJSON(w, status, agent.Entry{Manifest: m, Source: "api"})
	return nil
}

func (a *API) deleteAgent(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	if err := a.opts.Kernel.Agents().Delete(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// MessageRequest is the body of POST /api/agents/{name}/messages.
type MessageRequest struct {
	Message   string      `json:"message"`
	SessionID string      `json:"session_id,omitempty"`
	Images    []llm.Image `json:"images,omitempty"`
	// Stream asks for an SSE stream of events (also chosen by
	// "Accept: text/event-stream").
	Stream bool `json:"stream,omitempty"`
}

// MessageResponse is the JSON reply of a non-streamed message.
type MessageResponse struct {
	SessionID  string           `json:"session_id"`
	Text       string           `json:"text"`
	StopReason agent.StopReason `json:"stop_reason"`
	Usage      llm.Usage        `json:"usage"`
	Iterations int              `json:"iterations"`
}

func (a *API) sendMessage(w http.ResponseWriter, r *http.Request) error {
	var req MessageRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Message == "" && len(req.Images) == 0 {
		return errorf(http.StatusBadRequest, "invalid", "message: required")
	}
	input := llm.TextMessage(llm.RoleUser, req.Message)
	for i := range req.Images {
		input.Parts = append(input.Parts, llm.Part{Image: &req.Images[i]})
	}
	run := &agent.RunRequest{Agent: r.PathValue("name"), SessionID: req.SessionID, Input: input, Origin: "http", Principal: who(r)}
	if req.Stream || r.Header.Get("Accept") == "text/event-stream" {
		return a.stream(w, r, run)
	}
	res, err := a.opts.Kernel.Run(r.Context(), run)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, MessageResponse{SessionID: res.SessionID, Text: res.Message.Text(),
		StopReason: res.StopReason, Usage: res.Usage, Iterations: res.Iterations})
	return nil
}

// stream runs the agent and writes each event as a server-sent event
// ("event: <type>\ndata: <json>"). The client going away cancels the run,
// which keeps the reply streamed so far in its session.
func (a *API) stream(w http.ResponseWriter, r *http.Request, run *agent.RunRequest) error {
	// The reader saw the text as it streamed: a stop keeps it.
	run.KeepPartial = true
	// Resolve the agent and the right to run it first, so a bad name is a
	// plain 404 and a refusal a plain 403, not a stream.
	if _, err := a.opts.Kernel.Agents().Get(r.Context(), run.Agent); err != nil {
		return err
	}
	if !run.Principal.MayRunAgent(run.Agent) {
		return fmt.Errorf("%w: principal %q may not run agent %q", agent.ErrForbidden, run.Principal.Name, run.Agent)
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	// A long run must outlive the server's write timeout.
	_ = rc.SetWriteDeadline(time.Time{})
	run.OnEvent = func(e agent.Event) {
		data, _ := json.Marshal(e)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Type, data)
		_ = rc.Flush()
	}
	_, _ = a.opts.Kernel.Run(r.Context(), run) // errors were sent as an error event
	return nil
}

func (a *API) listSessions(w http.ResponseWriter, r *http.Request) error {
	pg, err := ParsePage(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.SessionFilter{Agent: q.Get("agent"), Principal: q.Get("principal"), Query: q.Get("q"), Limit: pg.Limit, Offset: pg.Offset}
	if p := who(r); !p.Admin {
		f.Principal = p.Name // only one's own
	}
	ss, err := a.opts.Store.ListSessions(r.Context(), f)
	if err != nil {
		return err
	}
	total, err := a.opts.Store.CountSessions(r.Context(), f)
	if err != nil {
		return err
	}
	out := make([]sessionJSON, len(ss))
	for i, s := range ss {
		out[i] = toSessionJSON(s)
	}
	writeJSON(w, http.StatusOK, PageBody("sessions", out, total, pg))
	return nil
}

type sessionJSON struct {
	ID        string        `json:"id"`
	Agent     string        `json:"agent"`
	Title     string        `json:"title"`
	Origin    string        `json:"origin"`
	Principal string        `json:"principal,omitempty"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
	Messages  []llm.Message `json:"messages,omitempty"`
}

func toSessionJSON(s store.Session) sessionJSON {
	return sessionJSON{ID: s.ID, Agent: s.Agent, Title: s.Title, Origin: s.Origin, Principal: s.Principal, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func (a *API) getSession(w http.ResponseWriter, r *http.Request) error {
	s, msgs, err := a.opts.Kernel.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if !who(r).MaySee(s.Principal) {
		return fmt.Errorf("%w: %s", agent.ErrSessionNotFound, s.ID)
	}
	out := toSessionJSON(s)
	out.Messages = msgs
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) deleteSession(w http.ResponseWriter, r *http.Request) error {
	s, err := a.opts.Store.GetSession(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if !who(r).MaySee(s.Principal) {
		return fmt.Errorf("%w: %s", agent.ErrSessionNotFound, s.ID)
	}
	if err := a.opts.Store.DeleteSession(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) listTools(w http.ResponseWriter, r *http.Request) error {
	pg, err := ParsePage(r)
	if err != nil {
		return err
	}
	p := who(r)
	specs := []tool.Spec{}
	for _, t := range a.opts.Tools.List() {
		if sp := t.Spec(); p.MayCallTool(sp.Name) {
			specs = append(specs, sp)
		}
	}
	writeJSON(w, http.StatusOK, PageBody("tools", Window(specs, pg), len(specs), pg))
	return nil
}

// callTool runs one tool through the full pipeline on behalf of the
// operator (`agentd mcp call`), for debugging upstreams.
func (a *API) callTool(w http.ResponseWriter, r *http.Request) error {
	var args json.RawMessage
	if err := decode(r, &args); err != nil {
		return err
	}
	name := r.PathValue("name")
	if _, ok := a.opts.Tools.Lookup(name); !ok {
		return errorf(http.StatusNotFound, "not_found", "tool %q not found", name)
	}
	p := who(r)
	if !p.MayCallTool(name) {
		return fmt.Errorf("%w: principal %q may not call tool %q", agent.ErrForbidden, p.Name, name)
	}
	scope := a.opts.Kernel.Runner().Scope(tool.ScopeParams{Agent: "operator", Principal: p, Rules: &policy.Rules{Capabilities: []string{"*"}}})
	out := scope.Call(r.Context(), llm.ToolCall{ID: "api", Name: name, Arguments: args}, nil)
	writeJSON(w, http.StatusOK, map[string]any{
		"content": out.Result.Content, "is_error": out.Result.IsError, "structured": out.Structured,
		"untrusted": out.Untrusted, "duration_ms": out.Duration.Milliseconds(),
	})
	return nil
}

func (a *API) queryAudit(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	pg, err := ParsePage(r)
	if err != nil {
		return err
	}
	f := store.AuditFilter{Agent: q.Get("agent"), SessionID: q.Get("session_id"), ToolMatch: q.Get("tool"), Principal: q.Get("principal"),
		Decision: q.Get("decision"), Outcome: q.Get("outcome"), Limit: pg.Limit, Offset: pg.Offset}
	if p := who(r); !p.Admin {
		f.Principal = p.Name // only one's own calls
	}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if s := q.Get(t.name); s != "" {
			v, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return &Error{Status: http.StatusBadRequest, Code: "invalid", Message: fmt.Sprintf("%s: %q is not an RFC 3339 time", t.name, s), Field: t.name}
			}
			*t.dst = v
		}
	}
	recs, err := a.opts.Store.QueryAudit(r.Context(), f)
	if err != nil {
		return err
	}
	total, err := a.opts.Store.CountAudit(r.Context(), f)
	if err != nil {
		return err
	}
	out := make([]AuditRecord, len(recs))
	for i, x := range recs {
		out[i] = toAuditRecord(x)
	}
	writeJSON(w, http.StatusOK, PageBody("records", out, total, pg))
	return nil
}

// AuditRecord is an audit record as GET /api/audit answers it: the
// store's record in the API's snake_case (the store's type has no JSON
// names, and once answered its Go field names).
type AuditRecord struct {
	ID         int64     `json:"id"`
	Time       time.Time `json:"time"`
	Agent      string    `json:"agent"`
	SessionID  string    `json:"session_id"`
	Tool       string    `json:"tool"`
	ArgsDigest string    `json:"args_digest"`
	Decision   string    `json:"decision"`
	Outcome    string    `json:"outcome"`
	Detail     string    `json:"detail"`
	Untrusted  bool      `json:"untrusted"`
	DurationMS float64   `json:"duration_ms"`
	Principal  string    `json:"principal"`
}

func toAuditRecord(x store.AuditRecord) AuditRecord {
	return AuditRecord{ID: x.ID, Time: x.Time, Agent: x.Agent, SessionID: x.SessionID, Tool: x.Tool, ArgsDigest: x.ArgsDigest,
		Decision: x.Decision, Outcome: x.Outcome, Detail: x.Detail, Untrusted: x.Untrusted,
		DurationMS: float64(x.Duration.Microseconds()) / 1000, Principal: x.Principal}
}

func (a *API) mcpServers(w http.ResponseWriter, r *http.Request) error {
	if a.opts.MCP == nil {
		return errorf(http.StatusServiceUnavailable, "unavailable", "the MCP client is not running")
	}
	v, err := a.opts.MCP.Servers(r.Context(), principal.FromContext(r.Context()))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (a *API) addMCPServer(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	if a.opts.MCP == nil {
		return errorf(http.StatusServiceUnavailable, "unavailable", "the MCP client is not running")
	}
	var cfg json.RawMessage
	if err := decode(r, &cfg); err != nil {
		return err
	}
	if err := a.opts.MCP.Add(r.Context(), cfg); err != nil {
		if errors.Is(err, store.ErrExists) {
			return &Error{Status: http.StatusConflict, Code: "exists", Message: err.Error(), Field: "name", Fields: map[string]string{"name": err.Error()}}
		}
		return invalid(err)
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// MCPServerPatch is the body of PATCH /api/mcp/servers/{name}.
type MCPServerPatch struct {
	Enabled *bool `json:"enabled"`
}

func (a *API) patchMCPServer(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	if a.opts.MCP == nil {
		return errorf(http.StatusServiceUnavailable, "unavailable", "the MCP client is not running")
	}
	var p MCPServerPatch
	if err := decode(r, &p); err != nil {
		return err
	}
	if p.Enabled == nil {
		return &Error{Status: http.StatusBadRequest, Code: "invalid", Message: "enabled: required (true or false)", Field: "enabled"}
	}
	if err := a.opts.MCP.SetEnabled(r.Context(), r.PathValue("name"), *p.Enabled); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) removeMCPServer(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	if a.opts.MCP == nil {
		return errorf(http.StatusServiceUnavailable, "unavailable", "the MCP client is not running")
	}
	if err := a.opts.MCP.Remove(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// who is the principal the request was authenticated as. The API is
// always served behind Protect, which sets it (principal.Local when the
// daemon has no keys).
func who(r *http.Request) *principal.Principal {
	if p := principal.FromContext(r.Context()); p != nil {
		return p
	}
	return principal.Local
}

// requireAdmin refuses a request whose principal is not an admin.
func requireAdmin(r *http.Request) error {
	if p := who(r); !p.Admin {
		return fmt.Errorf("%w: principal %q is not an admin", agent.ErrForbidden, p.Name)
	}
	return nil
}

// decode reads a JSON body strictly: unknown fields are errors that name
// the field, so typos are not silently ignored.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		e := errorf(http.StatusBadRequest, "invalid_json", "request body: %s", err)
		// Name the field for forms: a value of the wrong type, or a
		// field that does not exist.
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			e.Field = ute.Field
			e.Message = fmt.Sprintf("%s: must be %s, not %s", ute.Field, jsonKind(ute.Type.Kind().String()), ute.Value)
		} else if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
			e.Field = m[1]
		}
		return e
	}
	// Read to the end: a body with more after its value is refused, and
	// net/http watches a connection for its client going away (which
	// cancels the request's context, and so a streamed run) only once the
	// body was read to its end.
	if _, err := dec.Token(); err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errorf(http.StatusBadRequest, "invalid_json", "request body: more than one JSON value")
	}
	return nil
}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// jsonKind words a Go kind as the JSON a client should send.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "a number"
	case k == "bool":
		return "true or false"
	case k == "slice", k == "array":
		return "a list"
	case k == "map", k == "struct":
		return "an object"
	}
	return "a " + k
}

// Router is where Register adds its routes: an *http.ServeMux, or the
// daemon's recording mux.
type Router interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}
