package broker

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkProduceIceberg produces 1 KiB records to a plain topic and to an
// iceberg.enabled one (commits every 100 ms, to a file store) on the same
// broker, in three rounds of three cases, side by side: plain, iceberg
// (the writer paced by the default iceberg.writer.cpu.min.fraction) and
// iceberg-unpaced (the fraction set to 1 as a dynamic broker config: the
// writer as it was before it had a budget). After an iceberg case the
// timer stops until the table holds every record: catchup-s is that wait,
// the time the writer needs to catch up once the producer is done, and
// paused-s the time it paused during the case. Run with -benchtime of a
// few hundred thousand records so commits happen during the iceberg
// cases.
func BenchmarkProduceIceberg(b *testing.B) {
	storeDir := b.TempDir()
	tb := startTestBroker(b, func(c *Config) {
		c.ObjectStore = "file://" + storeDir
		c.LogRetentionCheckIntervalMs = 1000
	})
	// Retention keeps the logs small across the rounds (not below what the
	// writer has yet to read: about a case's records).
	tb.createTopicWithPartitions("bench-plain", 2, map[string]string{"retention.bytes": strconv.Itoa(64 << 20), "segment.bytes": strconv.Itoa(32 << 20)})
	// No compaction: it would run in whichever case its files pile up in
	// (it rewrites every commit's 32 MiB files of the hour), and blur what
	// each case costs.
	tb.createTopicWithPartitions("bench-iceberg", 2, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "100",
		icebergCompactionMinConfig: "0", "retention.bytes": strconv.Itoa(1 << 30), "segment.bytes": strconv.Itoa(32 << 20)})
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('A' + rand.IntN(26))
	}
	adm := kadm.NewClient(tb.client())
	setFraction := func(b *testing.B, v string) {
		ctx := context.Background()
		op := kadm.AlterConfig{Op: kadm.DeleteConfig, Name: icebergWriterCPUMinFractionConfig}
		if v != "" {
			op = kadm.AlterConfig{Op: kadm.SetConfig, Name: icebergWriterCPUMinFractionConfig, Value: &v}
		}
		if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{op}, tb.srv.cfg.NodeID); err != nil {
			b.Fatal(err)
		}
		want := icebergDefaultWriterCPUMinFraction
		if v != "" {
			want, _ = strconv.ParseFloat(v, 64)
		}
		for tb.srv.conf().IcebergWriterCPUMinFraction != want {
			time.Sleep(10 * time.Millisecond)
		}
	}
	cases := []struct{ name, topic, fraction string }{
		{"plain", "bench-plain", ""},
		{"iceberg", "bench-iceberg", ""},
		{"iceberg-unpaced", "bench-iceberg", "1"},
	}
	for range 3 {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				setFraction(b, c.fraction)
				cl := tb.client(kgo.DefaultProduceTopic(c.topic), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
					kgo.ProducerLinger(5e6), kgo.ProducerBatchMaxBytes(1<<20))
				ctx := context.Background()
				if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
					b.Fatal(err)
				}
				pausedBefore := icebergPausedSeconds(tb, c.topic)
				b.SetBytes(int64(len(value)))
				b.ResetTimer()
				var wg sync.WaitGroup
				wg.Add(b.N)
				for range b.N {
					cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
						if err != nil {
							b.Error(err)
						}
						wg.Done()
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				if c.topic != "bench-iceberg" {
					return
				}
				start := time.Now()
				waitIcebergCaughtUp(b, tb, c.topic)
				b.ReportMetric(time.Since(start).Seconds(), "catchup-s")
				b.ReportMetric(icebergPausedSeconds(tb, c.topic)-pausedBefore, "paused-s")
			})
		}
	}
	setFraction(b, "")
}

// icebergPausedSeconds is the time the writer paused in topic's commits.
func icebergPausedSeconds(tb *testBroker, topic string) float64 {
	for _, st := range tb.srv.iceberg.statuses() {
		if st.Topic == topic {
			return st.WriterPausedSeconds
		}
	}
	return 0
}

// waitIcebergCaughtUp waits until topic's table holds every record of its
// partitions' logs.
func waitIcebergCaughtUp(b *testing.B, tb *testBroker, topic string) {
	b.Helper()
	t := tb.srv.topics.get(topic)
	parts, _, _ := tb.srv.topics.snapshot(t)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		behind := false
		next := map[int32]int64{}
		for _, st := range tb.srv.iceberg.statuses() {
			if st.Topic == topic {
				for _, ps := range st.Partitions {
					next[ps.Partition] = ps.TableNextOffset
				}
			}
		}
		for _, p := range parts {
			if next[p.index] < p.Log().LogEndOffset() {
				behind = true
			}
		}
		if !behind {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the table of %s did not catch up in 10 minutes", topic)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
