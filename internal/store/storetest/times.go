package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// instants covers zones other than UTC, sub-millisecond digits and dates far
// from today.
var instants = []time.Time{
	base,
	time.Date(1980, time.January, 1, 0, 0, 0, 999_999, time.UTC),
	time.Date(2199, time.December, 31, 23, 59, 59, 987_654_321, time.FixedZone("UTC-8", -8*3600)),
	time.Date(2024, time.February, 29, 12, 0, 0, 1_000_000, time.FixedZone("UTC+14", 14*3600)),
}

var timeTests = map[string]func(t *testing.T, s suite){
	"RoundTrip": func(t *testing.T, s suite) {
		for i, tm := range instants {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				st := s.store(t)
				ctx := t.Context()
				later := tm.Add(90 * time.Second)

				ok(t, st.PutAgent(ctx, store.Agent{Name: "a", Manifest: raw(t, 1), CreatedAt: tm, UpdatedAt: later}), "PutAgent")
				a, err := st.GetAgent(ctx, "a")
				ok(t, err, "GetAgent")
				checkTime(t, "Agent.CreatedAt", a.CreatedAt, tm)
				checkTime(t, "Agent.UpdatedAt", a.UpdatedAt, later)

				ok(t, st.CreateSession(ctx, store.Session{ID: "s", Agent: "a", CreatedAt: tm, UpdatedAt: later}), "CreateSession")
				sess, err := st.GetSession(ctx, "s")
				ok(t, err, "GetSession")
				checkTime(t, "Session.CreatedAt", sess.CreatedAt, tm)
				checkTime(t, "Session.UpdatedAt", sess.UpdatedAt, later)

				_, err = st.AppendMessages(ctx, "s", []store.Message{{Role: "user", Content: raw(t, "x"), CreatedAt: tm}})
				ok(t, err, "AppendMessages")
				msgs, err := st.Messages(ctx, "s")
				ok(t, err, "Messages")
				checkTime(t, "Message.CreatedAt", msgs[0].CreatedAt, tm)

				_, err = st.CreateTask(ctx, store.Task{ID: "t", State: "working", Data: raw(t, 1), CreatedAt: tm, UpdatedAt: later})
				ok(t, err, "CreateTask")
				tk, err := st.GetTask(ctx, "t")
				ok(t, err, "GetTask")
				checkTime(t, "Task.CreatedAt", tk.CreatedAt, tm)
				checkTime(t, "Task.UpdatedAt", tk.UpdatedAt, later)
				// UpdatedAfter compares instants, not wall-clock strings.
				ts, total, err := st.ListTasks(ctx, store.TaskFilter{UpdatedAfter: later.Add(-time.Millisecond).In(time.FixedZone("UTC+3", 3*3600))})
				ok(t, err, "ListTasks(UpdatedAfter)")
				if total != 1 || len(ts) != 1 {
					t.Errorf("ListTasks(UpdatedAfter just before) = %d tasks, total %d, want 1", len(ts), total)
				}

				ok(t, st.PutMemory(ctx, store.Memory{Agent: "a", Key: "k", Value: "v", CreatedAt: tm, UpdatedAt: later}), "PutMemory")
				ms, err := st.RecallMemory(ctx, "a", "", 0)
				ok(t, err, "RecallMemory")
				checkTime(t, "Memory.CreatedAt", ms[0].CreatedAt, tm)
				checkTime(t, "Memory.UpdatedAt", ms[0].UpdatedAt, later)

				_, err = st.AppendAudit(ctx, store.AuditRecord{Time: tm, Tool: "x"})
				ok(t, err, "AppendAudit")
				rs, err := st.QueryAudit(ctx, store.AuditFilter{Since: tm.Add(-time.Millisecond).In(time.UTC)})
				ok(t, err, "QueryAudit")
				if len(rs) != 1 {
					t.Fatalf("QueryAudit(Since just before) = %d records, want 1", len(rs))
				}
				checkTime(t, "AuditRecord.Time", rs[0].Time, tm)

				pc := pushConfig(t, "t", "c")
				pc.CreatedAt = tm
				ok(t, st.PutPushConfig(ctx, pc), "PutPushConfig")
				pc, err = st.GetPushConfig(ctx, "t", "c")
				ok(t, err, "GetPushConfig")
				checkTime(t, "PushConfig.CreatedAt", pc.CreatedAt, tm)

				ok(t, st.PutMCPServer(ctx, store.MCPServer{Name: "m", Config: raw(t, 1), CreatedAt: tm}), "PutMCPServer")
				srvs, err := st.ListMCPServers(ctx)
				ok(t, err, "ListMCPServers")
				checkTime(t, "MCPServer.CreatedAt", srvs[0].CreatedAt, tm)
			})
		}
	},
}

