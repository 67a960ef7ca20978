package broker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/storage"
)

// createTopicWith creates a one-partition topic with the given configs.
func (tb *testBroker) createTopicWith(name string, configs map[string]string) {
	tb.t.Helper()
	cfgs := make(map[string]*string, len(configs))
	for k, v := range configs {
		cfgs[k] = ptr(v)
	}
	tb.createTopic(name, 1, cfgs)
}

// storedBatches lists the headers of partition 0's batches as stored.
func storedBatches(t *testing.T, tb *testBroker, topic string) []storage.BatchHeader {
	t.Helper()
	var out []storage.BatchHeader
	if err := tb.srv.topics.partition(topic, 0).Log().ForEachBatch(0, func(h storage.BatchHeader) error {
		out = append(out, h)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// assertEveryBatchCodec checks that partition 0 holds records, every data
// batch of them stored with codec.
func assertEveryBatchCodec(t *testing.T, tb *testBroker, topic string, codec int8) []storage.BatchHeader {
	t.Helper()
	batches := storedBatches(t, tb, topic)
	data := 0
	for _, h := range batches {
		if h.IsControl() {
			continue
		}
		data++
		if h.Compression() != codec {
			t.Fatalf("%s: batch at offset %d stored with codec %s, want %s", topic, h.BaseOffset, codecNames[h.Compression()], codecNames[codec])
		}
	}
	if data == 0 {
		t.Fatalf("%s: no batches stored", topic)
	}
	return batches
}

var saramaCodecFor = map[int8]sarama.CompressionCodec{
	codecNone: sarama.CompressionNone, codecGzip: sarama.CompressionGZIP, codecSnappy: sarama.CompressionSnappy,
	codecLZ4: sarama.CompressionLZ4, codecZstd: sarama.CompressionZSTD,
}

// TestRecompressToZstdEveryClientCodec: a topic with compression.type=zstd
// fed uncompressed, gzip, snappy and lz4 batches by franz-go (idempotent,
// its default) and by sarama stores every batch as zstd, and every record
// reads back identical, at its offset, through franz-go and through sarama.
func TestRecompressToZstdEveryClientCodec(t *testing.T) {
	tb := startTestBroker(t)
	records := fixtureRecords(3000, 21)
	for _, producer := range []string{"franz", "sarama"} {
		for _, codec := range []int8{codecNone, codecGzip, codecSnappy, codecLZ4} {
			t.Run(producer+"-"+codecNames[codec], func(t *testing.T) {
				topic := "to-zstd-" + producer + "-" + codecNames[codec]
				tb.createTopicWith(topic, map[string]string{"compression.type": "zstd"})
				ctx := testContext(t)
				if producer == "franz" {
					prod := tb.client(kgo.ProducerBatchCompression(kgoCodecFor(codec)), kgo.ProducerLinger(5*time.Millisecond),
						kgo.ProducerBatchMaxBytes(64<<10), kgo.MaxBufferedRecords(len(records)))
					produceAllFranz(t, ctx, prod, topic, records)
				} else {
					cfg := saramaConfig()
					cfg.Producer.Compression = saramaCodecFor[codec]
					cfg.Producer.Flush.Bytes = 64 << 10
					produceAllSarama(t, tb, cfg, topic, records)
				}
				if batches := assertEveryBatchCodec(t, tb, topic, codecZstd); len(batches) < 2 {
					t.Fatalf("%d batches stored; want several", len(batches))
				}
				consumeAllFranz(t, ctx, tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}})), records)
				consumeAllSarama(t, tb, saramaConfig(), topic, records)
			})
		}
	}
}

func kgoCodecFor(codec int8) kgo.CompressionCodec {
	for _, c := range kgoCodecs {
		if c.codec == codec {
			return c.kgo
		}
	}
	panic("no such codec")
}

// fetchPartition0 fetches partition 0 of topic from offset and returns
// the raw record bytes.
func fetchPartition0(t *testing.T, c *rawConn, topic string, offset int64) []byte {
	t.Helper()
	resp := roundTrip[*kmsg.FetchResponse](c, fetchRequest(12, topic, [16]byte{}, map[int32]int64{0: offset}, 1<<20))
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("fetch %s: %v", topic, kerr.ErrorForCode(p.ErrorCode))
	}
	return p.RecordBatches
}

