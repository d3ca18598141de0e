// Package store defines agentd's persistence contract: agents, sessions and
// their messages, A2A tasks and their push-notification configs, agent
// memory, the audit log, MCP server registrations and minted API keys
// (their hashes). Backends (sqlite,
// postgres) live in subpackages and must pass the contract suite in
// storetest.
//
// Records carry protocol payloads as opaque JSON so that this package stays
// independent of every protocol and of the agent loop.
//
// Conventions every backend keeps (storetest checks them): zero timestamps
// are filled with the current time and returned in UTC; Put* and
// UpdateTask keep the original CreatedAt; Delete*, Messages and
// AppendMessages on a missing record return ErrNotFound; list results of
// agents and MCP servers are sorted by name; TaskFilter.UpdatedAfter is
// exclusive and AuditFilter.Since inclusive; PruneTasks rejects a negative
// keep; FailRunningTasks calls its function outside any transaction;
// PruneTasks deletes the push configs of the tasks it deletes.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors every backend returns (possibly wrapped).
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	// ErrConflict reports an optimistic-concurrency failure: the record
	// changed since the version the caller read.
	ErrConflict = errors.New("concurrent modification")
	// ErrUnavailable reports a transient fault: the backend cannot be
	// reached now (the database is down, restarting, or cut off). Its
	// text names no connection details (host, port, user, database):
	// edges show it to clients as it is. Retry later; SafeToRetry says
	// whether retrying a write now could apply it twice.
	ErrUnavailable = errors.New("store unavailable, retry")
)

// SafeToRetry reports whether err is ErrUnavailable from a request that
// was certainly not applied (it could not connect, or the server ended
// the session in answer to it), so that retrying a write cannot apply it
// twice. A connection lost after the request was sent leaves the outcome
// unknown: false.
func SafeToRetry(err error) bool {
	var s interface{ SafeToRetry() bool }
	return errors.Is(err, ErrUnavailable) && errors.As(err, &s) && s.SafeToRetry()
}

