package broker

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchSessionReadsOnlyChangedPartitions: a franz-go consumer holds a
// session over 500 partitions; after it has caught up, rounds of records
// go to 5 of them. The consumer gets every record, in order, through
// incremental fetches, and those fetches read the changed partitions, not
// the session: the broker's count of partitions read stays a small
// multiple of the partitions that changed, far below one pass over the
// session (500 reads per fetch before the dirty set).
func TestFetchSessionReadsOnlyChangedPartitions(t *testing.T) {
	tb := startTestBroker(t)
	const topic, partitions, rounds, perRound = "dirty", 500, 4, 5
	tb.createTopic(topic, partitions, nil)
	ctx := testContext(t)
	prod := tb.client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	cons := tb.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	next := map[int32]int64{}
	consume := func(what string, want int) {
		t.Helper()
		for got := 0; got < want; {
			fs := cons.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("%s: consumed %d of %d: %v", what, got, want, ctx.Err())
			}
			fs.EachError(func(topic string, p int32, err error) { t.Fatalf("%s: fetch %s-%d: %v", what, topic, p, err) })
			fs.EachRecord(func(r *kgo.Record) {
				if r.Offset != next[r.Partition] {
					t.Fatalf("%s: partition %d: offset %d, want %d", what, r.Partition, r.Offset, next[r.Partition])
				}
				if want := fmt.Sprintf("%d-%d", r.Partition, r.Offset); string(r.Value) != want {
					t.Fatalf("%s: partition %d offset %d: value %q, want %q", what, r.Partition, r.Offset, r.Value, want)
				}
				next[r.Partition]++
				got++
			})
		}
	}
	produce := func(p int32) {
		t.Helper()
		rec := &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, tb.logEnd(topic, p))}
		if err := prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// One record everywhere, so the session's first answers cover every
	// partition; then let the consumer settle into idle incremental fetches.
	for p := int32(0); p < partitions; p++ {
		produce(p)
	}
	consume("every partition", partitions)
	time.Sleep(300 * time.Millisecond)

	fetches0, reads0 := tb.srv.fetches.fetches.Load(), tb.srv.fetches.reads.Load()
	changed := 0
	for round := 0; round < rounds; round++ {
		for i := 0; i < perRound; i++ {
			produce(int32((round*perRound + i) * 97 % partitions))
		}
		changed += perRound
		consume(fmt.Sprintf("round %d", round), perRound)
	}
	fetches, reads := tb.srv.fetches.fetches.Load()-fetches0, tb.srv.fetches.reads.Load()-reads0
	t.Logf("%d incremental fetches read %d partitions for %d changed of %d", fetches, reads, changed, partitions)
	if fetches == 0 {
		t.Fatal("no session fetch counted")
	}
	// Each changed partition is read when its record lands and again when
	// the consumer names its new offset; a long poll re-reads what it took
	// each time it wakes.
	if limit := int64(4 * changed); reads > limit {
		t.Fatalf("%d fetches read %d partitions for %d changed: want at most %d (a pass over the session reads %d)", fetches, reads, changed, limit, partitions)
	}
}

// TestFetchSessionAnswersLogStartMove: a partition with nothing new is
// skipped by incremental fetches until its log start offset moves
// (DeleteRecords); the watch marks it dirty and the next incremental
// response carries the new log start, as Kafka's does.
func TestFetchSessionAnswersLogStartMove(t *testing.T) {
	tb := startTestBroker(t)
	id := tb.createTopic("logstart", 2, nil)
	c := tb.dialRaw()
	for p := int32(0); p < 2; p++ {
		if got := c.produceRaw("logstart", p, buildBatch(t, plainBatch(fixtureRecords(3, 5)...))); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	full := roundTrip[*kmsg.FetchResponse](c, sessionFetch(16, "logstart", id, 0, 0, map[int32]int64{0: 3, 1: 3}, nil))
	if full.SessionID == 0 {
		t.Fatal("no session")
	}
	if resp := roundTrip[*kmsg.FetchResponse](c, sessionFetch(16, "logstart", id, full.SessionID, 1, nil, nil)); len(resp.Topics) != 0 {
		t.Fatalf("nothing new: %+v, want no partition", resp.Topics)
	}
	reads := tb.srv.fetches.reads.Load()
	if resp := roundTrip[*kmsg.FetchResponse](c, sessionFetch(16, "logstart", id, full.SessionID, 2, nil, nil)); len(resp.Topics) != 0 {
		t.Fatalf("nothing new: %+v, want no partition", resp.Topics)
	}
	if n := tb.srv.fetches.reads.Load() - reads; n != 0 {
		t.Fatalf("an incremental fetch with nothing new read %d partitions, want 0", n)
	}
	var offsets kadm.Offsets
	offsets.AddOffset("logstart", 1, 2, -1)
	if res, err := tb.admin().DeleteRecords(testContext(t), offsets); err != nil || res["logstart"][1].Err != nil {
		t.Fatalf("delete records: %v %v", err, res)
	}
	resp := roundTrip[*kmsg.FetchResponse](c, sessionFetch(16, "logstart", id, full.SessionID, 3, nil, nil))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("after DeleteRecords: %+v, want partition 1 alone", resp.Topics)
	}
	if p := resp.Topics[0].Partitions[0]; p.Partition != 1 || p.LogStartOffset != 2 {
		t.Fatalf("after DeleteRecords: partition %d log start %d, want partition 1 at 2", p.Partition, p.LogStartOffset)
	}
}