// TestRecompressSameCodecIsByteIdentical: on a zstd topic a zstd batch is
// stored and fetched back byte for byte as it was produced (only
// baseOffset and partitionLeaderEpoch, outside the CRC, are the broker's),
// and it is not even decompressed: a zstd batch with a valid CRC around a
// body that is not zstd is stored as it is, while a topic that must
// recompress it refuses it. A gzip batch to the same topic comes back zstd
// with the same records and a valid CRC.
func TestRecompressSameCodecIsByteIdentical(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopicWith("same-zstd", map[string]string{"compression.type": "zstd"})
	tb.createTopicWith("to-gzip", map[string]string{"compression.type": "gzip"})
	c := tb.dialRaw()

	records := fixtureRecords(200, 5)
	sent := buildBatch(t, batchSpec{records: records, codec: codecZstd, producerID: -1, epoch: -1, baseSeq: -1})
	if got := c.produceRaw("same-zstd", 0, append([]byte(nil), sent...)); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("produce zstd: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	fetched := fetchPartition0(t, c, "same-zstd", 0)
	if len(fetched) != len(sent) {
		t.Fatalf("fetched %d bytes, sent %d", len(fetched), len(sent))
	}
	// bytes 0-7 baseOffset (0 both), 12-15 partitionLeaderEpoch.
	if !bytes.Equal(fetched[:12], sent[:12]) || !bytes.Equal(fetched[16:], sent[16:]) {
		t.Fatal("the zstd batch was not stored byte for byte")
	}

	// Not decompressed on the way in: garbage inside a valid CRC.
	garbage := buildBatch(t, batchSpec{records: records[:3], codec: codecZstd, producerID: -1, epoch: -1, baseSeq: -1})
	for i := storage.BatchHeaderSize; i < len(garbage); i++ {
		garbage[i] = 0xAA
	}
	binary.BigEndian.PutUint32(garbage[17:], crc32c(garbage[21:]))
	if got := c.produceRaw("same-zstd", 0, append([]byte(nil), garbage...)); got.ErrorCode != 0 {
		t.Fatalf("zstd garbage to a zstd topic: %v; want it stored as produced", kerr.ErrorForCode(got.ErrorCode))
	}
	if got := c.produceRaw("to-gzip", 0, append([]byte(nil), garbage...)); got.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("zstd garbage to a gzip topic: %v; want CORRUPT_MESSAGE", kerr.ErrorForCode(got.ErrorCode))
	}

	// Another codec is re-encoded: zstd out, same records.
	gz := buildBatch(t, batchSpec{records: records, codec: codecGzip, producerID: -1, epoch: -1, baseSeq: -1})
	if got := c.produceRaw("same-zstd", 0, gz); got.ErrorCode != 0 || got.BaseOffset != 203 {
		t.Fatalf("produce gzip: %v at %d", kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
	}
	headers, got := decodeBatches(t, fetchPartition0(t, c, "same-zstd", 203))
	if len(headers) != 1 || headers[0].Compression() != codecZstd || headers[0].BaseOffset != 203 || len(got) != len(records) {
		t.Fatalf("recompressed batch: %+v with %d records", headers, len(got))
	}
	if _, err := storage.ValidateBatches(fetchPartition0(t, c, "same-zstd", 203)); err != nil {
		t.Fatalf("recompressed batch does not validate: %v", err)
	}
	for i, r := range got {
		if diff := sameRecord(records[i], r.Key, r.Value, r.Headers, r.Timestamp); diff != "" || r.Offset != int64(203+i) {
			t.Fatalf("record %d at offset %d: %s", i, r.Offset, diff)
		}
	}
}

// TestRecompressIdempotentRaw drives the idempotence rules with gzip
// batches to a zstd topic: the stored batch carries the producer id,
// epoch and base sequence; a retry is acknowledged with the original
// offsets and stores nothing; a sequence gap is refused.
func TestRecompressIdempotentRaw(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopicWith("idem-zstd", map[string]string{"compression.type": "zstd"})
	c := tb.dialRaw()
	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.Version = 4
	initReq.ProducerID, initReq.ProducerEpoch = -1, -1
	initResp := roundTrip[*kmsg.InitProducerIDResponse](c, initReq)
	if initResp.ErrorCode != 0 {
		t.Fatalf("InitProducerID: %v", kerr.ErrorForCode(initResp.ErrorCode))
	}
	pid, epoch := initResp.ProducerID, initResp.ProducerEpoch
	recs := fixtureRecords(10, 3)
	batch := func(seq int32, from, to int) []byte {
		return buildBatch(t, batchSpec{records: recs[from:to], codec: codecGzip, producerID: pid, epoch: epoch, baseSeq: seq})
	}
	expect := func(what string, got kmsg.ProduceResponseTopicPartition, code int16, base, logEnd int64) {
		t.Helper()
		if got.ErrorCode != code || (code == 0 && got.BaseOffset != base) {
			t.Fatalf("%s: %v at %d, want %v at %d", what, kerr.ErrorForCode(got.ErrorCode), got.BaseOffset, kerr.ErrorForCode(code), base)
		}
		if end := tb.logEnd("idem-zstd", 0); end != logEnd {
			t.Fatalf("%s: log end %d, want %d", what, end, logEnd)
		}
	}
	first := batch(0, 0, 4)
	expect("first", c.produceRaw("idem-zstd", 0, append([]byte(nil), first...)), 0, 0, 4)
	expect("retry", c.produceRaw("idem-zstd", 0, append([]byte(nil), first...)), 0, 0, 4)
	expect("next", c.produceRaw("idem-zstd", 0, batch(4, 4, 7)), 0, 4, 7)
	expect("gap", c.produceRaw("idem-zstd", 0, batch(9, 7, 8)), kerr.OutOfOrderSequenceNumber.Code, 0, 7)
	expect("after the gap", c.produceRaw("idem-zstd", 0, batch(7, 7, 10)), 0, 7, 10)

	batches := assertEveryBatchCodec(t, tb, "idem-zstd", codecZstd)
	wantSeq := []int32{0, 4, 7}
	if len(batches) != len(wantSeq) {
		t.Fatalf("%d batches stored, want %d", len(batches), len(wantSeq))
	}
	for i, h := range batches {
		if h.ProducerID != pid || h.ProducerEpoch != epoch || h.BaseSequence != wantSeq[i] {
			t.Fatalf("batch %d: producer %d epoch %d sequence %d, want %d %d %d", i, h.ProducerID, h.ProducerEpoch, h.BaseSequence, pid, epoch, wantSeq[i])
		}
	}
	_, got := decodeBatches(t, fetchPartition0(t, c, "idem-zstd", 0))
	if len(got) != len(recs) {
		t.Fatalf("%d records stored, want %d", len(got), len(recs))
	}
	for i, r := range got {
		if diff := sameRecord(recs[i], r.Key, r.Value, r.Headers, r.Timestamp); diff != "" {
			t.Fatalf("record %d: %s", i, diff)
		}
	}
}

// TestRecompressTransactions: a transactional franz-go producer sending
// gzip batches to an lz4 topic: committed and aborted transactions are
// stored lz4 with the transactional bit, and a read_committed consumer
// sees exactly the committed records.
func TestRecompressTransactions(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopicWith("txn-lz4", map[string]string{"compression.type": "lz4"})
	ctx := testContext(t)
	prod := tb.client(kgo.TransactionalID("recompress-tx"), kgo.DefaultProduceTopic("txn-lz4"),
		kgo.ProducerBatchCompression(kgo.GzipCompression()))
	var committed []string
	for round := range 6 {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var vals []string
		for j := range 50 {
			vals = append(vals, fmt.Sprintf("round %d record %d %s", round, j, strings.Repeat("pad", j)))
		}
		for _, v := range vals {
			prod.Produce(ctx, &kgo.Record{Value: []byte(v)}, nil)
		}
		if err := prod.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		commit := round%3 != 1
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		if commit {
			committed = append(committed, vals...)
		}
	}
	for _, h := range assertEveryBatchCodec(t, tb, "txn-lz4", codecLZ4) {
		if !h.IsTransactional() {
			t.Fatalf("batch at %d lost its transactional bit", h.BaseOffset)
		}
	}
	cons := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"txn-lz4": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var got []string
	for len(got) < len(committed) {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d committed records: %v", len(got), len(committed), err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatal(err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if strings.Join(got, "\n") != strings.Join(committed, "\n") {
		t.Fatalf("read_committed saw %d records that differ from the %d committed", len(got), len(committed))
	}
}

// gzipBombBatch is a one-record batch whose value is n zero bytes,
// compressed with gzip as it is written, so neither the test nor the
// batch holds the expansion: a 64 MiB value takes about 64 KiB.
func gzipBombBatch(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	var rec []byte
	rec = append(rec, 0)              // attributes
	rec = binary.AppendVarint(rec, 0) // timestamp delta
	rec = binary.AppendVarint(rec, 0) // offset delta
	rec = binary.AppendVarint(rec, 1) // key
	rec = append(rec, 'k')
	rec = binary.AppendVarint(rec, int64(n))
	prefix := append(binary.AppendVarint(nil, int64(len(rec)+n+1)), rec...)
	writeAll := func(b []byte) {
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	writeAll(prefix)
	zeros := make([]byte, 1<<20)
	for left := n; left > 0; left -= len(zeros) {
		writeAll(zeros[:min(left, len(zeros))])
	}
	writeAll([]byte{0}) // no headers
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return wrapBody(codecGzip, buf.Bytes(), 1)
}

// zstdBombBatch is a batch claiming one record whose zstd body is a frame
// of RLE blocks decoding to n zeros: 1 GiB in 32 KiB.
func zstdBombBatch(n int) []byte {
	const block = 128 << 10
	body := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	body = append(body, 0x00, (17-10)<<3) // no content size; window 128 KiB
	for left := n; left > 0; left -= block {
		h := uint32(block)<<3 | 1<<1
		if left == block {
			h |= 1
		}
		body = append(body, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return wrapBody(codecZstd, body, 1)
}

// wrapBody puts an already compressed records section in a batch header
// claiming count records, with a valid CRC.
func wrapBody(codec int8, body []byte, count int) []byte {
	be := binary.BigEndian
	b := make([]byte, 0, storage.BatchHeaderSize+len(body))
	b = be.AppendUint64(b, 0)
	b = be.AppendUint32(b, 0)
	b = be.AppendUint32(b, 0xffffffff)
	b = append(b, 2)
	b = be.AppendUint32(b, 0)
	b = be.AppendUint16(b, uint16(codec))
	b = be.AppendUint32(b, uint32(count-1))
	b = be.AppendUint64(b, uint64(1_700_000_000_000))
	b = be.AppendUint64(b, uint64(1_700_000_000_000))
	b = be.AppendUint64(b, ^uint64(0))
	b = be.AppendUint16(b, 0xffff)
	b = be.AppendUint32(b, 0xffffffff)
	b = be.AppendUint32(b, uint32(count))
	b = append(b, body...)
	be.PutUint32(b[8:], uint32(len(b)-12))
	be.PutUint32(b[17:], crc32c(b[21:]))
	return b
}

// TestRecompressDecompressionBomb: tiny batches that inflate far past
// max.message.bytes (64 MiB from 64 KiB of gzip, 1 GiB from 32 KiB of
// zstd) are refused with MESSAGE_TOO_LARGE by topics that decompress them
// (recompressing ones, and compacted ones, whose null-key check walks the
// records), after allocating about the limit rather than the expansion;
// nothing is stored, and the broker goes on serving produces and fetches.
func TestRecompressDecompressionBomb(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopicWith("bomb-zstd", map[string]string{"compression.type": "zstd"})
	tb.createTopicWith("bomb-gzip", map[string]string{"compression.type": "gzip"})
	tb.createTopicWith("bomb-compact", map[string]string{"cleanup.policy": "compact"})
	c := tb.dialRaw()
	gzipBomb, zstdBomb := gzipBombBatch(t, 64<<20), zstdBombBatch(1<<30)
	maxMessageBytes := tb.srv.topics.topicConfig(tb.srv.topics.get("bomb-zstd")).maxMessageBytes()
	if len(gzipBomb) > int(maxMessageBytes)/8 || len(zstdBomb) > int(maxMessageBytes)/8 {
		t.Fatalf("bombs of %d and %d bytes are not small next to max.message.bytes %d", len(gzipBomb), len(zstdBomb), maxMessageBytes)
	}
	cases := []struct {
		topic string
		bomb  []byte
	}{
		{"bomb-zstd", gzipBomb},
		{"bomb-gzip", zstdBomb},
		{"bomb-compact", gzipBomb},
		{"bomb-compact", zstdBomb},
	}
	for _, tc := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got := c.produceRaw(tc.topic, 0, append([]byte(nil), tc.bomb...))
		runtime.ReadMemStats(&after)
		if got.ErrorCode != kerr.MessageTooLarge.Code {
			t.Fatalf("%s: bomb answered %v, want MESSAGE_TOO_LARGE", tc.topic, kerr.ErrorForCode(got.ErrorCode))
		}
		if got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, "decompresses to more than") {
			t.Errorf("%s: error message %v", tc.topic, got.ErrorMessage)
		}
		// The limit is 16 × max.message.bytes (16 MiB); a few times that
		// covers buffer growth and everything else the broker allocates.
		if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 96<<20 {
			t.Errorf("%s: refusing the bomb allocated %d MiB", tc.topic, allocated>>20)
		}
		if end := tb.logEnd(tc.topic, 0); end != 0 {
			t.Fatalf("%s: log end %d after a refused bomb", tc.topic, end)
		}
	}

	// Still serving: a normal produce and fetch on each topic.
	records := fixtureRecords(20, 9)
	for i := range records {
		if records[i].key == nil {
			records[i].key = []byte("k") // compacted topics need keys
		}
	}
	for _, topic := range []string{"bomb-zstd", "bomb-gzip", "bomb-compact"} {
		if got := c.produceRaw(topic, 0, buildBatch(t, batchSpec{records: records, codec: codecSnappy, producerID: -1, epoch: -1, baseSeq: -1})); got.ErrorCode != 0 {
			t.Fatalf("%s: produce after the bombs: %v", topic, kerr.ErrorForCode(got.ErrorCode))
		}
		if _, got := decodeBatches(t, fetchPartition0(t, tb.dialRaw(), topic, 0)); len(got) != len(records) {
			t.Fatalf("%s: fetched %d records, want %d", topic, len(got), len(records))
		}
	}
}

// TestCompressionTypeConfigs: CreateTopics accepts every compression.type
// Kafka has and the KIP-390 levels in their ranges, refuses anything else
// with INVALID_CONFIG naming the config; DescribeConfigs shows the values
// with their sources, synonyms and types; IncrementalAlterConfigs changes
// the codec of a live topic; the broker property compression.type is the
// default of topics without an override.
func TestCompressionTypeConfigs(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) {
		if err := c.Set("compression.type", "snappy"); err != nil {
			t.Fatal(err)
		}
		if err := c.Set("compression.zstd.level", "7"); err != nil {
			t.Fatal(err)
		}
	})
	adm := tb.admin()
	ctx := testContext(t)

	valid := map[string][]string{
		"compression.type":       {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"},
		"compression.gzip.level": {"-1", "1", "9"},
		"compression.lz4.level":  {"1", "9", "17"},
		"compression.zstd.level": {"-131072", "-1", "0", "3", "22"},
	}
	for name, values := range valid {
		for i, v := range values {
			topic := fmt.Sprintf("ok-%s-%d", strings.ReplaceAll(name, ".", "-"), i)
			resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{name: ptr(v)}, topic)
			if err != nil || resp.Err != nil {
				t.Fatalf("create with %s=%s: %v %v (%s)", name, v, err, resp.Err, resp.ErrMessage)
			}
			expectConfig(t, adm, topic, name, v, kmsg.ConfigSourceDynamicTopicConfig)
		}
	}
	invalid := map[string][]string{
		"compression.type":       {"none", "ZSTD", "brotli", "", "zstd,gzip"},
		"compression.gzip.level": {"0", "10", "-2", "six"},
		"compression.lz4.level":  {"0", "18", "-1"},
		"compression.zstd.level": {"-131073", "23", "3.5", "4294967296"},
	}
	for name, values := range invalid {
		for i, v := range values {
			topic := fmt.Sprintf("bad-%s-%d", strings.ReplaceAll(name, ".", "-"), i)
			resp, err := adm.CreateTopics(ctx, 1, 1, map[string]*string{name: ptr(v)}, topic)
			if err != nil {
				t.Fatal(err)
			}
			r := resp[topic]
			expectErr(t, name+"="+v, r.Err, kerr.InvalidConfig)
			if !strings.Contains(r.ErrMessage, name) {
				t.Errorf("%s=%q refused with message %q, which does not name the config", name, v, r.ErrMessage)
			}
			if tb.srv.topics.get(topic) != nil {
				t.Errorf("%s=%q: topic created anyway", name, v)
			}
		}
	}

	// Without overrides the broker properties apply.
	tb.createTopic("defaults", 1, nil)
	expectConfig(t, adm, "defaults", "compression.type", "snappy", kmsg.ConfigSourceStaticBrokerConfig)
	expectConfig(t, adm, "defaults", "compression.zstd.level", "7", kmsg.ConfigSourceStaticBrokerConfig)
	expectConfig(t, adm, "defaults", "compression.gzip.level", "-1", kmsg.ConfigSourceDefaultConfig)
	expectConfig(t, adm, "defaults", "compression.lz4.level", "9", kmsg.ConfigSourceDefaultConfig)

	c := tb.dialRaw()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	req.IncludeSynonyms = true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "ok-compression-zstd-level-4"
	r.ConfigNames = []string{"compression.type", "compression.gzip.level", "compression.lz4.level", "compression.zstd.level"}
	req.Resources = append(req.Resources, r)
	resp := roundTrip[*kmsg.DescribeConfigsResponse](c, req)
	described := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, cfg := range resp.Resources[0].Configs {
		described[cfg.Name] = cfg
	}
	if len(described) != 4 {
		t.Fatalf("described %d of 4 configs: %+v", len(described), resp.Resources[0])
	}
	for name, want := range map[string]kmsg.ConfigType{"compression.type": kmsg.ConfigTypeString, "compression.gzip.level": kmsg.ConfigTypeInt,
		"compression.lz4.level": kmsg.ConfigTypeInt, "compression.zstd.level": kmsg.ConfigTypeInt} {
		if got := described[name].ConfigType; got != want {
			t.Errorf("%s type %v, want %v", name, got, want)
		}
	}
	// compression.zstd.level=22 on the topic, 7 on the broker, 3 by default.
	syn := described["compression.zstd.level"].ConfigSynonyms
	type synonym struct {
		name, value string
		source      kmsg.ConfigSource
	}
	var gotSyn []synonym
	for _, s := range syn {
		gotSyn = append(gotSyn, synonym{s.Name, *s.Value, s.Source})
	}
	wantSyn := []synonym{
		{"compression.zstd.level", "22", kmsg.ConfigSourceDynamicTopicConfig},
		{"compression.zstd.level", "7", kmsg.ConfigSourceStaticBrokerConfig},
		{"compression.zstd.level", "3", kmsg.ConfigSourceDefaultConfig},
	}
	if fmt.Sprint(gotSyn) != fmt.Sprint(wantSyn) {
		t.Errorf("compression.zstd.level synonyms %v, want %v", gotSyn, wantSyn)
	}
	if s := described["compression.type"].ConfigSynonyms; len(s) != 2 || s[0].Name != "compression.type" || *s[0].Value != "snappy" ||
		s[0].Source != kmsg.ConfigSourceStaticBrokerConfig || *s[1].Value != "producer" || s[1].Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("compression.type synonyms %+v", s)
	}

	// The broker default stores batches as snappy; altering the topic
	// switches its codec for the next produce; a bad value is refused.
	produce := func(codec int8, n int) {
		t.Helper()
		got := c.produceRaw("defaults", 0, buildBatch(t, batchSpec{records: fixtureRecords(n, 1), codec: codec, producerID: -1, epoch: -1, baseSeq: -1}))
		if got.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
		}
	}
	produce(codecGzip, 5)
	alter := func(value string) error {
		t.Helper()
		resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "compression.type", Value: ptr(value)}}, "defaults")
		if err != nil {
			t.Fatal(err)
		}
		return resps[0].Err
	}
	if err := alter("lz4"); err != nil {
		t.Fatal(err)
	}
	produce(codecNone, 5)
	expectErr(t, "alter to brotli", alter("brotli"), kerr.InvalidConfig)
	batches := storedBatches(t, tb, "defaults")
	if len(batches) != 2 || batches[0].Compression() != codecSnappy || batches[1].Compression() != codecLZ4 {
		t.Fatalf("stored batches %+v: want snappy (broker default), then lz4 (altered)", batches)
	}
	expectConfig(t, adm, "defaults", "compression.type", "lz4", kmsg.ConfigSourceDynamicTopicConfig)
}

