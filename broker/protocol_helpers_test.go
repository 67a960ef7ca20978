package broker

// Tools shared by the protocol tests: a raw Kafka connection that sends any
// kmsg request at an exact version, a v2 record-batch builder (every codec,
// idempotent fields, explicit timestamps), deterministic record fixtures and
// a poll-until helper.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/storage"
)

// rawConn is one Kafka connection driven by hand: requests go out exactly
// as built, at the version set on them.
type rawConn struct {
	t    testing.TB
	nc   net.Conn
	corr int32
}

func (tb *testBroker) dialRaw() *rawConn {
	tb.t.Helper()
	nc, err := net.DialTimeout("tcp", tb.addr(), 5*time.Second)
	if err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Cleanup(func() { nc.Close() })
	return &rawConn{t: tb.t, nc: nc}
}

// appendRequestFrame appends a size-prefixed request: header v1 (v2 for
// flexible requests) and body, as a client sends it.
func appendRequestFrame(dst []byte, req kmsg.Request, correlationID int32) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	const clientID = "strata-test"
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(clientID)))
	dst = append(dst, clientID...)
	if req.IsFlexible() {
		dst = append(dst, 0) // no header tags
	}
	dst = req.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// writeRaw sends bytes as they are.
func (c *rawConn) writeRaw(b []byte) error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.nc.Write(b)
	return err
}

