package broker

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/storage"
)

// txnBatch builds a transactional v2 batch of values for the producer, as a
// transactional producer sends it.
func txnBatch(producerID int64, epoch int16, seq int32, values ...string) []byte {
	var body []byte
	for i, v := range values {
		rec := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		rec.Length = int32(len(rec.AppendTo(nil)) - 1)
		body = rec.AppendTo(body)
	}
	ts := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, Attributes: 0x10, // transactional
		LastOffsetDelta: int32(len(values) - 1), FirstTimestamp: ts, MaxTimestamp: ts,
		ProducerID: producerID, ProducerEpoch: epoch, FirstSequence: seq,
		NumRecords: int32(len(values)), Records: body,
	}
	if producerID < 0 {
		b.Attributes = 0
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], storage.CRC32C(raw[21:]))
	return raw
}

// appendDirect appends batches as the produce path does once it accepts
// transactional batches (not yet: the coordinator is not wired in).
func appendDirect(t *testing.T, p *partition, batch []byte) {
	t.Helper()
	if _, err := p.AppendUnchecked(batch); err != nil {
		t.Fatal(err)
	}
}

// readValues consumes the partition from the start with the isolation
// level until it sees the record at end-1, or for 2 s (to show that nothing
// is returned), and returns the values seen.
func readValues(t *testing.T, tb *testBroker, topic string, committed bool, end int64) []string {
	t.Helper()
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(100*time.Millisecond))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var got []string
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return got
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, string(r.Value))
			done = done || r.Offset >= end-1
		})
		if done {
			return got
		}
	}
}

// TestReadCommittedAndMarkers: read_committed consumers (franz-go) stop at
// the last stable offset, skip aborted transactions and see committed ones
// once their marker is written; read_uncommitted consumers see every data
// record; after a restart the open/aborted state is rebuilt from the log.
func TestReadCommittedAndMarkers(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("tx", 1, nil)
	p := tb.srv.topics.partition("tx", 0)
	appendDirect(t, p, txnBatch(1000, 0, 0, "a0", "a1", "a2")) // offsets 0-2, aborted below
	appendDirect(t, p, txnBatch(-1, -1, -1, "p0"))             // 3, not transactional
	appendDirect(t, p, txnBatch(2000, 0, 0, "b0", "b1"))       // 4-5, committed below
	if lso := p.LastStableOffset(); lso != 0 {
		t.Fatalf("last stable offset %d with a transaction open at 0", lso)
	}
	listLatest := func(committed bool) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version, req.ReplicaID = 5, -1
		if committed {
			req.IsolationLevel = 1
		}
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "tx"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(testContext(t), tb.client())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].Offset
	}
	if c, u := listLatest(true), listLatest(false); c != 0 || u != 6 {
		t.Fatalf("latest offsets: read_committed %d (want 0), read_uncommitted %d (want 6)", c, u)
	}
	if got := readValues(t, tb, "tx", true, 6); len(got) != 0 {
		t.Fatalf("read_committed saw %v before any marker", got)
	}

	if off, err := writeTxnMarker(p, 1000, 0, false, 0); err != nil || off != 6 {
		t.Fatalf("abort marker: offset %d, %v", off, err)
	}
	if lso := p.LastStableOffset(); lso != 4 {
		t.Fatalf("last stable offset %d after the abort, want 4 (b still open)", lso)
	}
	if got := readValues(t, tb, "tx", true, 4); len(got) != 1 || got[0] != "p0" {
		t.Fatalf("read_committed after the abort: %v, want [p0]", got)
	}
	if _, err := writeTxnMarker(p, 1000, 0, true, 0); err != nil {
		t.Fatalf("a marker with no open transaction is still written (as Kafka): %v", err)
	}
	if _, err := writeTxnMarker(p, 2000, 0, true, 0); err != nil {
		t.Fatal(err)
	}
	end := p.HighWatermark()
	if lso := p.LastStableOffset(); lso != end {
		t.Fatalf("last stable offset %d with no open transaction, want the high watermark %d", lso, end)
	}
	want := []string{"p0", "b0", "b1"}
	check := func(when string) {
		// Offset 5 is the last data record; the markers after it are not
		// returned to clients.
		if got := readValues(t, tb, "tx", true, 6); !slices.Equal(got, want) {
			t.Fatalf("%s: read_committed %v, want %v", when, got, want)
		}
		if got := readValues(t, tb, "tx", false, 6); !slices.Equal(got, []string{"a0", "a1", "a2", "p0", "b0", "b1"}) {
			t.Fatalf("%s: read_uncommitted %v", when, got)
		}
	}
	check("after the markers")
	if _, err := writeTxnMarker(p, 2000, -1, true, 0); err == nil {
		t.Fatal("a marker with an older epoch was written")
	}
	tb.restart()
	p = tb.srv.topics.partition("tx", 0)
	if lso := p.LastStableOffset(); lso != p.HighWatermark() {
		t.Fatalf("after restart: last stable offset %d, high watermark %d", lso, p.HighWatermark())
	}
	check("after a restart")
}

