package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/strata-streaming/strata/broker/storage"
)

const codecRecordCount = 100_000

var kgoCodecs = []struct {
	codec int8
	kgo   kgo.CompressionCodec
}{
	{codecNone, kgo.NoCompression()},
	{codecGzip, kgo.GzipCompression()},
	{codecSnappy, kgo.SnappyCompression()},
	{codecLZ4, kgo.Lz4Compression()},
	{codecZstd, kgo.ZstdCompression()},
}

// TestProduceConsumeEveryCodecFranz sends 100k records through each codec
// with franz-go and reads them back byte for byte, in order, at contiguous
// offsets; the stored batches carry the codec the producer chose.
func TestProduceConsumeEveryCodecFranz(t *testing.T) {
	tb := startTestBroker(t)
	records := fixtureRecords(codecRecordCount, 1)
	for _, c := range kgoCodecs {
		t.Run(codecNames[c.codec], func(t *testing.T) {
			topic := "franz-codec-" + codecNames[c.codec]
			tb.createTopic(topic, 1, nil)
			ctx := testContext(t)
			prod := tb.client(kgo.ProducerBatchCompression(c.kgo), kgo.ProducerLinger(5*time.Millisecond),
				kgo.MaxBufferedRecords(codecRecordCount))
			produceAllFranz(t, ctx, prod, topic, records)
			assertStoredCodec(t, tb, topic, c.codec)

			cons := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
			consumeAllFranz(t, ctx, cons, records)
		})
	}
}

// produceAllFranz produces records in order to partition 0 and checks each
// got the offset of its index.
func produceAllFranz(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, records []testRecord) {
	t.Helper()
	if err := produceAllFranzErr(ctx, cl, topic, records); err != nil {
		t.Fatal(err)
	}
}

