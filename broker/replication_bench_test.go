package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkReplicatedProduce compares acks=all produce to a three-node
// cluster (RF=3, min.insync.replicas=2) with acks=1 produce to a single
// node, side by side in one run (the target: at least 0.4). Each
// iteration produces 1 KiB records with franz-go to a 3-partition topic.
//
//	go test -run '^$' -bench ReplicatedProduce -benchtime 100000x ./broker/
func BenchmarkReplicatedProduce(b *testing.B) {
	b.Run("acks=1/single-node", func(b *testing.B) {
		tb := startTestBroker(b)
		benchProduce(b, []string{tb.addr()}, kgo.LeaderAck(), 1)
	})
	b.Run("acks=all/rf=3", func(b *testing.B) {
		c := startTestCluster(b, 3)
		benchProduce(b, c.bootstrap(), kgo.AllISRAcks(), 3)
	})
}

func benchProduce(b *testing.B, seeds []string, acks kgo.Acks, rf int16) {
	ctx := context.Background()
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.RequiredAcks(acks), kgo.DefaultProduceTopic("bench"), kgo.ProducerLinger(time.Millisecond)}
	if acks != kgo.AllISRAcks() {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	configs := map[string]*string{}
	if rf > 1 {
		configs["min.insync.replicas"] = ptr("2")
	}
	if res, err := kadm.NewClient(cl).CreateTopic(ctx, 3, rf, configs, "bench"); err != nil || res.Err != nil {
		b.Fatalf("create: %v %v", err, res.Err)
	}
	value := make([]byte, 1024)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "%d", i), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}