// TestCompressionBrokerProperties: the broker properties take Kafka's
// values and ranges and refuse others.
func TestCompressionBrokerProperties(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.CompressionType != "producer" || cfg.CompressionGzipLevel != -1 || cfg.CompressionLz4Level != 9 || cfg.CompressionZstdLevel != 3 {
		t.Fatalf("defaults %q %d %d %d", cfg.CompressionType, cfg.CompressionGzipLevel, cfg.CompressionLz4Level, cfg.CompressionZstdLevel)
	}
	for _, ok := range [][2]string{
		{"compression.type", "uncompressed"}, {"compression.type", "gzip"}, {"compression.type", " zstd "},
		{"compression.gzip.level", "9"}, {"compression.gzip.level", "-1"},
		{"compression.lz4.level", "17"}, {"compression.zstd.level", "-131072"},
	} {
		if err := cfg.Set(ok[0], ok[1]); err != nil {
			t.Errorf("Set(%s, %s): %v", ok[0], ok[1], err)
		}
	}
	if cfg.CompressionType != "zstd" || cfg.CompressionZstdLevel != -131072 {
		t.Errorf("after Set: %q level %d", cfg.CompressionType, cfg.CompressionZstdLevel)
	}
	for _, bad := range [][2]string{
		{"compression.type", "none"}, {"compression.type", "lzma"},
		{"compression.gzip.level", "0"}, {"compression.lz4.level", "18"}, {"compression.zstd.level", "23"}, {"compression.zstd.level", "x"},
	} {
		if err := cfg.Set(bad[0], bad[1]); err == nil {
			t.Errorf("Set(%s, %s) accepted", bad[0], bad[1])
		}
	}
}

