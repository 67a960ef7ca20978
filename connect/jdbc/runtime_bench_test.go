package jdbc

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Benchmarks through the real runtime: an in-process worker, a real
// broker (a `strata server` process) and PostgreSQL. Run with
// -benchtime 1x: each iteration copies the whole data set.

// rtEndOffsets sums a topic's high watermarks.
func rtEndOffsets(b *testing.B, adm *kadm.Client, topic string) int64 {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			b.Fatalf("end offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		n += o.Offset
	})
	return n
}

// BenchmarkRuntimeSourcePostgres: jdbc-source copies a 1M-row PostgreSQL
// table into a 3-partition topic through the runtime (JSON with schemas,
// at-least-once); timed from the connector's creation until the topic's
// high watermarks add up to 1M records.
func BenchmarkRuntimeSourcePostgres(b *testing.B) {
	dsn, db := pgDatabase(b)
	began := time.Now()
	mustExec(b, db, `CREATE TABLE big (id bigserial PRIMARY KEY, name text NOT NULL, amount numeric(12,2),
		flag boolean, created_at timestamptz NOT NULL)`)
	mustExec(b, db, fmt.Sprintf(`INSERT INTO big (name, amount, flag, created_at)
		SELECT 'customer-' || g, g * 0.01, g %% 3 = 0, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second'
		FROM generate_series(1, %d) g`, benchRows))
	mustExec(b, db, `VACUUM ANALYZE big`)
	b.Logf("seeded %d rows in %v", benchRows, time.Since(began).Round(time.Millisecond))
	broker := rtStartBroker(b)
	_, base := rtStartWorker(b, rtWorkerProps(broker.Addr, "rt-bench-source", "offset.flush.interval.ms", "1000"))
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, bc := range []struct {
		name string
		cfg  map[string]string
	}{
		{"incrementing", map[string]string{"mode": modeIncrementing, "incrementing.column.name": "id"}},
		{"bulk", map[string]string{"mode": modeBulk}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var elapsed time.Duration
			for i := range b.N {
				prefix := fmt.Sprintf("bench-%s-%d-", bc.name, i)
				topic := prefix + "big"
				rtCreateTopic(b, broker.Addr, topic, 3)
				cfg := map[string]string{"connector.class": "jdbc-source", "connection.url": dsn,
					"table.whitelist": "big", "topic.prefix": prefix, "batch.max.rows": "10000",
					"poll.interval.ms": "3600000"}
				for k, v := range bc.cfg {
					cfg[k] = v
				}
				name := prefix + "src"
				start := time.Now()
				rtCreateConnector(b, base, name, cfg)
				var n int64
				for n < benchRows {
					if time.Since(start) > 5*time.Minute {
						b.Fatalf("%d of %d records after 5 minutes", n, benchRows)
					}
					time.Sleep(20 * time.Millisecond) // polling interval of the watermark
					n = rtEndOffsets(b, adm, topic)
				}
				elapsed += time.Since(start)
				if n != benchRows {
					b.Fatalf("%d records in %s, want %d", n, topic, benchRows)
				}
				// Stop the copy (bulk would start over after poll.interval.ms).
				if code, data := rtREST(b, "DELETE", base+"/connectors/"+name, nil); code != 204 {
					b.Fatalf("DELETE %s: %d %s", name, code, data)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/elapsed.Seconds(), "rows/s")
		})
	}
}

// rtCommitted sums a consumer group's committed offsets.
func rtCommitted(b *testing.B, adm *kadm.Client, group string) int64 {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offsets, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			b.Fatalf("committed offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		n += o.At
	})
	return n
}

// sinkBenchRecords is the sink benchmark's record count: half update rows
// already in the table, half insert new ones.
const sinkBenchRecords = 200_000

