package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestSmokeProduceConsume(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	cl := tb.client(kgo.DefaultProduceTopic("smoke"), kgo.AllowAutoTopicCreation())
	const n = 1000
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("v%d", i))}, func(r *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cons := tb.client(kgo.ConsumeTopics("smoke"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < n {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if want := fmt.Sprintf("v%d", got); string(r.Value) != want || r.Offset != int64(got) {
				t.Fatalf("record %d: got %q at %d", got, r.Value, r.Offset)
			}
			got++
		})
	}
}
