package broker

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkProduceIceberg produces 1 KiB records to a plain topic and to an
// iceberg.enabled one (commits every 100 ms, to a file store) on the same
// broker, side by side in one run: what the Iceberg writer costs produce on
// the same node. Run with -benchtime of a few hundred thousand records so
// commits happen during the iceberg case.
func BenchmarkProduceIceberg(b *testing.B) {
	storeDir := b.TempDir()
	tb := startTestBroker(b, func(c *Config) { c.ObjectStore = "file://" + storeDir })
	tb.createTopicWithPartitions("bench-plain", 2, nil)
	tb.createTopicWithPartitions("bench-iceberg", 2, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "100"})
	value := make([]byte, 1024)
	for i := range value {
		value[i] = byte('A' + rand.IntN(26))
	}
	for _, topic := range []string{"bench-plain", "bench-iceberg"} {
		b.Run(topic, func(b *testing.B) {
			cl := tb.client(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
				kgo.ProducerLinger(5e6), kgo.ProducerBatchMaxBytes(1<<20))
			ctx := context.Background()
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
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
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