// produceAllFranzErr is produceAllFranz for use off the test goroutine.
func produceAllFranzErr(ctx context.Context, cl *kgo.Client, topic string, records []testRecord) error {
	var failures atomic.Int64
	var firstErr atomic.Value
	for i, r := range records {
		rec := kgoRecord(topic, r)
		want := int64(i)
		cl.Produce(ctx, rec, func(rec *kgo.Record, err error) {
			if err == nil && rec.Offset != want {
				err = fmt.Errorf("record %d acknowledged at offset %d", want, rec.Offset)
			}
			if err != nil && failures.Add(1) == 1 {
				firstErr.Store(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if n := failures.Load(); n > 0 {
		return fmt.Errorf("%d produce failures, first: %v", n, firstErr.Load())
	}
	return nil
}

// consumeAllFranz reads exactly len(want) records from the start and
// compares each with the fixture.
func consumeAllFranz(t *testing.T, ctx context.Context, cl *kgo.Client, want []testRecord) {
	t.Helper()
	got := 0
	for got < len(want) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", got, len(want), err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		for it := fs.RecordIter(); !it.Done(); {
			r := it.Next()
			if got >= len(want) {
				t.Fatalf("extra record at offset %d", r.Offset)
			}
			if r.Offset != int64(got) {
				t.Fatalf("record %d at offset %d; offsets must be contiguous from 0", got, r.Offset)
			}
			var hs []storage.RecordHeader
			for _, h := range r.Headers {
				hs = append(hs, storage.RecordHeader{Key: h.Key, Value: h.Value})
			}
			if diff := sameRecord(want[got], r.Key, r.Value, hs, r.Timestamp.UnixMilli()); diff != "" {
				t.Fatalf("record %d: %s", got, diff)
			}
			got++
		}
	}
}

// assertStoredCodec checks the stored batches of partition 0 use codec.
// franz-go sends a batch uncompressed when compressing would not shrink
// it, so uncompressed batches are allowed as long as nine records in ten
// travelled compressed.
func assertStoredCodec(t *testing.T, tb *testBroker, topic string, codec int8) {
	t.Helper()
	var total, compressed int64
	err := tb.srv.topics.partition(topic, 0).Log().ForEachBatch(0, func(h storage.BatchHeader) error {
		n := int64(h.LastOffsetDelta) + 1
		total += n
		switch h.Compression() {
		case codec:
			compressed += n
		case codecNone:
		default:
			return fmt.Errorf("batch at offset %d stored with codec %d, want %d", h.BaseOffset, h.Compression(), codec)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total == 0 || compressed*10 < total*9 {
		t.Fatalf("%d of %d records stored with codec %d", compressed, total, codec)
	}
}

// TestIdempotentProduceRaw drives the idempotence rules with hand-built
// batches: a retry is acknowledged with its original offsets and appends
// nothing, a sequence gap and an older epoch are refused.
func TestIdempotentProduceRaw(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("idem", 1, nil)
	c := tb.dialRaw()

	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.Version = 4
	initReq.ProducerID, initReq.ProducerEpoch = -1, -1
	initResp := roundTrip[*kmsg.InitProducerIDResponse](c, initReq)
	if initResp.ErrorCode != 0 || initResp.ProducerID < 0 || initResp.ProducerEpoch != 0 {
		t.Fatalf("InitProducerID: error %d, id %d, epoch %d", initResp.ErrorCode, initResp.ProducerID, initResp.ProducerEpoch)
	}
	pid := initResp.ProducerID
	recs := fixtureRecords(10, 2)
	batch := func(epoch int16, seq int32, n int) []byte {
		return buildBatch(t, batchSpec{records: recs[:n], producerID: pid, epoch: epoch, baseSeq: seq})
	}
	expect := func(what string, got kmsg.ProduceResponseTopicPartition, code int16, base, logEnd int64) {
		t.Helper()
		if got.ErrorCode != code {
			t.Fatalf("%s: error %v, want %v", what, kerr.ErrorForCode(got.ErrorCode), kerr.ErrorForCode(code))
		}
		if code == 0 && got.BaseOffset != base {
			t.Fatalf("%s: base offset %d, want %d", what, got.BaseOffset, base)
		}
		if end := tb.logEnd("idem", 0); end != logEnd {
			t.Fatalf("%s: log end %d, want %d", what, end, logEnd)
		}
	}

	first := batch(0, 0, 3)
	expect("first batch", c.produceRaw("idem", 0, first), 0, 0, 3)
	expect("same batch again", c.produceRaw("idem", 0, first), 0, 0, 3)
	expect("next batch", c.produceRaw("idem", 0, batch(0, 3, 2)), 0, 3, 5)
	expect("first batch a third time", c.produceRaw("idem", 0, first), 0, 0, 5)
	expect("sequence gap", c.produceRaw("idem", 0, batch(0, 9, 1)), kerr.OutOfOrderSequenceNumber.Code, 0, 5)
	expect("sequence rewind", c.produceRaw("idem", 0, batch(0, 1, 1)), kerr.OutOfOrderSequenceNumber.Code, 0, 5)
	expect("next after refusals", c.produceRaw("idem", 0, batch(0, 5, 1)), 0, 5, 6)

	// KIP-360: bumping the epoch restarts sequences at 0 and fences the old epoch.
	bump := kmsg.NewPtrInitProducerIDRequest()
	bump.Version = 4
	bump.ProducerID, bump.ProducerEpoch = pid, 0
	bumped := roundTrip[*kmsg.InitProducerIDResponse](c, bump)
	if bumped.ErrorCode != 0 || bumped.ProducerID != pid || bumped.ProducerEpoch != 1 {
		t.Fatalf("epoch bump: error %d, id %d epoch %d; want id %d epoch 1", bumped.ErrorCode, bumped.ProducerID, bumped.ProducerEpoch, pid)
	}
	expect("new epoch not at sequence 0", c.produceRaw("idem", 0, batch(1, 6, 1)), kerr.OutOfOrderSequenceNumber.Code, 0, 6)
	expect("new epoch", c.produceRaw("idem", 0, batch(1, 0, 2)), 0, 6, 8)
	expect("old epoch", c.produceRaw("idem", 0, batch(0, 6, 1)), kerr.InvalidProducerEpoch.Code, 0, 8)
	expect("old epoch retry", c.produceRaw("idem", 0, first), kerr.InvalidProducerEpoch.Code, 0, 8)
	expect("new epoch retry", c.produceRaw("idem", 0, batch(1, 0, 2)), 0, 6, 8)

	// The retried batch was not stored twice: the log holds 8 records.
	fetch := roundTrip[*kmsg.FetchResponse](c, fetchRequest(11, "idem", [16]byte{}, map[int32]int64{0: 0}, 1<<20))
	_, got := decodeBatches(t, fetch.Topics[0].Partitions[0].RecordBatches)
	if len(got) != 8 {
		t.Fatalf("log holds %d records, want 8", len(got))
	}
	for i, r := range got {
		if r.Offset != int64(i) {
			t.Fatalf("record %d at offset %d", i, r.Offset)
		}
	}
}

// TestIdempotentProducerLostAcks produces 100k records with franz-go's
// idempotent producer through a proxy that, every tenth of the way,
// swallows a Produce response and cuts the connection: the batch was
// appended but the producer never heard, so it retries it. The log must
// hold each record exactly once, in order.
func TestIdempotentProducerLostAcks(t *testing.T) {
	proxy := newLossyProxy(t)
	tb := startTestBroker(t, func(c *Config) { c.Advertise = proxy.addr() })
	proxy.start(tb.addr())
	const topic = "idem-e2e"
	tb.createTopic(topic, 1, nil)
	ctx := testContext(t)
	records := fixtureRecords(codecRecordCount, 3)
	prod := tb.client(kgo.SeedBrokers(proxy.addr()), kgo.ProducerLinger(time.Millisecond),
		kgo.ProducerBatchMaxBytes(16<<10), kgo.MaxBufferedRecords(codecRecordCount))

	stop := make(chan struct{})
	armerDone := make(chan struct{})
	go func() {
		defer close(armerDone)
		for next := int64(codecRecordCount / 10); next < codecRecordCount; next += codecRecordCount / 10 {
			for tb.logEnd(topic, 0) < next {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
			proxy.dropProduceResponses.Add(1)
		}
	}()
	produceAllFranz(t, ctx, prod, topic, records)
	close(stop)
	<-armerDone
	if n := proxy.dropped.Load(); n < 3 {
		t.Fatalf("only %d produce responses were lost; the test needs retries of appended batches", n)
	}
	if end := tb.logEnd(topic, 0); end != codecRecordCount {
		t.Fatalf("log end %d after %d records: duplicates or losses", end, codecRecordCount)
	}
	cons := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	consumeAllFranz(t, ctx, cons, records)
}

// TestProduceErrors covers the per-partition refusals of Produce.
func TestProduceErrors(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) { c.AutoCreateTopics = false })
	tb.createTopic("small", 1, map[string]*string{"max.message.bytes": ptr("2000")})
	c := tb.dialRaw()
	small := buildBatch(t, plainBatch(fixtureRecords(3, 4)...))
	if got := c.produceRaw("small", 0, small); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("valid produce: error %d base %d", got.ErrorCode, got.BaseOffset)
	}
	big := buildBatch(t, plainBatch(testRecord{value: bytes.Repeat([]byte("x"), 3000)}))
	cases := []struct {
		name      string
		topic     string
		partition int32
		records   []byte
		want      *kerr.Error
	}{
		{"batch over max.message.bytes", "small", 0, big, kerr.MessageTooLarge},
		{"missing partition", "small", 7, small, kerr.UnknownTopicOrPartition},
		{"negative partition", "small", -1, small, kerr.UnknownTopicOrPartition},
		{"missing topic", "nope", 0, small, kerr.UnknownTopicOrPartition},
		{"illegal topic name", "a/b", 0, small, kerr.InvalidTopicException},
		{"empty records", "small", 0, []byte{}, kerr.CorruptMessage},
		{"trailing garbage", "small", 0, append(append([]byte{}, small...), 1, 2, 3), kerr.CorruptMessage},
	}
	for _, tc := range cases {
		got := c.produceRaw(tc.topic, tc.partition, tc.records)
		if !errors.Is(kerr.ErrorForCode(got.ErrorCode), tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, kerr.ErrorForCode(got.ErrorCode), tc.want)
		}
	}
	if end := tb.logEnd("small", 0); end != 3 {
		t.Fatalf("log end %d after refused produces, want 3", end)
	}
	// Produce never auto-creates.
	if tb.srv.topics.get("nope") != nil {
		t.Fatal("produce created a topic")
	}
}

// TestProduceAcksZero: no response is sent, but the records land and the
// connection keeps working.
func TestProduceAcksZero(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("acks0", 1, nil)
	c := tb.dialRaw()
	req := produceRequest(9, "acks0", 0, buildBatch(t, plainBatch(fixtureRecords(4, 5)...)))
	req.Acks = 0
	c.send(req)
	// The next response on the connection must be the metadata one.
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 9
	resp := roundTrip[*kmsg.MetadataResponse](c, meta)
	if len(resp.Brokers) != 1 {
		t.Fatalf("metadata after acks=0 produce: %d brokers", len(resp.Brokers))
	}
	if end := tb.logEnd("acks0", 0); end != 4 {
		t.Fatalf("log end %d after acks=0 produce, want 4", end)
	}

	// A failed acks=0 produce closes the connection: the producer has no
	// other way to learn of the error.
	for name, req := range map[string]*kmsg.ProduceRequest{
		"missing topic":     produceRequest(9, "acks0-missing", 0, buildBatch(t, plainBatch(fixtureRecords(1, 5)...))),
		"corrupt batch":     produceRequest(9, "acks0", 0, []byte{1, 2, 3}),
		"missing partition": produceRequest(9, "acks0", 3, buildBatch(t, plainBatch(fixtureRecords(1, 5)...))),
	} {
		req.Acks = 0
		failing := tb.dialRaw()
		failing.send(req)
		failing.expectClosed(name)
	}
	if end := tb.logEnd("acks0", 0); end != 4 {
		t.Fatalf("log end %d after failed acks=0 produces, want 4", end)
	}
}

func ptr[T any](v T) *T { return &v }

// TestProduceEveryVersion: each Produce version we serve appends and
// answers with the right base offset; CreateTime topics report
// log_append_time -1.
func TestProduceEveryVersion(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("versions", 1, nil)
	c := tb.dialRaw()
	api := apis[kmsg.Produce.Int16()]
	next := int64(0)
	_, _, meta := tb.srv.topics.snapshot(tb.srv.topics.get("versions"))
	for v := api.minVersion; v <= api.maxVersion; v++ {
		req := produceRequest(v, "versions", 0, buildBatch(t, plainBatch(fixtureRecords(3, uint64(v))...)))
		if v >= 13 {
			req.Topics[0].TopicID = meta.ID // KIP-516: by id only
		}
		resp := roundTrip[*kmsg.ProduceResponse](c, req)
		if v >= 13 && resp.Topics[0].TopicID != meta.ID {
			t.Fatalf("v%d: response topic id %x", v, resp.Topics[0].TopicID)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.BaseOffset != next || p.LogAppendTime != -1 {
			t.Fatalf("v%d: error %v, base %d (want %d), log append time %d", v, kerr.ErrorForCode(p.ErrorCode), p.BaseOffset, next, p.LogAppendTime)
		}
		if v >= 5 && p.LogStartOffset != 0 {
			t.Fatalf("v%d: log start offset %d", v, p.LogStartOffset)
		}
		next += 3
	}
}

// TestLogAppendTime: on a LogAppendTime topic the broker stamps each batch
// with its append time; consumers and timestamp lookups see that time.
func TestLogAppendTime(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("appended", 1, map[string]*string{"message.timestamp.type": ptr("LogAppendTime")})
	c := tb.dialRaw()
	before := time.Now().UnixMilli()
	recs := fixtureRecords(5, 23)
	for i := range recs {
		recs[i].timestamp = 1000 + int64(i)
	}
	got := c.produceRaw("appended", 0, buildBatch(t, batchSpec{records: recs, codec: codecGzip, producerID: -1, epoch: -1, baseSeq: -1}))
	after := time.Now().UnixMilli()
	if got.ErrorCode != 0 || got.LogAppendTime < before || got.LogAppendTime > after {
		t.Fatalf("produce: error %v, log append time %d not in [%d, %d]", kerr.ErrorForCode(got.ErrorCode), got.LogAppendTime, before, after)
	}
	fetch := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, "appended", [16]byte{}, map[int32]int64{0: 0}, 1<<20))
	headers, records := decodeBatches(t, fetch.Topics[0].Partitions[0].RecordBatches)
	if len(headers) != 1 || headers[0].TimestampType() != 1 || headers[0].MaxTimestamp != got.LogAppendTime {
		t.Fatalf("stored batch: %+v", headers)
	}
	for i, r := range records {
		if r.Timestamp != got.LogAppendTime {
			t.Fatalf("record %d timestamp %d, want the append time %d", i, r.Timestamp, got.LogAppendTime)
		}
	}
	if lo := c.listOffset(7, "appended", 0, before-1000); lo.ErrorCode != 0 || lo.Offset != 0 || lo.Timestamp != got.LogAppendTime {
		t.Fatalf("lookup by append time: error %v, offset %d, timestamp %d", kerr.ErrorForCode(lo.ErrorCode), lo.Offset, lo.Timestamp)
	}
	if lo := c.listOffset(7, "appended", 0, 2000); lo.Offset != 0 {
		t.Fatalf("lookup by a create time older than the append time: offset %d, want 0", lo.Offset)
	}
	if lo := c.listOffset(7, "appended", 0, after+60_000); lo.Offset != -1 {
		t.Fatalf("lookup after the append time: offset %d, want -1", lo.Offset)
	}
	if lo := c.listOffset(7, "appended", 0, -3); lo.ErrorCode != 0 || lo.Timestamp != got.LogAppendTime {
		t.Fatalf("max timestamp: error %v, offset %d timestamp %d", kerr.ErrorForCode(lo.ErrorCode), lo.Offset, lo.Timestamp)
	}
}

// TestProduceRefusals covers refusals that depend on the request rather
// than the bytes: acks, min.insync.replicas, transactions, and idempotent
// batches that do not travel alone.
func TestProduceRefusals(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("refusals", 1, nil)
	tb.createTopic("needs-isr", 1, map[string]*string{"min.insync.replicas": ptr("2")})
	c := tb.dialRaw()
	plain := buildBatch(t, plainBatch(fixtureRecords(2, 26)...))
	check := func(what string, req *kmsg.ProduceRequest, want *kerr.Error) {
		t.Helper()
		got := roundTrip[*kmsg.ProduceResponse](c, req).Topics[0].Partitions[0]
		wantCode := int16(0)
		if want != nil {
			wantCode = want.Code
		}
		if got.ErrorCode != wantCode {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got.ErrorCode), want)
		}
	}
	acks2 := produceRequest(9, "refusals", 0, plain)
	acks2.Acks = 2
	check("acks=2", acks2, kerr.InvalidRequiredAcks)

	check("acks=-1 with min.insync.replicas=2", produceRequest(9, "needs-isr", 0, plain), kerr.NotEnoughReplicas)
	acks1 := produceRequest(9, "needs-isr", 0, plain)
	acks1.Acks = 1
	check("acks=1 with min.insync.replicas=2", acks1, nil)

	txnBatch := buildBatch(t, batchSpec{records: fixtureRecords(1, 27), producerID: 5, epoch: 0, baseSeq: 0})
	binary.BigEndian.PutUint16(txnBatch[21:], 0x10) // transactional attribute
	binary.BigEndian.PutUint32(txnBatch[17:], crc32.Checksum(txnBatch[21:], crc32.MakeTable(crc32.Castagnoli)))
	check("transactional batch", produceRequest(9, "refusals", 0, txnBatch), kerr.InvalidTxnState)

	idem := func(seq int32) []byte {
		return buildBatch(t, batchSpec{records: fixtureRecords(1, 28), producerID: 6, epoch: 0, baseSeq: seq})
	}
	check("two idempotent batches in one produce", produceRequest(9, "refusals", 0, append(idem(0), idem(1)...)), kerr.InvalidRecord)

	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.Version = 4
	initReq.TransactionalID = ptr("tx")
	initReq.TransactionTimeoutMillis = 1 << 30 // over transaction.max.timeout.ms
	if got := roundTrip[*kmsg.InitProducerIDResponse](c, initReq); got.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Errorf("InitProducerID with a transaction timeout over the maximum: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	if end := tb.logEnd("refusals", 0); end != 0 {
		t.Fatalf("refused produces appended: log end %d", end)
	}
}

