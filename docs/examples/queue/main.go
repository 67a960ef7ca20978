// Command queue is the README's "Queues" example: five share-group
// consumers (KIP-932) work through one 2-partition topic, more consumers
// than partitions, each record acknowledged by one of them.
//
//	strata server &            # 127.0.0.1:9092
//	go run ./docs/examples/queue    # or -brokers host:port
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	topic     = "orders-queue"
	group     = "order-workers"
	records   = 1000
	consumers = 5
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "bootstrap broker")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, *brokers); err != nil {
		fmt.Fprintln(os.Stderr, "queue:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, broker string) error {
	admin, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		return err
	}
	// A share group starts at the log end unless told otherwise.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	if _, err := req.RequestWith(ctx, admin); err != nil {
		return err
	}
	for i := 0; i < records; i++ {
		admin.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: []byte(fmt.Sprintf("order-%d", i))}, nil)
	}
	if err := admin.Flush(ctx); err != nil {
		return err
	}

	// Polls end once every record is acknowledged.
	pollCtx, allDone := context.WithCancel(ctx)
	defer allDone()
	counts := make([]atomic.Int64, consumers)
	var wg sync.WaitGroup
	for i := range consumers {
		cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
			kgo.ShareMaxRecords(20), kgo.ShareMaxRecordsStrict())
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for pollCtx.Err() == nil {
				cl.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) {
					time.Sleep(5 * time.Millisecond) // "process" the order
					r.Ack(kgo.AckAccept)
					counts[i].Add(1)
				})
				_ = cl.FlushAcks(ctx)
				if sumOf(counts) >= records {
					allDone()
				}
			}
		}()
	}
	wg.Wait()
	for i := range counts {
		fmt.Printf("consumer %d processed %d records\n", i, counts[i].Load())
	}
	fmt.Printf("total %d of %d\n", sumOf(counts), records)
	return ctx.Err()
}

func sumOf(counts []atomic.Int64) (n int64) {
	for i := range counts {
		n += counts[i].Load()
	}
	return n
}