// TestGroupShardReplaysTxnOffsets: offset commits written to
// __consumer_offsets inside a transaction (as TxnOffsetCommit will write
// them) count once their commit marker is in the log and never after an
// abort; a restart rebuilds exactly that from the log.
func TestGroupShardReplaysTxnOffsets(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("in", 1, nil)
	tb.srv.groups.ensureTopic()
	commitBatch := func(producerID int64, group string, offset int64) []byte {
		rec := groups.Record{Group: group, IsOffset: true, TopicPartition: groups.TopicPartition{Topic: "in", Partition: 0},
			Offset: &groups.OffsetAndMetadata{Offset: offset, LeaderEpoch: -1, CommitTimestamp: time.Now().UnixMilli(), ExpireTimestamp: -1}}
		key, value := groups.EncodeRecord(rec)
		return txnRecordBatch(producerID, key, value)
	}
	type txn struct {
		group    string
		producer int64
		commit   bool
	}
	cases := []txn{{"committed-group", 7001, true}, {"aborted-group", 7002, false}}
	for _, c := range cases {
		p := tb.srv.topics.partition(consumerOffsetsTopic, groupPartition(c.group, int(tb.srv.cfg.OffsetsTopicNumPartitions)))
		appendDirect(t, p, commitBatch(c.producer, c.group, 42))
		if _, err := writeTxnMarker(p, c.producer, 0, c.commit, 0); err != nil {
			t.Fatal(err)
		}
	}
	tb.restart()
	for _, c := range cases {
		resp, err := tb.admin().FetchOffsets(testContext(t), c.group)
		if err != nil {
			t.Fatal(err)
		}
		o, ok := resp.Lookup("in", 0)
		switch {
		case c.commit && (!ok || o.At != 42):
			t.Fatalf("%s: committed transactional offset not restored: %+v %v", c.group, o, ok)
		case !c.commit && ok && o.At >= 0:
			t.Fatalf("%s: aborted transactional offset is visible: %+v", c.group, o)
		}
	}
}

// txnRecordBatch is a transactional batch of one record with key and value.
func txnRecordBatch(producerID int64, key, value []byte) []byte {
	rec := kmsg.Record{Key: key, Value: value}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	ts := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, Attributes: 0x10,
		FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: producerID, ProducerEpoch: 0, FirstSequence: 0,
		NumRecords: 1, Records: rec.AppendTo(nil),
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], storage.CRC32C(raw[21:]))
	return raw
}