var contextTests = map[string]func(t *testing.T, s suite){
	// Ping answers nil from a working store, and gives up with an error
	// once its context is done.
	"Ping": func(t *testing.T, s suite) {
		st := s.store(t)
		ok(t, st.Ping(t.Context()), "Ping")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := st.Ping(ctx); err == nil {
			t.Fatal("Ping with a canceled context answered nil")
		}
	},
	// Every method gives up, with the context's error, once its context
	// is done; a canceled write must leave nothing behind.
	"Canceled": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s", Agent: "a"}), "CreateSession")
		_, err := st.CreateTask(ctx, task(t, "t", "working", false))
		ok(t, err, "CreateTask")
		ok(t, st.PutPushConfig(ctx, pushConfig(t, "t", "c")), "PutPushConfig")

		dead := canceled(t)
		calls := map[string]func() error{
			"PutAgent":    func() error { return st.PutAgent(dead, store.Agent{Name: "x", Manifest: raw(t, 1)}) },
			"GetAgent":    func() error { _, err := st.GetAgent(dead, "x"); return err },
			"ListAgents":  func() error { _, err := st.ListAgents(dead); return err },
			"DeleteAgent": func() error { return st.DeleteAgent(dead, "x") },
			"CreateSession": func() error {
				return st.CreateSession(dead, store.Session{ID: "x", Agent: "a"})
			},
			"CreateSessionWithMessages": func() error {
				return st.CreateSession(dead, store.Session{ID: "y", Agent: "a"}, msg(t, "user", "x"))
			},
			"GetSession":    func() error { _, err := st.GetSession(dead, "s"); return err },
			"ListSessions":  func() error { _, err := st.ListSessions(dead, store.SessionFilter{}); return err },
			"CountSessions": func() error { _, err := st.CountSessions(dead, store.SessionFilter{}); return err },
			"DeleteSession": func() error { return st.DeleteSession(dead, "s") },
			"AppendMessages": func() error {
				_, err := st.AppendMessages(dead, "s", []store.Message{msg(t, "user", "x")})
				return err
			},
			"Messages":   func() error { _, err := st.Messages(dead, "s"); return err },
			"CreateTask": func() error { _, err := st.CreateTask(dead, task(t, "x", "working", false)); return err },
			"UpdateTask": func() error { _, err := st.UpdateTask(dead, task(t, "t", "done", true), 1); return err },
			"GetTask":    func() error { _, err := st.GetTask(dead, "t"); return err },
			"ListTasks":  func() error { _, _, err := st.ListTasks(dead, store.TaskFilter{}); return err },
			"PruneTasks": func() error { _, err := st.PruneTasks(dead, 0); return err },
			"FailRunningTasks": func() error {
				_, err := st.FailRunningTasks(dead, func(tk store.Task) (json.RawMessage, string) { return tk.Data, "failed" })
				return err
			},
			"PutPushConfig": func() error { return st.PutPushConfig(dead, pushConfig(t, "t", "x")) },
			"GetPushConfig": func() error { _, err := st.GetPushConfig(dead, "t", "c"); return err },
			"ListPushConfigs": func() error {
				_, err := st.ListPushConfigs(dead, "t")
				return err
			},
			"AllPushConfigs":    func() error { _, err := st.AllPushConfigs(dead); return err },
			"DeletePushConfig":  func() error { return st.DeletePushConfig(dead, "t", "c") },
			"DeletePushConfigs": func() error { _, err := st.DeletePushConfigs(dead, "t"); return err },
			"PutMemory":         func() error { return st.PutMemory(dead, store.Memory{Agent: "a", Key: "k", Value: "v"}) },
			"RecallMemory":      func() error { _, err := st.RecallMemory(dead, "a", "", 0); return err },
			"DeleteMemory":      func() error { return st.DeleteMemory(dead, "a", "k") },
			"AppendAudit":       func() error { _, err := st.AppendAudit(dead, store.AuditRecord{Tool: "x"}); return err },
			"QueryAudit":        func() error { _, err := st.QueryAudit(dead, store.AuditFilter{}); return err },
			"CountAudit":        func() error { _, err := st.CountAudit(dead, store.AuditFilter{}); return err },
			"PutMCPServer":      func() error { return st.PutMCPServer(dead, store.MCPServer{Name: "m", Config: raw(t, 1)}) },
			"ListMCPServers":    func() error { _, err := st.ListMCPServers(dead); return err },
			"DeleteMCPServer":   func() error { return st.DeleteMCPServer(dead, "m") },
			"CreateAPIKey":      func() error { return st.CreateAPIKey(dead, apiKey("k", "a")) },
			"LiveAPIKey":        func() error { _, err := st.LiveAPIKey(dead, apiKey("k", "a").Hash); return err },
			"GetAPIKey":         func() error { _, err := st.GetAPIKey(dead, "k"); return err },
			"ListAPIKeys":       func() error { _, err := st.ListAPIKeys(dead, ""); return err },
			"RevokeAPIKey":      func() error { _, err := st.RevokeAPIKey(dead, "k", "a", time.Time{}); return err },
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, context.Canceled) {
				t.Errorf("%s with a canceled context: got %v, want context.Canceled", name, err)
			}
		}

		// Nothing the canceled calls tried to change changed.
		if _, err := st.GetAgent(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("canceled PutAgent stored an agent (GetAgent: %v)", err)
		}
		for _, id := range []string{"x", "y"} {
			if _, err := st.GetSession(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("canceled CreateSession stored session %s (GetSession: %v)", id, err)
			}
		}
		msgs, err := st.Messages(ctx, "s")
		ok(t, err, "Messages")
		if len(msgs) != 0 {
			t.Errorf("canceled AppendMessages stored %d messages", len(msgs))
		}
		tk, err := st.GetTask(ctx, "t")
		ok(t, err, "GetTask")
		if tk.Version != 1 || tk.State != "working" {
			t.Errorf("canceled task writes changed the task: version %d state %q", tk.Version, tk.State)
		}
		if _, err := st.GetTask(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("canceled CreateTask stored a task (GetTask: %v)", err)
		}
		pcs, err := st.AllPushConfigs(ctx)
		ok(t, err, "AllPushConfigs")
		if ids := pushIDs(pcs); len(ids) != 1 || ids[0] != "t/c" {
			t.Errorf("canceled push config writes changed the configs: %q, want [t/c]", ids)
		}
		for name, n := range map[string]func() (int, error){
			"memories":    func() (int, error) { ms, err := st.RecallMemory(ctx, "a", "", 0); return len(ms), err },
			"audit":       func() (int, error) { rs, err := st.QueryAudit(ctx, store.AuditFilter{}); return len(rs), err },
			"mcp servers": func() (int, error) { ss, err := st.ListMCPServers(ctx); return len(ss), err },
			"api keys":    func() (int, error) { ks, err := st.ListAPIKeys(ctx, ""); return len(ks), err },
		} {
			got, err := n()
			ok(t, err, "count %s", name)
			if got != 0 {
				t.Errorf("canceled writes stored %d %s", got, name)
			}
		}
	},
}
