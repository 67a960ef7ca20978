package streams_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/streams"
	"github.com/strata-streaming/strata/streams/internal/benchrun"
)

type clickEvent struct {
	User     string  `json:"user"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Region   string  `json:"region"`
	Note     string  `json:"note"`
}

// clickRecord is record i of the windowed-count benchmark: about 200 bytes
// of JSON keyed by one of 100k users, 1 ms apart with up to 5 s of disorder
// (within the 10 s grace).
func clickRecord(i int) *kgo.Record {
	user := fmt.Sprintf("user-%06d", i*7919%100_000)
	v := fmt.Appendf(nil, `{"user":%q,"amount":%d.%02d,"currency":"EUR","region":"eu-west-1","note":"click %08d on the landing page, campaign spring-2026, variant b, mobile web, referrer newsletter"}`,
		user, i%1000, i%100, i)
	ts := windowBase.Add(time.Duration(i)*time.Millisecond - time.Duration(i*31337%5000)*time.Millisecond)
	return &kgo.Record{Topic: "clicks", Key: []byte(user), Value: v, Timestamp: ts}
}

// BenchmarkWindowedCount runs a one-minute tumbling windowed count (10 s
// grace) over 1M pre-loaded ~200-byte JSON records with 100k keys (6
// partitions, a real broker on the same machine) to completion, writing
// every update and changelog record, at-least-once and exactly-once side
// by side. Run with -benchtime 1x.
func BenchmarkWindowedCount(b *testing.B) {
	broker := brokertest.Start(b, "--set", "group.initial.rebalance.delay.ms=0")
	createTopic(b, broker.Addr, "clicks", 6)
	const n = 1_000_000
	if l := len(clickRecord(123456).Value); l < 180 || l > 220 {
		b.Fatalf("record size %d, want about 200 bytes", l)
	}
	if err := produceEach(broker.Addr, 0, n, clickRecord); err != nil {
		b.Fatal(err)
	}
	// Read the input once, so neither guarantee pays for a cold read.
	warm, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr), kgo.ConsumeTopics("clicks"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxPartitionBytes(4<<20))
	if err != nil {
		b.Fatal(err)
	}
	for read := 0; read < n; {
		fetches := warm.PollFetches(context.Background())
		if err := fetches.Err0(); err != nil {
			b.Fatal(err)
		}
		read += fetches.NumRecords()
	}
	warm.Close()
	for _, g := range []streams.Guarantee{streams.AtLeastOnce, streams.ExactlyOnceV2} {
		b.Run(g.String(), func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				top := streams.NewTopology()
				clicks := streams.From(top, streams.String, streams.JSON[clickEvent](), []string{"clicks"})
				streams.WindowedBy(clicks.GroupByKey(streams.String, streams.JSON[clickEvent]()),
					streams.TumblingWindows(time.Minute).Grace(10*time.Second)).
					Count(streams.Named("clicks-per-minute")).ToStream().
					To(fmt.Sprintf("clicks-per-minute-%s-%d", g, i), streams.WindowedSerde(streams.String), streams.Int64)
				app, err := streams.NewApp(top, streams.Brokers(broker.Addr),
					streams.ApplicationID(fmt.Sprintf("bench-wc-%s-%d-%d", g, b.N, i)), streams.WithGuarantee(g),
					streams.StateDir(b.TempDir()), streams.ClientOpts(kgo.FetchMaxPartitionBytes(4<<20)))
				if err != nil {
					b.Fatal(err)
				}
				total += benchrun.ToCompletion(b, app, n)
				if s := app.Stats(); s.LateDropped != 0 {
					b.Fatalf("%d records late, want none", s.LateDropped)
				}
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
		})
	}
}