// TestTransactionalProducerFranz: franz-go's transactional producer
// commits and aborts through the coordinator; read_committed consumers see
// the committed records only, read_uncommitted ones see both; a second
// producer with the same transactional id fences the first.
func TestTransactionalProducerFranz(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("eos", 1, nil)
	ctx := testContext(t)
	prod := tb.client(kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("eos"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	round := func(values []string, commit bool) {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end transaction (commit %v): %v", commit, err)
		}
	}
	round([]string{"c1", "c2"}, true)
	round([]string{"x1", "x2"}, false)
	round([]string{"c3"}, true)
	// EndTxn is answered once the decision is durable; the markers follow
	// at once but asynchronously (as in Kafka), so the last stable offset
	// reaches the high watermark shortly after.
	p := tb.srv.topics.partition("eos", 0)
	waitFor(t, 10*time.Second, "the last stable offset to reach the high watermark with no transaction open", func() bool {
		return p.LastStableOffset() == p.HighWatermark() && p.HighWatermark() == 8
	})
	// Data offsets: c1 0, c2 1, marker 2, x1 3, x2 4, marker 5, c3 6, marker 7.
	if got := readValues(t, tb, "eos", true, 7); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("read_committed: %v", got)
	}
	if got := readValues(t, tb, "eos", false, 7); !slices.Equal(got, []string{"c1", "c2", "x1", "x2", "c3"}) {
		t.Fatalf("read_uncommitted: %v", got)
	}
	// A new producer with the same id fences the old one.
	zombie := prod
	fresh := tb.client(kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("eos"))
	if err := fresh.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.ProduceSync(ctx, &kgo.Record{Value: []byte("n1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if err := zombie.BeginTransaction(); err == nil {
		err = zombie.ProduceSync(ctx, &kgo.Record{Value: []byte("z")}).FirstErr()
		if err == nil {
			err = zombie.EndTransaction(ctx, kgo.TryCommit)
		}
		if err == nil {
			t.Fatal("the fenced producer committed a transaction")
		}
	}
	tb.restart()
	if got := readValues(t, tb, "eos", true, 9); !slices.Equal(got, []string{"c1", "c2", "c3", "n1"}) {
		t.Fatalf("read_committed after a restart: %v", got)
	}
}

// TestGroupTransactSessionFranz: exactly-once consume-transform-produce
// with franz-go's GroupTransactSession: every input record appears in the
// output exactly once (read_committed) and the group's committed offsets
// reach the input's end.
func TestGroupTransactSessionFranz(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	tb.createTopic("eos-in", 2, nil)
	tb.createTopic("eos-out", 1, nil)
	ctx := testContext(t)
	const n = 200
	in := tb.client(kgo.DefaultProduceTopic("eos-in"))
	for i := range n {
		if err := in.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("v%03d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(tb.addr()), kgo.TransactionalID("eos-pipeline"), kgo.DefaultProduceTopic("eos-out"),
		kgo.ConsumerGroup("eos-group"), kgo.ConsumeTopics("eos-in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RequireStableFetchOffsets(),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	done := 0
	for done < n {
		fs := sess.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("processed %d of %d: %v", done, n, ctx.Err())
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		count := 0
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Value: append([]byte("out-"), r.Value...)}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
			count++
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Fatal(err)
		}
		if committed {
			done += count
		}
	}
	out := readValues(t, tb, "eos-out", true, int64(2*n)) // markers interleave: read until quiet
	seen := map[string]int{}
	for _, v := range out {
		seen[v]++
	}
	for i := range n {
		if k := fmt.Sprintf("out-v%03d", i); seen[k] != 1 {
			t.Fatalf("%s appears %d times in the output", k, seen[k])
		}
	}
	offs, err := tb.admin().FetchOffsets(ctx, "eos-group")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	offs.Each(func(o kadm.OffsetResponse) { total += o.At })
	if total != n {
		t.Fatalf("committed offsets sum to %d, want %d", total, n)
	}
}

// TestTransactionalProducerSarama: sarama's transactional producer commits
// and aborts; a read_committed franz-go consumer sees only what committed.
func TestTransactionalProducerSarama(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("eos-sarama", 1, nil)
	cfg := saramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = "sarama-txn"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Net.MaxOpenRequests = 1
	prod, err := sarama.NewSyncProducer([]string{tb.addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for _, txn := range []struct {
		values []string
		commit bool
	}{{[]string{"s1", "s2"}, true}, {[]string{"x1"}, false}, {[]string{"s3"}, true}} {
		if err := prod.BeginTxn(); err != nil {
			t.Fatal(err)
		}
		for _, v := range txn.values {
			if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "eos-sarama", Value: sarama.StringEncoder(v)}); err != nil {
				t.Fatal(err)
			}
		}
		if txn.commit {
			err = prod.CommitTxn()
		} else {
			err = prod.AbortTxn()
		}
		if err != nil {
			t.Fatalf("end transaction (commit %v): %v", txn.commit, err)
		}
	}
	// Data offsets: s1 0, s2 1, marker 2, x1 3, marker 4, s3 5.
	if got := readValues(t, tb, "eos-sarama", true, 6); !slices.Equal(got, []string{"s1", "s2", "s3"}) {
		t.Fatalf("read_committed after sarama's transactions: %v", got)
	}
}

// writeTxnMarker writes a marker on p and returns its offset.
func writeTxnMarker(p *partition, producerID int64, epoch int16, commit bool, coordinatorEpoch int32) (int64, error) {
	offset, _, err := p.WriteTxnMarker(producerID, epoch, commit, coordinatorEpoch)
	return offset, err
}
