// Package storemetrics records the latency and errors of every store
// operation, whatever the backend: Wrap puts a decorator in front of a
// store.Store that times each method into one histogram,
// db.client.operation.duration (OpenTelemetry's database semantic
// conventions), labelled with the backend (db.system.name: sqlite,
// postgresql), the method (db.operation.name: GetSession, AppendAudit, ...)
// and, when it failed, error.type.
//
// One decorator instead of timing code in each method of each backend:
// a backend cannot forget an operation, and the backends stay free of
// telemetry. Labels come from fixed sets (the interface's methods, the
// store's sentinel errors), so their measurement options are built once
// at Wrap and recording allocates nothing; with metrics off Wrap returns
// the store itself, so there is no cost at all.
package storemetrics

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/agentd/agentd/internal/store"
)

// Backend names, the values of db.system.name.
const (
	SQLite     = "sqlite"
	PostgreSQL = "postgresql"
)

// Scope is the instrumentation scope of the histogram; the daemon's
// other instruments use the same one (telemetry.Scope), which this
// package does not import so that it stays on the OTel API alone.
const Scope = "github.com/agentd/agentd"

// op is one store method.
type op int

const (
	opPutAgent op = iota
	opGetAgent
	opListAgents
	opDeleteAgent
	opCreateSession
	opGetSession
	opListSessions
	opCountSessions
	opDeleteSession
	opAppendMessages
	opMessages
	opCreateTask
	opUpdateTask
	opGetTask
	opListTasks
	opPruneTasks
	opFailRunningTasks
	opPutPushConfig
	opGetPushConfig
	opListPushConfigs
	opAllPushConfigs
	opDeletePushConfig
	opDeletePushConfigs
	opPutMemory
	opRecallMemory
	opDeleteMemory
	opAppendAudit
	opAppendAuditBatch
	opQueryAudit
	opCountAudit
	opAppendMessagesCreateTask
	opCreateSessionWithTask
	opPutMCPServer
	opListMCPServers
	opDeleteMCPServer
	opCreateAPIKey
	opLiveAPIKey
	opGetAPIKey
	opListAPIKeys
	opRevokeAPIKey
	opPing
	numOps
)

// opNames are the db.operation.name values: the method names.
var opNames = [numOps]string{
	"PutAgent", "GetAgent", "ListAgents", "DeleteAgent",
	"CreateSession", "GetSession", "ListSessions", "CountSessions", "DeleteSession", "AppendMessages", "Messages",
	"CreateTask", "UpdateTask", "GetTask", "ListTasks", "PruneTasks", "FailRunningTasks",
	"PutPushConfig", "GetPushConfig", "ListPushConfigs", "AllPushConfigs", "DeletePushConfig", "DeletePushConfigs",
	"PutMemory", "RecallMemory", "DeleteMemory",
	"AppendAudit", "AppendAuditBatch", "QueryAudit", "CountAudit",
	"AppendMessagesCreateTask", "CreateSessionWithTask",
	"PutMCPServer", "ListMCPServers", "DeleteMCPServer",
	"CreateAPIKey", "LiveAPIKey", "GetAPIKey", "ListAPIKeys", "RevokeAPIKey",
	"Ping",
}

// errKind is a failed operation's error.type.
type errKind int

const (
	errNone errKind = iota
	errNotFound
	errExists
	errConflict
	errCanceled
	errTimeout
	errOther
	numErrKinds
)

// errNames are the error.type values; "" is success (no label).
var errNames = [numErrKinds]string{"", "not_found", "exists", "conflict", "cancelled", "timeout", "_OTHER"}

func kindOf(err error) errKind {
	switch {
	case err == nil:
		return errNone
	case errors.Is(err, store.ErrNotFound):
		return errNotFound
	case errors.Is(err, store.ErrExists):
		return errExists
	case errors.Is(err, store.ErrConflict):
		return errConflict
	case errors.Is(err, context.Canceled):
		return errCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return errTimeout
	default:
		return errOther
	}
}

// batchAppender is auditlog.BatchAppender, which both backends implement:
// the decorator keeps it when the store has it.
type batchAppender interface {
	AppendAuditBatch(ctx context.Context, recs []store.AuditRecord) error
}

// full is what both backends implement: a store that also writes audit
// batches and ends a turn in one transaction.
type full interface {
	batchAppender
	store.SessionTaskWriter
}

