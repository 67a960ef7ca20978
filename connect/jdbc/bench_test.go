package jdbc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
)

// benchRows is the size of the source benchmark's table.
const benchRows = 1_000_000

// BenchmarkSourcePostgres copies a 1M-row PostgreSQL table into records
// through Poll (producing them to Kafka is the runtime's part and not
// measured here) and reports rows/s.
func BenchmarkSourcePostgres(b *testing.B) {
	dsn, db := pgDatabase(b)
	start := time.Now()
	mustExec(b, db, `CREATE TABLE big (id bigserial PRIMARY KEY, name text NOT NULL, amount numeric(12,2),
		flag boolean, created_at timestamptz NOT NULL)`)
	mustExec(b, db, fmt.Sprintf(`INSERT INTO big (name, amount, flag, created_at)
		SELECT 'customer-' || g, g * 0.01, g %% 3 = 0, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second'
		FROM generate_series(1, %d) g`, benchRows))
	// Timestamp modes need an index on (timestamp, id) to be fast, as
	// in any real deployment.
	mustExec(b, db, `CREATE INDEX big_created_at_id ON big (created_at, id)`)
	mustExec(b, db, `VACUUM ANALYZE big`)
	b.Logf("seeded %d rows in %v", benchRows, time.Since(start).Round(time.Millisecond))
	for _, bc := range []struct {
		name string
		cfg  connect.Config
	}{
		{"incrementing/batch=100", connect.Config{"mode": "incrementing", "incrementing.column.name": "id", "batch.max.rows": "100"}},
		{"incrementing/batch=10000", connect.Config{"mode": "incrementing", "incrementing.column.name": "id", "batch.max.rows": "10000"}},
		{"bulk/batch=10000", connect.Config{"mode": "bulk", "batch.max.rows": "10000"}},
		{"timestamp+incrementing/batch=10000", connect.Config{"mode": "timestamp+incrementing", "incrementing.column.name": "id",
			"timestamp.column.name": "created_at", "batch.max.rows": "10000"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := copyConfig(bc.cfg)
			cfg["connection.url"], cfg["table.whitelist"], cfg["poll.interval.ms"] = dsn, "big", "60000"
			var elapsed time.Duration
			for range b.N {
				task := &SourceTask{}
				if err := task.Start(context.Background(), cfg, newOffsetStore()); err != nil {
					b.Fatal(err)
				}
				began := time.Now()
				n := 0
				for n < benchRows {
					recs, err := task.Poll(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					n += len(recs)
				}
				elapsed += time.Since(began)
				task.Stop()
				if n != benchRows {
					b.Fatalf("%d records, want %d", n, benchRows)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/elapsed.Seconds(), "rows/s")
		})
	}
}

// BenchmarkSinkUpsert upserts batches of records (half new keys, half
// existing ones) into PostgreSQL through Put and Flush and reports rows/s.
func BenchmarkSinkUpsert(b *testing.B) {
	dsn, _ := pgDatabase(b)
	const perFlush = 100_000
	task := startSink(b, connect.Config{"connection.url": dsn, "topics": "orders", "insert.mode": "upsert",
		"pk.mode": "record_key", "auto.create": "true"})
	records := func(round int) []connect.SinkRecord {
		out := make([]connect.SinkRecord, perFlush)
		for i := range out {
			id := int64(round*perFlush/2 + i) // half the keys were written by the previous round
			out[i] = person("orders", int64(round*perFlush+i), id, fmt.Sprintf("customer-%d-%d", id, round), id%100000)
		}
		return out
	}
	ctx := context.Background()
	var elapsed time.Duration
	for i := range b.N {
		batch := records(i)
		began := time.Now()
		if err := task.Put(ctx, batch); err != nil {
			b.Fatal(err)
		}
		if err := task.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(began)
	}
	b.ReportMetric(float64(perFlush)*float64(b.N)/elapsed.Seconds(), "rows/s")
}