// TestOlderClientProtocolVersions runs franz-go capped at the protocol
// versions of older Kafka releases, so the non-flexible encodings of
// Produce, Fetch, ListOffsets and Metadata carry real traffic too.
func TestOlderClientProtocolVersions(t *testing.T) {
	tb := startTestBroker(t)
	records := fixtureRecords(5_000, 29)
	for name, versions := range map[string]*kversion.Versions{"2.1": kversion.V2_1_0(), "2.4": kversion.V2_4_0(), "3.0": kversion.V3_0_0()} {
		t.Run(name, func(t *testing.T) {
			topic := "old-client-" + name
			tb.createTopic(topic, 1, nil)
			ctx := testContext(t)
			prod := tb.client(kgo.MaxVersions(versions), kgo.ProducerBatchCompression(kgo.Lz4Compression()), kgo.MaxBufferedRecords(len(records)))
			produceAllFranz(t, ctx, prod, topic, records)
			cons := tb.client(kgo.MaxVersions(versions), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			consumeAllFranz(t, ctx, cons, records)
		})
	}
}

// TestProduceV13RecreatedTopic: Produce v13 names topics by id. A topic
// deleted and created again under its name while a franz-go producer
// writes to it: the old id is UNKNOWN_TOPIC_ID (as in Kafka 4.x), Metadata
// names the new id, and once the application purges the topic from the
// client (franz-go never adopts a recreated topic's id by itself) it
// produces to the new topic by its new id.
func TestProduceV13RecreatedTopic(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	adm := tb.admin()
	if res, err := adm.CreateTopic(ctx, 1, 1, nil, "reborn13"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	cl := tb.client(kgo.DefaultProduceTopic("reborn13"))
	if err := cl.ProduceSync(ctx, kgo.StringRecord("first")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	oldID := tb.srv.topics.get("reborn13").meta.ID
	if _, err := adm.DeleteTopics(ctx, "reborn13"); err != nil {
		t.Fatal(err)
	}
	if res, err := adm.CreateTopic(ctx, 1, 1, nil, "reborn13"); err != nil || res.Err != nil {
		t.Fatalf("recreate: %v %v", err, res.Err)
	}
	newID := tb.srv.topics.get("reborn13").meta.ID
	if newID == oldID {
		t.Fatal("the recreated topic kept its id")
	}
	// The client still holds the old id (by name, v12 and below, this
	// record would land in the new topic).
	err := cl.ProduceSync(ctx, kgo.StringRecord("to the old id")).FirstErr()
	if !errors.Is(err, kerr.UnknownTopicID) {
		t.Fatalf("produce to the deleted topic's id: %v, want UNKNOWN_TOPIC_ID", err)
	}
	md, err := adm.Metadata(ctx, "reborn13")
	if err != nil || md.Topics["reborn13"].ID != kadm.TopicID(newID) {
		t.Fatalf("metadata: %v, id %x, want the new id %x", err, md.Topics["reborn13"].ID, newID)
	}
	cl.PurgeTopicsFromClient("reborn13")
	r, err := cl.ProduceSync(ctx, kgo.StringRecord("to the new id")).First()
	if err != nil || r.Offset != 0 {
		t.Fatalf("produce after purge: offset %v, %v; want offset 0 of the new topic", r, err)
	}
	if end := tb.logEnd("reborn13", 0); end != 1 {
		t.Fatalf("new topic's log end %d, want 1", end)
	}
	// Raw v13: the old id is unknown, the new one appends.
	c := tb.dialRaw()
	for _, tc := range []struct {
		id   [16]byte
		want int16
	}{{oldID, kerr.UnknownTopicID.Code}, {newID, 0}} {
		req := produceRequest(13, "", 0, buildBatch(t, plainBatch(fixtureRecords(1, 1)...)))
		req.Topics[0].TopicID = tc.id
		resp := roundTrip[*kmsg.ProduceResponse](c, req)
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != tc.want {
			t.Fatalf("v13 to id %x: error %d, want %d", tc.id, got, tc.want)
		}
	}
}