// Wrap returns st with its operations recorded on mp's meter, labelled
// with backend; st itself when mp is nil (metrics off). The result also
// has AppendAuditBatch when st does, and store.SessionTaskWriter when st
// has both: a decorator that hid them would silently turn the audit
// writer's batches and the one-commit turn back into single writes.
func Wrap(st store.Store, backend string, mp metric.MeterProvider) store.Store {
	if mp == nil {
		return st
	}
	m := newMetered(st, backend, mp)
	if f, ok := st.(full); ok {
		return &meteredFull{meteredBatch: &meteredBatch{metered: m, batch: f}, tw: f}
	}
	if b, ok := st.(batchAppender); ok {
		return &meteredBatch{metered: m, batch: b}
	}
	return m
}

// metered is a store.Store that records each operation's duration.
type metered struct {
	st       store.Store
	duration metric.Float64Histogram
	// opts[op][errKind]: every label combination, built once.
	opts [numOps][numErrKinds][]metric.RecordOption
}

var _ store.Store = (*metered)(nil)

func newMetered(st store.Store, backend string, mp metric.MeterProvider) *metered {
	m := &metered{st: st}
	// An instrument whose creation fails is a no-op one; the error only
	// says the name or buckets were unusual, which they are not.
	m.duration, _ = mp.Meter(Scope).Float64Histogram("db.client.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of store operations, by backend, operation (the store method) and error type."),
		// From a tenth of a millisecond (a cached SQLite read) to
		// seconds (a commit waiting on a busy disk or a remote server).
		metric.WithExplicitBucketBoundaries(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	sys := semconv.DBSystemNameKey.String(backend)
	for o := range numOps {
		for k := range numErrKinds {
			kv := []attribute.KeyValue{sys, semconv.DBOperationName(opNames[o])}
			if k != errNone {
				kv = append(kv, semconv.ErrorTypeKey.String(errNames[k]))
			}
			m.opts[o][k] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
		}
	}
	return m
}

// record records an operation that started at start and returned err.
// (The SDK records whatever the state of ctx, so a cancelled call's
// operation is counted too.)
func (m *metered) record(ctx context.Context, o op, start time.Time, err error) {
	m.duration.Record(ctx, time.Since(start).Seconds(), m.opts[o][kindOf(err)]...)
}

// Close closes the store; it is not an operation worth timing.
func (m *metered) Close() error { return m.st.Close() }

// Ping is timed like every operation: the readiness probe's latency is
// the database's round trip, worth seeing beside the others.
func (m *metered) Ping(ctx context.Context) error {
	start := time.Now()
	err := m.st.Ping(ctx)
	m.record(ctx, opPing, start, err)
	return err
}

func (m *metered) PutAgent(ctx context.Context, a store.Agent) error {
	start := time.Now()
	err := m.st.PutAgent(ctx, a)
	m.record(ctx, opPutAgent, start, err)
	return err
}

func (m *metered) GetAgent(ctx context.Context, name string) (store.Agent, error) {
	start := time.Now()
	a, err := m.st.GetAgent(ctx, name)
	m.record(ctx, opGetAgent, start, err)
	return a, err
}

func (m *metered) ListAgents(ctx context.Context) ([]store.Agent, error) {
	start := time.Now()
	as, err := m.st.ListAgents(ctx)
	m.record(ctx, opListAgents, start, err)
	return as, err
}

func (m *metered) DeleteAgent(ctx context.Context, name string) error {
	start := time.Now()
	err := m.st.DeleteAgent(ctx, name)
	m.record(ctx, opDeleteAgent, start, err)
	return err
}

func (m *metered) CreateSession(ctx context.Context, s store.Session, msgs ...store.Message) error {
	start := time.Now()
	err := m.st.CreateSession(ctx, s, msgs...)
	m.record(ctx, opCreateSession, start, err)
	return err
}

func (m *metered) GetSession(ctx context.Context, id string) (store.Session, error) {
	start := time.Now()
	s, err := m.st.GetSession(ctx, id)
	m.record(ctx, opGetSession, start, err)
	return s, err
}

func (m *metered) ListSessions(ctx context.Context, f store.SessionFilter) ([]store.Session, error) {
	start := time.Now()
	ss, err := m.st.ListSessions(ctx, f)
	m.record(ctx, opListSessions, start, err)
	return ss, err
}

func (m *metered) CountSessions(ctx context.Context, f store.SessionFilter) (int, error) {
	start := time.Now()
	n, err := m.st.CountSessions(ctx, f)
	m.record(ctx, opCountSessions, start, err)
	return n, err
}

func (m *metered) DeleteSession(ctx context.Context, id string) error {
	start := time.Now()
	err := m.st.DeleteSession(ctx, id)
	m.record(ctx, opDeleteSession, start, err)
	return err
}

func (m *metered) AppendMessages(ctx context.Context, sessionID string, msgs []store.Message) ([]store.Message, error) {
	start := time.Now()
	out, err := m.st.AppendMessages(ctx, sessionID, msgs)
	m.record(ctx, opAppendMessages, start, err)
	return out, err
}

func (m *metered) Messages(ctx context.Context, sessionID string) ([]store.Message, error) {
	start := time.Now()
	out, err := m.st.Messages(ctx, sessionID)
	m.record(ctx, opMessages, start, err)
	return out, err
}

func (m *metered) CreateTask(ctx context.Context, t store.Task) (int64, error) {
	start := time.Now()
	v, err := m.st.CreateTask(ctx, t)
	m.record(ctx, opCreateTask, start, err)
	return v, err
}

func (m *metered) UpdateTask(ctx context.Context, t store.Task, prevVersion int64) (int64, error) {
	start := time.Now()
	v, err := m.st.UpdateTask(ctx, t, prevVersion)
	m.record(ctx, opUpdateTask, start, err)
	return v, err
}

func (m *metered) GetTask(ctx context.Context, id string) (store.Task, error) {
	start := time.Now()
	t, err := m.st.GetTask(ctx, id)
	m.record(ctx, opGetTask, start, err)
	return t, err
}

func (m *metered) ListTasks(ctx context.Context, f store.TaskFilter) ([]store.Task, int, error) {
	start := time.Now()
	ts, total, err := m.st.ListTasks(ctx, f)
	m.record(ctx, opListTasks, start, err)
	return ts, total, err
}

func (m *metered) PruneTasks(ctx context.Context, keep int) (int, error) {
	start := time.Now()
	n, err := m.st.PruneTasks(ctx, keep)
	m.record(ctx, opPruneTasks, start, err)
	return n, err
}

// FailRunningTasks is timed with its update function, which the store
// calls for each task it fails.
func (m *metered) FailRunningTasks(ctx context.Context, update func(store.Task) (json.RawMessage, string)) (int, error) {
	start := time.Now()
	n, err := m.st.FailRunningTasks(ctx, update)
	m.record(ctx, opFailRunningTasks, start, err)
	return n, err
}

func (m *metered) PutPushConfig(ctx context.Context, c store.PushConfig) error {
	start := time.Now()
	err := m.st.PutPushConfig(ctx, c)
	m.record(ctx, opPutPushConfig, start, err)
	return err
}

func (m *metered) GetPushConfig(ctx context.Context, taskID, id string) (store.PushConfig, error) {
	start := time.Now()
	c, err := m.st.GetPushConfig(ctx, taskID, id)
	m.record(ctx, opGetPushConfig, start, err)
	return c, err
}

func (m *metered) ListPushConfigs(ctx context.Context, taskID string) ([]store.PushConfig, error) {
	start := time.Now()
	cs, err := m.st.ListPushConfigs(ctx, taskID)
	m.record(ctx, opListPushConfigs, start, err)
	return cs, err
}

func (m *metered) AllPushConfigs(ctx context.Context) ([]store.PushConfig, error) {
	start := time.Now()
	cs, err := m.st.AllPushConfigs(ctx)
	m.record(ctx, opAllPushConfigs, start, err)
	return cs, err
}

func (m *metered) DeletePushConfig(ctx context.Context, taskID, id string) error {
	start := time.Now()
	err := m.st.DeletePushConfig(ctx, taskID, id)
	m.record(ctx, opDeletePushConfig, start, err)
	return err
}

func (m *metered) DeletePushConfigs(ctx context.Context, taskID string) (int, error) {
	start := time.Now()
	n, err := m.st.DeletePushConfigs(ctx, taskID)
	m.record(ctx, opDeletePushConfigs, start, err)
	return n, err
}

func (m *metered) PutMemory(ctx context.Context, mem store.Memory) error {
	start := time.Now()
	err := m.st.PutMemory(ctx, mem)
	m.record(ctx, opPutMemory, start, err)
	return err
}

func (m *metered) RecallMemory(ctx context.Context, agent, query string, limit int) ([]store.Memory, error) {
	start := time.Now()
	ms, err := m.st.RecallMemory(ctx, agent, query, limit)
	m.record(ctx, opRecallMemory, start, err)
	return ms, err
}

func (m *metered) DeleteMemory(ctx context.Context, agent, key string) error {
	start := time.Now()
	err := m.st.DeleteMemory(ctx, agent, key)
	m.record(ctx, opDeleteMemory, start, err)
	return err
}

func (m *metered) AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error) {
	start := time.Now()
	id, err := m.st.AppendAudit(ctx, r)
	m.record(ctx, opAppendAudit, start, err)
	return id, err
}

