package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// BenchmarkAppendMessages has the shape of the SQLite backend's benchmark
// of the same name, so that the two compare directly.
func BenchmarkAppendMessages(b *testing.B) {
	dbURL := pgtest.Database(b, os.LookupEnv)
	for _, batch := range []int{1, 10} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			db := open(b, pgtest.Schema(b, dbURL))
			ctx := b.Context()
			if err := db.CreateSession(ctx, store.Session{ID: "s", Agent: "a"}); err != nil {
				b.Fatal(err)
			}
			msgs := make([]store.Message, batch)
			for i := range msgs {
				msgs[i] = store.Message{Role: "assistant", Content: json.RawMessage(`{"text":"a typical reply of a few dozen bytes, give or take"}`)}
			}
			for b.Loop() {
				if _, err := db.AppendMessages(ctx, "s", msgs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
	// 16 writers per GOMAXPROCS over 8 sessions, as in the SQLite benchmark.
	b.Run("parallel", func(b *testing.B) {
		db := open(b, pgtest.Schema(b, dbURL))
		ctx := b.Context()
		const sessions = 8
		for i := range sessions {
			if err := db.CreateSession(ctx, store.Session{ID: fmt.Sprint(i), Agent: "a"}); err != nil {
				b.Fatal(err)
			}
		}
		var mu sync.Mutex
		next := 0
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			mu.Lock()
			sid := fmt.Sprint(next % sessions)
			next++
			mu.Unlock()
			msgs := []store.Message{{Role: "user", Content: json.RawMessage(`{"text":"hello"}`)}}
			for pb.Next() {
				if _, err := db.AppendMessages(context.Background(), sid, msgs); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
}

// BenchmarkAudit compares one AppendAudit per record with the batch the
// audit writer hands over.
func BenchmarkAudit(b *testing.B) {
	dbURL := pgtest.Database(b, os.LookupEnv)
	rec := store.AuditRecord{Agent: "a", SessionID: "s", Tool: "file_read", Decision: "allow", Outcome: "ok"}
	b.Run("one", func(b *testing.B) {
		db := open(b, pgtest.Schema(b, dbURL))
		for b.Loop() {
			if _, err := db.AppendAudit(b.Context(), rec); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("batch=512", func(b *testing.B) {
		db := open(b, pgtest.Schema(b, dbURL))
		recs := make([]store.AuditRecord, 512)
		for i := range recs {
			recs[i] = rec
		}
		for b.Loop() {
			if err := db.AppendAuditBatch(b.Context(), recs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
	})
}
