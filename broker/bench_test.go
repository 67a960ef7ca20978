package broker

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Broker-level benchmarks over loopback with a franz-go client: the whole
// produce path (frame, decode, validate, append) and fetch path (read,
// encode, sendfile). Compare runs with benchstat:
//
//	go test -run '^$' -bench 'BenchmarkBroker' -count 6 ./broker/ | tee new.txt

func BenchmarkBrokerProduce1KiB(b *testing.B) {
	tb := startTestBroker(b)
	cl := tb.client(kgo.DefaultProduceTopic("bench"), kgo.AllowAutoTopicCreation(),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(1<<20))
	ctx := context.Background()
	value := bytes.Repeat([]byte("x"), 1024)
	// Create the topic before timing.
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	var wg sync.WaitGroup
	wg.Add(b.N)
	for i := 0; i < b.N; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
}

func BenchmarkBrokerFetch1KiB(b *testing.B) {
	tb := startTestBroker(b)
	ctx := context.Background()
	prod := tb.client(kgo.DefaultProduceTopic("bench"), kgo.AllowAutoTopicCreation(),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1<<20))
	value := bytes.Repeat([]byte("y"), 1024)
	var wg sync.WaitGroup
	wg.Add(b.N)
	for i := 0; i < b.N; i++ {
		prod.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	cons := tb.client(kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20))
	got := 0
	for got < b.N {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		got += fs.NumRecords()
	}
}