func (m *metered) QueryAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error) {
	start := time.Now()
	rs, err := m.st.QueryAudit(ctx, f)
	m.record(ctx, opQueryAudit, start, err)
	return rs, err
}

func (m *metered) CountAudit(ctx context.Context, f store.AuditFilter) (int, error) {
	start := time.Now()
	n, err := m.st.CountAudit(ctx, f)
	m.record(ctx, opCountAudit, start, err)
	return n, err
}

func (m *metered) PutMCPServer(ctx context.Context, s store.MCPServer) error {
	start := time.Now()
	err := m.st.PutMCPServer(ctx, s)
	m.record(ctx, opPutMCPServer, start, err)
	return err
}

func (m *metered) ListMCPServers(ctx context.Context) ([]store.MCPServer, error) {
	start := time.Now()
	ss, err := m.st.ListMCPServers(ctx)
	m.record(ctx, opListMCPServers, start, err)
	return ss, err
}

func (m *metered) DeleteMCPServer(ctx context.Context, name string) error {
	start := time.Now()
	err := m.st.DeleteMCPServer(ctx, name)
	m.record(ctx, opDeleteMCPServer, start, err)
	return err
}

func (m *metered) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	start := time.Now()
	err := m.st.CreateAPIKey(ctx, k)
	m.record(ctx, opCreateAPIKey, start, err)
	return err
}