// Agent is a persisted agent manifest. The manifest itself is opaque JSON
// owned by the agent package.
type Agent struct {
	Name      string
	Manifest  json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// AgentStore persists agents created at runtime.
type AgentStore interface {
	// PutAgent creates or replaces the agent named a.Name.
	PutAgent(ctx context.Context, a Agent) error
	GetAgent(ctx context.Context, name string) (Agent, error)
	ListAgents(ctx context.Context) ([]Agent, error)
	DeleteAgent(ctx context.Context, name string) error
}

// Session is one conversation with one agent.
type Session struct {
	ID     string
	Agent  string
	Title  string
	Origin string // "http", "mcp", "a2a", "acp", "cli": where it started
	// Principal is who started it (see package principal); "" for
	// sessions older than principals.
	Principal string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Message is one stored message of a session. Content is the agent
// package's JSON encoding of the message; Role is copied out for queries.
type Message struct {
	SessionID string
	Seq       int64 // assigned by the store, 1-based, gapless per session
	Role      string
	Content   json.RawMessage
	CreatedAt time.Time
}

// SessionFilter narrows ListSessions. Zero values mean no filter.
type SessionFilter struct {
	Agent     string
	Principal string
	// Query keeps the sessions whose id, agent or title contains it, or
	// one of whose messages does, ignoring ASCII case.
	Query  string
	Limit  int // 0 = no limit
	Offset int
}

// SessionStore persists sessions and their messages.
type SessionStore interface {
	// CreateSession stores a new session (ErrExists if the ID is taken)
	// and, in the same transaction, its first messages as AppendMessages
	// would append them: one commit for a conversation's first turn.
	CreateSession(ctx context.Context, s Session, msgs ...Message) error
	GetSession(ctx context.Context, id string) (Session, error)
	// ListSessions returns sessions, most recently updated first.
	ListSessions(ctx context.Context, f SessionFilter) ([]Session, error)
	// CountSessions is how many sessions ListSessions would return
	// without f's Limit and Offset: the total an API page reports.
	CountSessions(ctx context.Context, f SessionFilter) (int, error)
	// DeleteSession removes the session and its messages.
	DeleteSession(ctx context.Context, id string) error
	// AppendMessages appends msgs atomically, assigns their Seq, and bumps
	// the session's UpdatedAt. It returns the messages as stored.
	AppendMessages(ctx context.Context, sessionID string, msgs []Message) ([]Message, error)
	// Messages returns the session's messages in Seq order.
	Messages(ctx context.Context, sessionID string) ([]Message, error)
}

// Task is a persisted A2A task. Data is the protocol's JSON for the whole
// task (status, history, artifacts); the other fields are copies for
// queries and eviction.
type Task struct {
	ID        string
	ContextID string
	Agent     string
	State     string
	Terminal  bool
	Owner     string
	Data      json.RawMessage
	Version   int64 // assigned by the store; starts at 1, +1 per update
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TaskFilter narrows ListTasks. Zero values mean no filter.
type TaskFilter struct {
	ContextID    string
	Agent        string
	State        string
	Owner        string
	UpdatedAfter time.Time
	Limit        int // 0 = no limit
	Offset       int
}

// SessionTaskWriter is implemented by stores that can end a turn in one
// transaction: append a session's last messages and create the task the
// turn answered. An A2A task whose run ends within its request is stored
// once, finished, together with the model's reply, instead of in a second
// commit after it. Either both writes happen or neither: ErrNotFound if
// the session is absent, ErrExists if the task's ID is taken.
type SessionTaskWriter interface {
	AppendMessagesCreateTask(ctx context.Context, sessionID string, msgs []Message, t Task) ([]Message, error)
	// CreateSessionWithTask stores a new session with its messages, as
	// CreateSession does, and creates t: a whole first turn in one commit.
	// ErrExists if the session's or the task's ID is taken.
	CreateSessionWithTask(ctx context.Context, s Session, msgs []Message, t Task) error
}

// TaskStore persists A2A tasks.
type TaskStore interface {
	// CreateTask stores a new task with Version 1; ErrExists if the ID is taken.
	CreateTask(ctx context.Context, t Task) (version int64, err error)
	// UpdateTask replaces the task if its stored version is prevVersion
	// (prevVersion 0 skips the check); ErrConflict otherwise, ErrNotFound
	// if absent. It returns the new version.
	UpdateTask(ctx context.Context, t Task, prevVersion int64) (version int64, err error)
	GetTask(ctx context.Context, id string) (Task, error)
	// ListTasks returns matching tasks, most recently updated first, and
	// the total number of matches ignoring Limit and Offset.
	ListTasks(ctx context.Context, f TaskFilter) (tasks []Task, total int, err error)
	// PruneTasks deletes the oldest terminal tasks until at most keep tasks
	// remain (non-terminal tasks are never deleted) and returns how many
	// it deleted.
	PruneTasks(ctx context.Context, keep int) (int, error)
	// FailRunningTasks marks every non-terminal task as failed: used at
	// start-up, since a run does not survive the process. update receives
	// the stored task and returns the new Data and State.
	FailRunningTasks(ctx context.Context, update func(Task) (data json.RawMessage, state string)) (int, error)
}

// PushConfig is an A2A push-notification config: a webhook a client
// registered for a task. Config is the protocol's JSON for it and may hold
// the webhook's token and credentials, so callers must keep it out of logs.
type PushConfig struct {
	TaskID    string
	ID        string // unique per task
	Config    json.RawMessage
	CreatedAt time.Time
}

// PushConfigStore persists push-notification configs, keyed by task and
// config ID. A config may be stored before its task exists (a2a servers
// register a message's webhook before creating its task), so the store
// does not require the task.
type PushConfigStore interface {
	// PutPushConfig creates or replaces the config (c.TaskID, c.ID);
	// replacing keeps the stored CreatedAt and the config's place in lists.
	PutPushConfig(ctx context.Context, c PushConfig) error
	GetPushConfig(ctx context.Context, taskID, id string) (PushConfig, error)
	// ListPushConfigs returns the task's configs, oldest CreatedAt first
	// (ties in the order they were first put).
	ListPushConfigs(ctx context.Context, taskID string) ([]PushConfig, error)
	// AllPushConfigs returns every task's configs, ordered as
	// ListPushConfigs orders one task's: what a server loads at start.
	AllPushConfigs(ctx context.Context) ([]PushConfig, error)
	DeletePushConfig(ctx context.Context, taskID, id string) error
	// DeletePushConfigs removes every config of the task and returns how
	// many it removed; a task without configs is not an error.
	DeletePushConfigs(ctx context.Context, taskID string) (int, error)
}

// Memory is one remembered fact of an agent.
type Memory struct {
	Agent     string
	Key       string
	Value     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// MemoryStore persists per-agent memory.
type MemoryStore interface {
	// PutMemory creates or replaces the value under (agent, key).
	PutMemory(ctx context.Context, m Memory) error
	// RecallMemory returns the agent's memories whose key or value contains
	// query (case-insensitive; empty query matches all), most recently
	// updated first, at most limit (0 = no limit).
	RecallMemory(ctx context.Context, agent, query string, limit int) ([]Memory, error)
	DeleteMemory(ctx context.Context, agent, key string) error
}

// AuditRecord is one tool call decision and outcome.
type AuditRecord struct {
	ID         int64 // assigned by the store
	Time       time.Time
	Agent      string
	SessionID  string
	Tool       string
	ArgsDigest string // hex SHA-256 of the canonical arguments; never the arguments
	Decision   string // allow, deny, ask, approved, rejected
	Outcome    string // ok, error, timeout, denied, cancelled
	Detail     string // short reason or error text; never a secret
	Untrusted  bool   // the result came from an untrusted source
	Duration   time.Duration
	Principal  string // who made the call (see package principal)
}

// AuditFilter narrows QueryAudit. Zero values mean no filter.
type AuditFilter struct {
	Agent     string
	Principal string
	SessionID string
	Tool      string // the tool's exact name
	// ToolMatch keeps the records whose tool name matches it, ignoring
	// ASCII case: a pattern where '*' is any run of characters and '?'
	// one character (every other character literal) when it has either,
	// else a substring of the name.
	ToolMatch string
	Decision  string
	Outcome   string
	Since     time.Time // inclusive
	Until     time.Time // exclusive
	Limit     int       // 0 = no limit
	Offset    int       // records to skip, newest first
}

// AuditStore persists the audit log. It is append-only.
type AuditStore interface {
	AppendAudit(ctx context.Context, r AuditRecord) (int64, error)
	// QueryAudit returns matching records, newest first.
	QueryAudit(ctx context.Context, f AuditFilter) ([]AuditRecord, error)
	// CountAudit is how many records QueryAudit would return without f's
	// Limit and Offset: the total an API page reports.
	CountAudit(ctx context.Context, f AuditFilter) (int, error)
}

// MCPServer is an MCP server registered at runtime through the API. Config
// is the config package's JSON for one [[mcp_servers]] entry.
type MCPServer struct {
	Name      string
	Config    json.RawMessage
	CreatedAt time.Time
}

// MCPServerStore persists runtime MCP server registrations.
type MCPServerStore interface {
	PutMCPServer(ctx context.Context, s MCPServer) error
	ListMCPServers(ctx context.Context) ([]MCPServer, error)
	DeleteMCPServer(ctx context.Context, name string) error
}

// APIKey is a bearer key minted at runtime for a configured principal
// (POST /api/principals/{name}/keys). Only its SHA-256 is kept: the key
// itself is shown once, to whoever minted it. Revoked keys stay, with
// who revoked them and when, so that the key list and the audit log keep
// their history; they resolve to nothing.
type APIKey struct {
	// ID names the key in lists, the audit log and revocation; it is
	// random and tells nothing about the key.
	ID        string
	Principal string
	// Label is the minter's note ("laptop", "ci"), free text.
	Label     string
	Hash      [32]byte // SHA-256 of the key
	CreatedAt time.Time
	CreatedBy string    // the principal that minted it
	RevokedAt time.Time // zero while the key is live
	RevokedBy string
}

// Revoked reports whether the key was revoked.
func (k APIKey) Revoked() bool { return !k.RevokedAt.IsZero() }

// KeyStore persists minted API keys. With a shared store (PostgreSQL)
// every replica reads the same keys, so a revocation is seen by the next
// request wherever it lands.
type KeyStore interface {
	// CreateAPIKey stores a new live key; ErrExists if its ID or its hash
	// is taken.
	CreateAPIKey(ctx context.Context, k APIKey) error
	// LiveAPIKey returns the live (unrevoked) key whose hash is hash;
	// ErrNotFound if none.
	LiveAPIKey(ctx context.Context, hash [32]byte) (APIKey, error)
	// GetAPIKey returns the key with the given ID, revoked or not;
	// ErrNotFound if none.
	GetAPIKey(ctx context.Context, id string) (APIKey, error)
	// ListAPIKeys returns the keys of principal ("" = every principal's),
	// revoked ones included, most recently created first.
	ListAPIKeys(ctx context.Context, principal string) ([]APIKey, error)
	// RevokeAPIKey marks the live key id revoked by by at at (zero = now)
	// and returns it as stored; ErrNotFound if no live key has that ID.
	RevokeAPIKey(ctx context.Context, id, by string, at time.Time) (APIKey, error)
}

// Store is everything a backend provides. Consumers should depend on the
// narrow interface they use.
type Store interface {
	AgentStore
	SessionStore
	TaskStore
	PushConfigStore
	MemoryStore
	AuditStore
	MCPServerStore
	KeyStore
	// Ping reports whether the backend answers now (readiness): nil, or
	// an error that names no connection details.
	Ping(ctx context.Context) error
	// Close releases the backend; it is safe to call once.
	Close() error
}
