package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/broker/share"
)

// TestShareFetchStrictRecordLimit: with ShareMaxRecordsStrict (KIP-1206
// record-limit mode) a fetch acquires at most MaxRecords records, splitting
// a batch; the rest goes to the next fetch, another member's possibly.
func TestShareFetchStrictRecordLimit(t *testing.T) {
	tb := startShareBroker(t)
	const topic, group = "queue-strict", "workers-strict"
	tb.createTopic(topic, 1, nil)
	setShareGroupConfigs(t, tb, group, map[string]string{"share.auto.offset.reset": "earliest"})
	ctx := testContext(t)
	producer := tb.client(kgo.ProducerLinger(0))
	var batch []*kgo.Record
	for i := 0; i < 100; i++ {
		batch = append(batch, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))})
	}
	if err := producer.ProduceSync(ctx, batch...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var ackErrs ackErrors
	cl := shareClient(tb, group, topic, &ackErrs, kgo.ShareMaxRecords(10), kgo.ShareMaxRecordsStrict())
	fs := cl.PollFetches(ctx)
	if n := fs.NumRecords(); n == 0 || n > 10 {
		t.Fatalf("first strict poll: %d records, want 1-10", n)
	}
	// This poll's records and at most one prefetch's are acquired; the
	// rest of the batch is still available.
	ts := tb.srv.topics.get(topic)
	c := tb.srv.shares
	c.mu.Lock()
	sp := c.mu.partitions[sharePartitionKey{group: group, topic: ts.id, partition: 0}]
	acquired := 0
	for o := int64(0); o < 100; o++ {
		if st, _ := sp.State(o); st == share.Acquired {
			acquired++
		}
	}
	c.mu.Unlock()
	if acquired == 0 || acquired > 20 {
		t.Fatalf("%d records acquired, want 1-20 (two strict fetches of 10)", acquired)
	}
}
