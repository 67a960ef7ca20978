package broker

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/replica"
)

// TestRestartKeepsEverything: records, topic IDs, partition counts and
// config overrides survive a restart, and producing continues at the old
// log end.
func TestRestartKeepsEverything(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	idA := tb.createTopic("kept-a", 3, map[string]*string{"retention.ms": ptr("3600000"), "cleanup.policy": ptr("delete")})
	idB := tb.createTopic("kept-b", 1, map[string]*string{"segment.bytes": ptr("4096")})
	records := fixtureRecords(20_000, 15)

	prod := tb.client(kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.MaxBufferedRecords(len(records)))
	produceAllFranz(t, ctx, prod, "kept-b", records)
	c := tb.dialRaw()
	for p := int32(0); p < 3; p++ {
		if got := c.produceRaw("kept-a", p, buildBatch(t, plainBatch(fixtureRecords(int(p)+1, 16)...))); got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	segments := tb.srv.topics.partition("kept-b", 0).Log().NumSegments()
	if segments < 2 {
		t.Fatalf("%d segments; the test wants several", segments)
	}

	prod.Close()
	tb.restart()

	if got := tb.srv.topics.get("kept-a"); got == nil || got.meta.ID != idA || len(got.partitions) != 3 {
		t.Fatalf("kept-a after restart: %+v", got)
	}
	if got := tb.srv.topics.get("kept-b"); got == nil || got.meta.ID != idB {
		t.Fatalf("kept-b after restart: %+v", got)
	}
	if n := tb.srv.topics.partition("kept-b", 0).Log().NumSegments(); n != segments {
		t.Errorf("%d segments after restart, %d before", n, segments)
	}
	adm := tb.admin()
	expectConfig(t, adm, "kept-a", "retention.ms", "3600000", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "kept-a", "cleanup.policy", "delete", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "kept-b", "segment.bytes", "4096", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "kept-b", "retention.ms", "604800000", kmsg.ConfigSourceDefaultConfig)

	cons := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"kept-b": {0: kgo.NewOffset().AtStart()}}))
	consumeAllFranz(t, ctx, cons, records)

	c = tb.dialRaw()
	for p := int32(0); p < 3; p++ {
		if end := tb.logEnd("kept-a", p); end != int64(p)+1 {
			t.Errorf("kept-a-%d log end %d after restart, want %d", p, end, p+1)
		}
	}
	if got := c.produceRaw("kept-b", 0, buildBatch(t, plainBatch(fixtureRecords(2, 17)...))); got.ErrorCode != 0 || got.BaseOffset != int64(len(records)) {
		t.Fatalf("produce after restart: %v at %d, want %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset, len(records))
	}
	// And a second restart, right after writing, keeps the tail too.
	tb.restart()
	if end := tb.logEnd("kept-b", 0); end != int64(len(records))+2 {
		t.Fatalf("log end %d after second restart, want %d", end, len(records)+2)
	}
}

// TestRestartKeepsProducerState: a batch retried after a restart is still
// recognised as a duplicate, and the next sequence is still expected.
func TestRestartKeepsProducerState(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("idem-restart", 1, nil)
	c := tb.dialRaw()
	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.Version = 4
	initReq.ProducerID, initReq.ProducerEpoch = -1, -1
	pid := roundTrip[*kmsg.InitProducerIDResponse](c, initReq).ProducerID
	recs := fixtureRecords(4, 18)
	batch := func(seq int32, n int) []byte {
		return buildBatch(t, batchSpec{records: recs[:n], producerID: pid, epoch: 0, baseSeq: seq})
	}
	first, second := batch(0, 3), batch(3, 2)
	if got := c.produceRaw("idem-restart", 0, first); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("first: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	if got := c.produceRaw("idem-restart", 0, second); got.ErrorCode != 0 || got.BaseOffset != 3 {
		t.Fatalf("second: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}

	tb.restart()
	c = tb.dialRaw()
	for _, tc := range []struct {
		name  string
		batch []byte
		base  int64
		code  int16
	}{
		{"retry of the last batch", second, 3, 0},
		{"retry of an earlier batch", first, 0, 0},
		{"sequence gap", batch(9, 1), 0, kerr.OutOfOrderSequenceNumber.Code},
	} {
		got := c.produceRaw("idem-restart", 0, tc.batch)
		if got.ErrorCode != tc.code || tc.code == 0 && got.BaseOffset != tc.base {
			t.Errorf("%s after restart: %v at %d, want %v at %d", tc.name, kerr.ErrorForCode(got.ErrorCode), got.BaseOffset, kerr.ErrorForCode(tc.code), tc.base)
		}
	}
	if end := tb.logEnd("idem-restart", 0); end != 5 {
		t.Fatalf("log end %d after retries, want 5", end)
	}

	// The producer-id allocator does not hand out the same id again.
	again := roundTrip[*kmsg.InitProducerIDResponse](c, initReq)
	if again.ErrorCode != 0 || again.ProducerID == pid {
		t.Fatalf("InitProducerID after restart: error %v, id %d (before: %d)", kerr.ErrorForCode(again.ErrorCode), again.ProducerID, pid)
	}
}

// TestRestartRebuildsProducerStateWithoutSnapshot: the producer snapshot
// is only a shortcut; removing it makes the broker rebuild the table from
// the batch headers.
func TestRestartRebuildsProducerStateWithoutSnapshot(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("idem-rebuild", 1, nil)
	c := tb.dialRaw()
	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.Version = 4
	initReq.ProducerID, initReq.ProducerEpoch = -1, -1
	pid := roundTrip[*kmsg.InitProducerIDResponse](c, initReq).ProducerID
	first := buildBatch(t, batchSpec{records: fixtureRecords(3, 19), producerID: pid, epoch: 0, baseSeq: 0})
	if got := c.produceRaw("idem-rebuild", 0, first); got.ErrorCode != 0 {
		t.Fatalf("first: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	dir := tb.srv.topics.partition("idem-rebuild", 0).Log().Dir()
	tb.stop()
	if err := removeIfExists(dir + "/" + replica.ProducerSnapshotFile); err != nil {
		t.Fatal(err)
	}
	tb.start()
	c = tb.dialRaw()
	if got := c.produceRaw("idem-rebuild", 0, first); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("retry after rebuild: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	if end := tb.logEnd("idem-rebuild", 0); end != 3 {
		t.Fatalf("log end %d, want 3", end)
	}
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// TestRestartDuringIdempotentProduce restarts the broker while franz-go's
// idempotent producer is mid-stream: batches in flight at shutdown are
// retried against the restarted broker, whose rebuilt producer state must
// deduplicate them, so every record is stored exactly once, in order.
func TestRestartDuringIdempotentProduce(t *testing.T) {
	tb := startTestBroker(t)
	const topic, n = "restart-mid-produce", 40_000
	tb.createTopic(topic, 1, nil)
	ctx := testContext(t)
	records := fixtureRecords(n, 22)
	prod := tb.client(kgo.ProducerLinger(time.Millisecond), kgo.ProducerBatchMaxBytes(8<<10), kgo.MaxBufferedRecords(n))

	produced := make(chan error, 1)
	go func() { produced <- produceAllFranzErr(ctx, prod, topic, records) }()
	waitFor(t, 30*time.Second, "a third of the records to land", func() bool { return tb.logEnd(topic, 0) >= n/3 })
	tb.restart()
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if end := tb.logEnd(topic, 0); end != n {
		t.Fatalf("log end %d after %d records across a restart", end, n)
	}
	cons := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	consumeAllFranz(t, ctx, cons, records)
}
