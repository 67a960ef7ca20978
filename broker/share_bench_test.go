package broker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkShareConsume reads one 2-partition topic of 1 KiB records to
// the end with four members, as a consumer group (two members idle,
// offsets auto-committed) and as a share group (all four reading, every
// record acknowledged and persisted), in one run. records/s counts from
// the first record received to the last (group joins excluded); ns/op
// includes them.
//
//	go test -run '^$' -bench BenchmarkShareConsume -benchtime 3x ./broker/
func BenchmarkShareConsume(b *testing.B) {
	const records, members = 20000, 4
	tb := startTestBroker(b, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	const topic = "bench-share"
	tb.createTopic(topic, 2, nil)
	prod := tb.client(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	fillTopic(b, prod, topic, records, 1024)

	runs := 0 // group names are never reused: b.Run runs the body more than once
	for _, mode := range []string{"consumer-group", "share-group"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(records * 1024)
			var reading time.Duration // from the first record to the last: joins excluded
			for range b.N {
				runs++
				group := fmt.Sprintf("bench-%s-%d", mode, runs)
				opts := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.FetchMaxBytes(64 << 20)}
				if mode == "share-group" {
					setShareGroupConfigs(b, tb, group, map[string]string{"share.auto.offset.reset": "earliest"})
					opts = append(opts, kgo.ShareGroup(group))
				} else {
					opts = append(opts, kgo.ConsumerGroup(group), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
				}
				var got, first atomic.Int64
				var finish sync.Once
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for range members {
					cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(tb.addr())}, opts...)...)
					if err != nil {
						b.Fatal(err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer cl.Close()
						for ctx.Err() == nil {
							fs := cl.PollFetches(ctx)
							if fs.NumRecords() > 0 {
								first.CompareAndSwap(0, time.Now().UnixNano())
							}
							if got.Add(int64(fs.NumRecords())) >= records {
								finish.Do(func() {
									reading += time.Duration(time.Now().UnixNano() - first.Load())
									cancel()
								})
							}
						}
						_ = cl.FlushAcks(context.Background())
					}()
				}
				wg.Wait()
				cancel()
			}
			b.ReportMetric(float64(records*b.N)/reading.Seconds(), "records/s")
		})
	}
}
