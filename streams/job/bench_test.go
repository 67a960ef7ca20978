package job

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/streams"
	"github.com/strata-streaming/strata/streams/internal/benchrun"
)

const filterMapJob = `name: bench
input: {topics: [bench-in], format: json}
pipeline:
  - filter: value.amount > 100
  - map: '{"id": value.id, "amount": value.amount, "customer": upper(value.customer)}'
output: {topic: bench-out, format: json}
guarantee: %s
`

// BenchmarkFilterMapJob runs the filter+map job over records of ~200 bytes
// of JSON pre-loaded into a 6-partition topic of a real broker, to
// completion (every input record processed, the output flushed and
// committed), at-least-once and exactly-once side by side. records/s counts
// input records.
//
//	go test -run '^$' -bench BenchmarkFilterMapJob -benchtime 3x ./streams/job
func BenchmarkFilterMapJob(b *testing.B) {
	// No initial rebalance delay: each run joins a fresh group, and the
	// 3s default delay would be measured as processing time.
	broker := brokertest.Start(b, "--set", "group.initial.rebalance.delay.ms=0")
	createTopics(b, broker.Addr, 6, "bench-in", "bench-out")
	const n = 500_000
	produceAll(b, broker.Addr, "bench-in", n, orderJSON)
	if l := len(orderJSON(123456)); l < 180 || l > 220 {
		b.Fatalf("record size %d, want about 200 bytes", l)
	}
	for _, g := range []string{"at_least_once", "exactly_once"} {
		b.Run(g, func(b *testing.B) {
			j, err := Parse(fmt.Appendf(nil, filterMapJob, g))
			if err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			for i := 0; i < b.N; i++ {
				app, err := j.NewApp(streams.Brokers(broker.Addr),
					streams.ApplicationID(fmt.Sprintf("bench-%s-%d-%d", g, b.N, i)),
					streams.ClientOpts(kgo.FetchMaxPartitionBytes(4<<20)))
				if err != nil {
					b.Fatal(err)
				}
				total += benchrun.ToCompletion(b, app, n)
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
		})
	}
}

// BenchmarkFilterMapInMemory is the same job's operator chain without the
// broker (decode, filter, map, encode), through the test driver.
func BenchmarkFilterMapInMemory(b *testing.B) {
	j, err := Parse(fmt.Appendf(nil, filterMapJob, "at_least_once"))
	if err != nil {
		b.Fatal(err)
	}
	d, err := streams.NewTestDriver(j.Topology(), j.Options()...)
	if err != nil {
		b.Fatal(err)
	}
	recs := make([][]byte, 1024)
	for i := range recs {
		recs[i] = orderJSON(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := d.Pipe(&kgo.Record{Topic: "bench-in", Value: recs[i%len(recs)]}); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 0 {
			d.Output("bench-out")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAggregateInMemory is the orders-per-customer-per-minute
// job (group_by, tumbling window, count and sum) through the test driver:
// expressions, the repartition (looped back), the JSON state's decode and
// encode and an in-memory pebble store, committed after every record.
func BenchmarkAggregateInMemory(b *testing.B) {
	j, err := Parse([]byte(`name: bench
input: {topics: [bench-in]}
pipeline:
  - group_by: value.customer
  - window: {tumbling: 1m, grace: 10s}
  - aggregate: {orders: count, total: {sum: value.amount}}
output: {topic: bench-out}
`))
	if err != nil {
		b.Fatal(err)
	}
	d, err := streams.NewTestDriver(j.Topology(), j.Options()...)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	recs := make([][]byte, 1024)
	for i := range recs {
		recs[i] = orderJSON(i)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := &kgo.Record{Topic: "bench-in", Value: recs[i%len(recs)], Timestamp: start.Add(time.Duration(i) * time.Millisecond)}
		if err := d.Pipe(r); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 0 {
			d.Output("bench-out")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
