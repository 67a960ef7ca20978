package broker

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCompactedTopic: a cleanup.policy=compact topic refuses keyless
// records with INVALID_RECORD, and the housekeeping loop compacts it, so a
// consumer reading from the start gets few records, the last of each key
// among them, at their original offsets.
func TestCompactedTopic(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) { c.LogCleanerBackoffMs = 20 })
	ctx := testContext(t)
	configs := map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("1024"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	}
	if _, err := kadm.NewClient(tb.client()).CreateTopic(ctx, 1, 1, configs, "table"); err != nil {
		t.Fatal(err)
	}

	keyless := tb.client(kgo.DefaultProduceTopic("table"), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	if err := keyless.ProduceSync(ctx, &kgo.Record{Value: []byte("no key")}).FirstErr(); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless produce: %v, want INVALID_RECORD", err)
	}

	producer := tb.client(kgo.DefaultProduceTopic("table"))
	const updates, keys = 300, 5
	for i := range updates {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%keys), Value: fmt.Appendf(nil, "%d", i)}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	deadline := time.Now().Add(20 * time.Second)
	for {
		records := consumeAll(t, tb, "table", updates)
		latest := map[string]*kgo.Record{}
		for _, r := range records {
			if string(r.Value) != fmt.Sprint(r.Offset) {
				t.Fatalf("offset %d holds value %s", r.Offset, r.Value)
			}
			latest[string(r.Key)] = r
		}
		for k := range keys {
			if r := latest[fmt.Sprint("k", k)]; r == nil || r.Offset != int64(updates-keys+k) {
				t.Fatalf("key k%d: latest record %+v", k, r)
			}
		}
		if len(records) < updates/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d records after 20 s", len(records))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// consumeAll reads partition 0 of topic from the start up to offset end.
func consumeAll(t *testing.T, tb *testBroker, topic string, end int64) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testContext(t)
	var out []*kgo.Record
	for {
		fetches := cl.PollFetches(ctx)
		if err := fetches.Err(); err != nil {
			t.Fatal(err)
		}
		for _, r := range fetches.Records() {
			out = append(out, r)
			if r.Offset == end-1 {
				return out
			}
		}
	}
}