func (m *metered) LiveAPIKey(ctx context.Context, hash [32]byte) (store.APIKey, error) {
	start := time.Now()
	k, err := m.st.LiveAPIKey(ctx, hash)
	m.record(ctx, opLiveAPIKey, start, err)
	return k, err
}

func (m *metered) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	start := time.Now()
	k, err := m.st.GetAPIKey(ctx, id)
	m.record(ctx, opGetAPIKey, start, err)
	return k, err
}

func (m *metered) ListAPIKeys(ctx context.Context, principal string) ([]store.APIKey, error) {
	start := time.Now()
	ks, err := m.st.ListAPIKeys(ctx, principal)
	m.record(ctx, opListAPIKeys, start, err)
	return ks, err
}

func (m *metered) RevokeAPIKey(ctx context.Context, id, by string, at time.Time) (store.APIKey, error) {
	start := time.Now()
	k, err := m.st.RevokeAPIKey(ctx, id, by, at)
	m.record(ctx, opRevokeAPIKey, start, err)
	return k, err
}

// meteredBatch is metered over a store that writes audit batches.
type meteredBatch struct {
	*metered
	batch batchAppender
}

// AppendAuditBatch implements auditlog.BatchAppender.
func (m *meteredBatch) AppendAuditBatch(ctx context.Context, recs []store.AuditRecord) error {
	start := time.Now()
	err := m.batch.AppendAuditBatch(ctx, recs)
	m.record(ctx, opAppendAuditBatch, start, err)
	return err
}

// meteredFull is meteredBatch over a store that is also a
// store.SessionTaskWriter.
type meteredFull struct {
	*meteredBatch
	tw store.SessionTaskWriter
}

var _ store.SessionTaskWriter = (*meteredFull)(nil)

// AppendMessagesCreateTask implements store.SessionTaskWriter.
func (m *meteredFull) AppendMessagesCreateTask(ctx context.Context, sessionID string, msgs []store.Message, t store.Task) ([]store.Message, error) {
	start := time.Now()
	out, err := m.tw.AppendMessagesCreateTask(ctx, sessionID, msgs, t)
	m.record(ctx, opAppendMessagesCreateTask, start, err)
	return out, err
}

// CreateSessionWithTask implements store.SessionTaskWriter.
func (m *meteredFull) CreateSessionWithTask(ctx context.Context, s store.Session, msgs []store.Message, t store.Task) error {
	start := time.Now()
	err := m.tw.CreateSessionWithTask(ctx, s, msgs, t)
	m.record(ctx, opCreateSessionWithTask, start, err)
	return err
}