// rtSinkRecord is a JSON-with-schema record (key and value) for the
// jdbc-sink benchmark.
func rtSinkRecord(topic string, id int64, name string) *kgo.Record {
	key := `{"schema":{"type":"struct","fields":[{"field":"id","type":"int64","optional":false}],"optional":false},` +
		`"payload":{"id":` + strconv.FormatInt(id, 10) + `}}`
	value := `{"schema":{"type":"struct","fields":[{"field":"id","type":"int64","optional":false},` +
		`{"field":"name","type":"string","optional":false},{"field":"amount","type":"int64","optional":false}],"optional":false},` +
		`"payload":{"id":` + strconv.FormatInt(id, 10) + `,"name":"` + name + `","amount":` + strconv.FormatInt(id%100000, 10) + `}}`
	return &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value)}
}

// BenchmarkRuntimeSinkUpsertPostgres: 200k JSON-with-schema records are
// loaded into a topic (100k update rows already in the table, 100k are new
// keys, interleaved); jdbc-sink (upsert, record_key) is created and timed
// until its consumer group committed every record (the runtime commits
// after the database did); then the table must hold the expected content
// (row count, every row's name and amount).
func BenchmarkRuntimeSinkUpsertPostgres(b *testing.B) {
	dsn, db := pgDatabase(b)
	broker := rtStartBroker(b)
	_, base := rtStartWorker(b, rtWorkerProps(broker.Addr, "rt-bench-sink"))
	producer, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(50_000))
	if err != nil {
		b.Fatal(err)
	}
	defer producer.Close()
	adm := kadm.NewClient(producer)
	const existing = sinkBenchRecords / 2
	var elapsed time.Duration
	for i := range b.N {
		topic := fmt.Sprintf("sinkbench%d", i)
		table := topic
		mustExec(b, db, `CREATE TABLE `+table+` (id bigint PRIMARY KEY, name text NOT NULL, amount bigint NOT NULL)`)
		mustExec(b, db, fmt.Sprintf(`INSERT INTO %s SELECT g, 'customer-' || g || '-v1', g %% 100000
			FROM generate_series(1, %d) g`, table, existing))
		mustExec(b, db, `VACUUM ANALYZE `+table)
		rtCreateTopic(b, broker.Addr, topic, 3)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		batch := make([]*kgo.Record, 0, 20_000)
		for k := int64(1); k <= existing; k++ {
			for _, id := range []int64{k, existing + k} { // an update, then a new key
				batch = append(batch, rtSinkRecord(topic, id, "customer-"+strconv.FormatInt(id, 10)+"-v2"))
			}
			if len(batch) == cap(batch) || k == existing {
				if err := producer.ProduceSync(ctx, batch...).FirstErr(); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		cancel()
		check := func() (bool, string) {
			var rows, right int
			if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE name = 'customer-' || id || '-v2' AND amount = id % 100000)
				FROM `+table).Scan(&rows, &right); err != nil {
				b.Fatal(err)
			}
			return rows == sinkBenchRecords && right == sinkBenchRecords, fmt.Sprintf("%d rows, %d up to date", rows, right)
		}
		// The runtime commits the sink's offsets only after Flush returned,
		// that is after the database committed the rows: poll the group's
		// offsets (cheap) and check the table once at the end.
		name := topic + "-sink"
		start := time.Now()
		rtCreateConnector(b, base, name, map[string]string{"connector.class": "jdbc-sink",
			"connection.url": dsn, "topics": topic, "insert.mode": "upsert", "pk.mode": "record_key",
			"table.name.format": "${topic}"})
		for {
			if n := rtCommitted(b, adm, "connect-"+name); n == sinkBenchRecords {
				break
			} else if time.Since(start) > 5*time.Minute {
				b.Fatalf("%d of %d records committed after 5 minutes", n, sinkBenchRecords)
			}
			time.Sleep(20 * time.Millisecond) // polling interval of the group's offsets
		}
		elapsed += time.Since(start)
		if ok, state := check(); !ok {
			b.Fatalf("target table: %s, want %d rows up to date", state, sinkBenchRecords)
		}
	}
	b.ReportMetric(float64(sinkBenchRecords)*float64(b.N)/elapsed.Seconds(), "rows/s")
}