// BenchmarkProduceRecompress is the broker's produce path (validation,
// compression.type, append) for a 256 KiB batch of random 1 KiB records,
// stored as produced or recompressed. MB/s counts the records' bytes.
func BenchmarkProduceRecompress(b *testing.B) {
	tb := startTestBroker(b, func(c *Config) { c.LogSegmentBytes = 64 << 20 })
	records := make([]testRecord, 256)
	payload := 0
	for i := range records {
		records[i] = testRecord{key: []byte(fmt.Sprintf("key-%d", i)), value: randomBytes(i, 1<<10), timestamp: 1_700_000_000_000}
		payload += len(records[i].value) + len(records[i].key)
	}
	for _, c := range []struct {
		name     string
		topicCfg string
		codec    int8
	}{
		{"zstd-to-zstd-passthrough", "zstd", codecZstd},
		{"zstd-to-producer-passthrough", "producer", codecZstd},
		{"gzip-to-zstd", "zstd", codecGzip},
		{"snappy-to-lz4", "lz4", codecSnappy},
		{"none-to-zstd", "zstd", codecNone},
	} {
		b.Run(c.name, func(b *testing.B) {
			topic := "bench-" + c.name
			if tb.srv.topics.get(topic) == nil { // b.Run calls this again for each b.N
				tb.createTopicWith(topic, map[string]string{"compression.type": c.topicCfg, "retention.bytes": fmt.Sprint(64 << 20), "segment.bytes": fmt.Sprint(16 << 20)})
			}
			p := tb.srv.topics.partition(topic, 0)
			cfg := tb.srv.topics.topicConfig(tb.srv.topics.get(topic))
			batch := buildBatch(b, batchSpec{records: records, codec: c.codec, producerID: -1, epoch: -1, baseSeq: -1})
			buf := make([]byte, len(batch))
			b.SetBytes(int64(payload))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				copy(buf, batch) // the append stamps offsets into its input
				if res := p.appendRecords(buf, cfg); res.Code != 0 {
					b.Fatalf("append: %v %s", kerr.ErrorForCode(res.Code), res.Message)
				}
				if i%128 == 127 {
					if _, err := p.ApplyRetention(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func randomBytes(seed, n int) []byte {
	out := make([]byte, n)
	x := uint64(seed)*0x9E3779B97F4A7C15 + 1
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = byte(x)
	}
	return out
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