func (c *rawConn) send(req kmsg.Request) int32 {
	c.t.Helper()
	c.corr++
	if err := c.writeRaw(appendRequestFrame(nil, req, c.corr)); err != nil {
		c.t.Fatalf("write %s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return c.corr
}

// readFrame reads one size-prefixed response frame.
func (c *rawConn) readFrame(timeout time.Duration) ([]byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(timeout))
	var size [4]byte
	if _, err := io.ReadFull(c.nc, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 512<<20 {
		return nil, fmt.Errorf("response of %d bytes", n)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(c.nc, frame); err != nil {
		return nil, err
	}
	return frame, nil
}

// readResponse reads the response to req sent with correlation id corr.
func (c *rawConn) readResponse(req kmsg.Request, corr int32, timeout time.Duration) (kmsg.Response, error) {
	frame, err := c.readFrame(timeout)
	if err != nil {
		return nil, err
	}
	if len(frame) < 4 {
		return nil, fmt.Errorf("short response frame of %d bytes", len(frame))
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != corr {
		return nil, fmt.Errorf("correlation id %d, want %d", got, corr)
	}
	body := frame[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		if body, err = skipTaggedFields(body); err != nil {
			return nil, err
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s v%d response: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}

// roundTrip sends req and returns its typed response, failing the test on
// any transport or decoding error.
func roundTrip[R kmsg.Response](c *rawConn, req kmsg.Request) R {
	c.t.Helper()
	corr := c.send(req)
	resp, err := c.readResponse(req, corr, 30*time.Second)
	if err != nil {
		c.t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp.(R)
}

// expectClosed asserts the broker closes the connection (EOF or reset)
// without answering; what names the case in the failure.
func (c *rawConn) expectClosed(what string) {
	c.t.Helper()
	frame, err := c.readFrame(10 * time.Second)
	if err == nil {
		c.t.Fatalf("%s: got a %d-byte response; want the connection closed", what, len(frame))
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatalf("%s: connection still open after 10s; want it closed", what)
	}
}

// Compression codecs as the batch attributes number them.
const (
	codecNone   int8 = 0
	codecGzip   int8 = 1
	codecSnappy int8 = 2
	codecLZ4    int8 = 3
	codecZstd   int8 = 4
)

var codecNames = map[int8]string{codecNone: "none", codecGzip: "gzip", codecSnappy: "snappy", codecLZ4: "lz4", codecZstd: "zstd"}

// testRecord is one record to build into a batch; timestamps are absolute.
type testRecord struct {
	key, value []byte
	headers    []storage.RecordHeader
	timestamp  int64
}

// batchSpec describes one v2 record batch.
type batchSpec struct {
	records    []testRecord
	codec      int8
	producerID int64 // -1: not idempotent
	epoch      int16
	baseSeq    int32
}

func plainBatch(records ...testRecord) batchSpec {
	return batchSpec{records: records, producerID: -1, epoch: -1, baseSeq: -1}
}

// buildBatch encodes spec as a producer would: offsets from 0, the
// records compressed with the codec, CRC-32C over attributes onward.
func buildBatch(t testing.TB, spec batchSpec) []byte {
	t.Helper()
	if len(spec.records) == 0 {
		t.Fatal("buildBatch: no records")
	}
	first, maxTs := spec.records[0].timestamp, spec.records[0].timestamp
	for _, r := range spec.records {
		maxTs = max(maxTs, r.timestamp)
	}
	var body []byte
	for i, r := range spec.records {
		body = appendRecord(body, i, r.timestamp-first, r)
	}
	body = compress(t, spec.codec, body)

	be := binary.BigEndian
	b := make([]byte, 0, storage.BatchHeaderSize+len(body))
	b = be.AppendUint64(b, 0)                           // base offset
	b = be.AppendUint32(b, 0)                           // length, below
	b = be.AppendUint32(b, 0xffffffff)                  // partition leader epoch -1
	b = append(b, 2)                                    // magic
	b = be.AppendUint32(b, 0)                           // crc, below
	b = be.AppendUint16(b, uint16(spec.codec))          // attributes
	b = be.AppendUint32(b, uint32(len(spec.records)-1)) // last offset delta
	b = be.AppendUint64(b, uint64(first))
	b = be.AppendUint64(b, uint64(maxTs))
	b = be.AppendUint64(b, uint64(spec.producerID))
	b = be.AppendUint16(b, uint16(spec.epoch))
	b = be.AppendUint32(b, uint32(spec.baseSeq))
	b = be.AppendUint32(b, uint32(len(spec.records)))
	b = append(b, body...)
	be.PutUint32(b[8:], uint32(len(b)-12))
	be.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

func appendRecord(dst []byte, offsetDelta int, timestampDelta int64, r testRecord) []byte {
	var rec []byte
	rec = append(rec, 0) // attributes
	rec = binary.AppendVarint(rec, timestampDelta)
	rec = binary.AppendVarint(rec, int64(offsetDelta))
	rec = appendVarBytes(rec, r.key)
	rec = appendVarBytes(rec, r.value)
	rec = binary.AppendVarint(rec, int64(len(r.headers)))
	for _, h := range r.headers {
		rec = appendVarBytes(rec, []byte(h.Key))
		rec = appendVarBytes(rec, h.Value)
	}
	dst = binary.AppendVarint(dst, int64(len(rec)))
	return append(dst, rec...)
}

func compress(t testing.TB, codec int8, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch codec {
	case codecNone:
		return data
	case codecGzip:
		w = gzip.NewWriter(&buf)
	case codecSnappy:
		return snappy.Encode(nil, data)
	case codecLZ4:
		w = lz4.NewWriter(&buf)
	case codecZstd:
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer enc.Close()
		return enc.EncodeAll(data, nil)
	default:
		t.Fatalf("unknown codec %d", codec)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// produceRequest wraps batches for one partition in a Produce request of
// the given version with acks=-1.
func produceRequest(version int16, topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = version
	req.Acks = -1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produceRaw sends one produce to one partition and returns its result.
func (c *rawConn) produceRaw(topic string, partition int32, records []byte) kmsg.ProduceResponseTopicPartition {
	c.t.Helper()
	resp := roundTrip[*kmsg.ProduceResponse](c, produceRequest(9, topic, partition, records))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		c.t.Fatalf("produce response has %d topics; want exactly one partition", len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

// fetchRequest builds a sessionless Fetch for partitions of one topic at
// the given offsets.
func fetchRequest(version int16, topic string, topicID [16]byte, offsets map[int32]int64, partitionMaxBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = version
	req.ReplicaID = -1
	req.MaxBytes = 50 << 20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	for _, p := range slices.Sorted(maps.Keys(offsets)) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p
		rp.FetchOffset = offsets[p]
		rp.PartitionMaxBytes = partitionMaxBytes
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// decodeBatches decodes every whole batch in a fetch's record bytes (a
// trailing partial batch, allowed by Kafka, is ignored).
func decodeBatches(t testing.TB, b []byte) (headers []storage.BatchHeader, records []storage.Record) {
	t.Helper()
	for len(b) >= storage.BatchHeaderSize {
		h, err := storage.ParseBatchHeader(b)
		if err != nil {
			t.Fatalf("fetched batch header: %v", err)
		}
		if h.Size() > len(b) {
			break
		}
		rs, err := storage.DecodeRecords(b[:h.Size()])
		if err != nil {
			t.Fatalf("fetched batch at %d: %v", h.BaseOffset, err)
		}
		headers = append(headers, h)
		records = append(records, rs...)
		b = b[h.Size():]
	}
	return headers, records
}

// fixtureRecords returns n deterministic records with varied, partly
// compressible keys, values and headers, including null keys, empty values
// and binary bytes. Record i's value starts with its index.
func fixtureRecords(n int, seed uint64) []testRecord {
	rng := rand.New(rand.NewPCG(seed, 42))
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	out := make([]testRecord, n)
	for i := range out {
		r := &out[i]
		if i%7 != 3 {
			r.key = []byte(fmt.Sprintf("key-%d", rng.IntN(1000)))
		}
		v := []byte(fmt.Sprintf("%08d|", i))
		for j := rng.IntN(6); j > 0; j-- {
			v = append(v, words[rng.IntN(len(words))]...)
		}
		if i%11 == 0 {
			for j := rng.IntN(24); j > 0; j-- {
				v = append(v, byte(rng.UintN(256)))
			}
		}
		r.value = v
		for j := rng.IntN(3); j > 0; j-- {
			hv := []byte(words[rng.IntN(len(words))])
			if rng.IntN(5) == 0 {
				hv = nil
			}
			r.headers = append(r.headers, storage.RecordHeader{Key: fmt.Sprintf("h%d", j), Value: hv})
		}
		r.timestamp = 1_700_000_000_000 + int64(i)
	}
	return out
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// admin returns a kadm client for the broker.
func (tb *testBroker) admin() *kadm.Client {
	tb.t.Helper()
	return kadm.NewClient(tb.client())
}

// createTopic creates a topic with the given partitions and overrides.
func (tb *testBroker) createTopic(name string, partitions int32, configs map[string]*string) [16]byte {
	tb.t.Helper()
	resp, err := tb.admin().CreateTopic(testContext(tb.t), partitions, 1, configs, name)
	if err != nil {
		tb.t.Fatalf("create topic %s: %v", name, err)
	}
	if resp.Err != nil {
		tb.t.Fatalf("create topic %s: %v", name, resp.Err)
	}
	return resp.ID
}

// logEnd is a partition's log end offset as the broker holds it.
func (tb *testBroker) logEnd(topic string, partition int32) int64 {
	tb.t.Helper()
	p := tb.srv.topics.partition(topic, partition)
	if p == nil {
		tb.t.Fatalf("no partition %s-%d", topic, partition)
	}
	return p.Log().LogEndOffset()
}

// kgoRecord converts a fixture record for franz-go.
func kgoRecord(topic string, r testRecord) *kgo.Record {
	rec := &kgo.Record{Topic: topic, Key: r.key, Value: r.value, Timestamp: time.UnixMilli(r.timestamp)}
	for _, h := range r.headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return rec
}

// sameRecord reports how a consumed record differs from the fixture, or "".
func sameRecord(want testRecord, key, value []byte, headers []storage.RecordHeader, timestamp int64) string {
	switch {
	case (want.key == nil) != (key == nil) || !bytes.Equal(want.key, key):
		return fmt.Sprintf("key %q, want %q", key, want.key)
	case !bytes.Equal(want.value, value):
		return fmt.Sprintf("value %q, want %q", value, want.value)
	case timestamp != want.timestamp:
		return fmt.Sprintf("timestamp %d, want %d", timestamp, want.timestamp)
	case len(headers) != len(want.headers):
		return fmt.Sprintf("%d headers, want %d", len(headers), len(want.headers))
	}
	for i, h := range headers {
		if h.Key != want.headers[i].Key || !bytes.Equal(h.Value, want.headers[i].Value) {
			return fmt.Sprintf("header %d %q=%q, want %q=%q", i, h.Key, h.Value, want.headers[i].Key, want.headers[i].Value)
		}
	}
	return ""
}
