package storemetrics

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/store/storetest"
)

// series is one recorded label combination: its sample count.
type series map[[3]string]uint64 // {db.system.name, db.operation.name, error.type}

func collect(t *testing.T, r *sdkmetric.ManualReader) series {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := series{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "db.client.operation.duration" {
				t.Errorf("unexpected metric %s", m.Name)
				continue
			}
			if m.Unit != "s" {
				t.Errorf("unit %q", m.Unit)
			}
			h := m.Data.(metricdata.Histogram[float64])
			for _, dp := range h.DataPoints {
				get := func(k string) string { v, _ := dp.Attributes.Value(attribute.Key(k)); return v.AsString() }
				out[[3]string{get("db.system.name"), get("db.operation.name"), get("error.type")}] += dp.Count
			}
		}
	}
	return out
}

// contract runs the store contract suite through the decorator, then
// checks that every method of store.Store (and the audit batch) was
// recorded, under backend, with the optional interfaces both backends
// implement (the audit batch, store.SessionTaskWriter), and that failures
// are counted by error type.
func contract(t *testing.T, backend string, open func(t *testing.T) store.Store) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Run("contract", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			return Wrap(open(t), backend, mp)
		})
	})
	// The audit writer's batch path, which the contract (on store.Store)
	// does not reach, on a store of its own.
	t.Run("batch", func(t *testing.T) {
		raw := open(t)
		defer raw.Close()
		b, ok := Wrap(raw, backend, mp).(batchAppender)
		if !ok {
			t.Fatalf("the wrapped %s store lost AppendAuditBatch", backend)
		}
		if err := b.AppendAuditBatch(t.Context(), []store.AuditRecord{{Agent: "a", Tool: "t", Decision: "allow", Outcome: "ok"}}); err != nil {
			t.Fatal(err)
		}
	})
	got := collect(t, reader)
	ops := map[string]uint64{}
	for k, n := range got {
		if k[0] != backend {
			t.Errorf("series %v: db.system.name is not %q", k, backend)
		}
		ops[k[1]] += n
	}
	st := reflect.TypeFor[store.Store]()
	want := []string{"AppendAuditBatch", "AppendMessagesCreateTask", "CreateSessionWithTask"}
	for i := range st.NumMethod() {
		if name := st.Method(i).Name; name != "Close" {
			want = append(want, name)
		}
	}
	for _, name := range want {
		if ops[name] == 0 {
			t.Errorf("%s was never recorded", name)
		}
	}
	if len(ops) != len(want) {
		t.Errorf("%d operations recorded, want %d: %v", len(ops), len(want), ops)
	}
	// The suite asks for what is not there, creates what exists, updates
	// stale versions, and calls every method with a cancelled context.
	for _, c := range []struct{ op, errType string }{
		{"GetSession", "not_found"},
		{"CreateSession", "exists"},
		{"UpdateTask", "conflict"},
		{"QueryAudit", "cancelled"},
		{"GetSession", ""},
	} {
		if got[[3]string{backend, c.op, c.errType}] == 0 {
			t.Errorf("no %s with error.type %q", c.op, c.errType)
		}
	}
}

func TestContractSQLite(t *testing.T) {
	contract(t, SQLite, func(t *testing.T) store.Store {
		db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "agentd.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

func TestContractPostgreSQL(t *testing.T) {
	db := pgtest.Database(t, os.LookupEnv)
	contract(t, PostgreSQL, func(t *testing.T) store.Store {
		st, err := postgres.Open(t.Context(), pgtest.Schema(t, db), nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// TestWrapOff: without a meter provider the store is returned as is, so
// metrics off cost nothing.
func TestWrapOff(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "agentd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := Wrap(db, SQLite, nil); got != store.Store(db) {
		t.Fatalf("Wrap without metrics = %T, want the store itself", got)
	}
}

// BenchmarkGetSession reads one session from SQLite, bare and through
// the decorator with metrics on, to show what the decorator costs.
func BenchmarkGetSession(b *testing.B) {
	db, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "agentd.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateSession(b.Context(), store.Session{ID: "s1", Agent: "a"}); err != nil {
		b.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	for _, c := range []struct {
		name string
		st   store.Store
	}{
		{"bare", db},
		{"metered", Wrap(db, SQLite, mp)},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.st.GetSession(ctx, "s1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecord is the decorator's own cost: a store whose operation
// does nothing.
func BenchmarkRecord(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	m := newMetered(nopStore{}, SQLite, mp)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = m.GetSession(ctx, "s1")
	}
}

// nopStore answers GetSession at once.
type nopStore struct{ store.Store }

func (nopStore) GetSession(context.Context, string) (store.Session, error) {
	return store.Session{}, nil
}
