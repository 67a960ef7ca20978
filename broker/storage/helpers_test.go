package storage

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// testRecord is one record for the test batch encoder.
type testRecord struct {
	key, value []byte
	timestamp  int64
	headers    []RecordHeader
}

// batchSpec describes a v2 batch for makeBatch.
type batchSpec struct {
	codec         int8
	xerialSnappy  bool // frame snappy the way Java clients do
	records       []testRecord
	producerID    int64
	attributes    int16 // extra attribute bits (transactional, control)
	logAppendTime int64 // > 0: LogAppendTime batch with this max timestamp
}

// makeBatch encodes a valid v2 record batch with base offset 0.
func makeBatch(t testing.TB, spec batchSpec) []byte {
	t.Helper()
	if len(spec.records) == 0 {
		t.Fatal("makeBatch: no records")
	}
	first := spec.records[0].timestamp
	maxTs := first
	var body []byte
	for i, r := range spec.records {
		maxTs = max(maxTs, r.timestamp)
		var rec []byte
		rec = append(rec, 0) // attributes
		rec = binary.AppendVarint(rec, r.timestamp-first)
		rec = binary.AppendVarint(rec, int64(i))
		rec = appendVarBytes(rec, r.key)
		rec = appendVarBytes(rec, r.value)
		rec = binary.AppendVarint(rec, int64(len(r.headers)))
		for _, h := range r.headers {
			rec = appendVarBytes(rec, []byte(h.Key))
			rec = appendVarBytes(rec, h.Value)
		}
		body = binary.AppendVarint(body, int64(len(rec)))
		body = append(body, rec...)
	}
	body = compressForTest(t, spec.codec, spec.xerialSnappy, body)

	attrs := int16(spec.codec) | spec.attributes
	if spec.logAppendTime > 0 {
		attrs |= attrTimestampType
		maxTs = spec.logAppendTime
	}
	b := make([]byte, BatchHeaderSize, BatchHeaderSize+len(body))
	be := binary.BigEndian
	be.PutUint64(b[offsetBaseOffset:], 0)
	be.PutUint32(b[offsetLength:], uint32(BatchHeaderSize-batchLogOverhead+len(body)))
	be.PutUint32(b[offsetLeaderEpoch:], 0xffffffff)
	b[offsetMagic] = 2
	be.PutUint16(b[offsetAttributes:], uint16(attrs))
	be.PutUint32(b[offsetLastOffsetDelta:], uint32(len(spec.records)-1))
	be.PutUint64(b[offsetFirstTimestamp:], uint64(first))
	be.PutUint64(b[offsetMaxTimestamp:], uint64(maxTs))
	pid := spec.producerID
	if pid == 0 {
		pid = -1
	}
	be.PutUint64(b[offsetProducerID:], uint64(pid))
	be.PutUint16(b[offsetProducerEpoch:], 0xffff)
	be.PutUint32(b[offsetBaseSequence:], 0xffffffff)
	be.PutUint32(b[offsetNumRecords:], uint32(len(spec.records)))
	b = append(b, body...)
	be.PutUint32(b[offsetCRC:], crc32.Checksum(b[offsetAttributes:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}

func compressForTest(t testing.TB, codec int8, xerial bool, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch codec {
	case 0:
		return data
	case 1:
		w := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(w)
		w.Reset(&buf)
		mustWrite(t, w, data)
	case 2:
		if !xerial {
			return snappy.Encode(nil, data)
		}
		buf.Write(xerialMagic)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1}) // version 1, compatible 1
		for len(data) > 0 {
			n := min(len(data), 100) // small blocks: exercise several
			block := snappy.Encode(nil, data[:n])
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(block))))
			buf.Write(block)
			data = data[n:]
		}
	case 3:
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, w, data)
	case 4:
		return testZstdEncoder(t).EncodeAll(data, nil)
	default:
		t.Fatalf("unknown codec %d", codec)
	}
	return buf.Bytes()
}

var (
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

	zstdEncoderOnce sync.Once
	zstdEncoder     *zstd.Encoder
)

// testZstdEncoder is shared: creating one per batch is slow. EncodeAll is
// safe for concurrent use.
func testZstdEncoder(t testing.TB) *zstd.Encoder {
	zstdEncoderOnce.Do(func() {
		var err error
		if zstdEncoder, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1)); err != nil {
			t.Fatal(err)
		}
	})
	return zstdEncoder
}

func mustWrite(t testing.TB, w io.WriteCloser, data []byte) {
	t.Helper()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// valueBatch is an uncompressed batch of n records with values of size
// bytes, timestamps ts, ts+1, ...
func valueBatch(t testing.TB, n, size int, ts int64) []byte {
	t.Helper()
	records := make([]testRecord, n)
	for i := range records {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		records[i] = testRecord{key: []byte{byte(i)}, value: v, timestamp: ts + int64(i)}
	}
	return makeBatch(t, batchSpec{records: records})
}

// fakeClock is an injected clock for time-based behaviour.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.UnixMilli(1_700_000_000_000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Millis() int64 { return c.Now().UnixMilli() }

// testConfig is DefaultConfig with small segments and index intervals.
func testConfig() Config {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 64 << 10
	cfg.IndexIntervalBytes = 1024
	cfg.FileDeleteDelayMs = 0
	return cfg
}

func openLog(t testing.TB, dir string, cfg Config, clock *fakeClock) *Log {
	t.Helper()
	opts := Options{}
	if clock != nil {
		opts.Now = clock.Now
	}
	l, err := Open(dir, cfg, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func newTestLog(t testing.TB, cfg Config, clock *fakeClock) (*Log, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "topic-0")
	l := openLog(t, dir, cfg, clock)
	t.Cleanup(func() { l.Close() })
	return l, dir
}

// appendRaw validates and appends concatenated batches.
func appendRaw(t testing.TB, l *Log, epoch int32, batches ...[]byte) AppendResult {
	t.Helper()
	res, err := appendWith(l, AppendOptions{LeaderEpoch: epoch}, batches...)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return res
}

func appendWith(l *Log, opts AppendOptions, batches ...[]byte) (AppendResult, error) {
	var buf []byte
	for _, b := range batches {
		buf = append(buf, b...)
	}
	headers, err := ValidateBatches(buf)
	if err != nil {
		return AppendResult{}, err
	}
	return l.Append(buf, headers, opts)
}

// readAll reads every batch from offset to the log end through Read.
func readAll(t testing.TB, l *Log, from int64) []BatchHeader {
	t.Helper()
	var out []BatchHeader
	for offset := from; offset < l.LogEndOffset(); {
		chunk, err := l.Read(offset, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("Read(%d): %v", offset, err)
		}
		data, err := chunk.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		headers := completeBatches(t, data)
		if len(headers) == 0 {
			t.Fatalf("Read(%d) returned no complete batch", offset)
		}
		out = append(out, headers...)
		offset = headers[len(headers)-1].LastOffset() + 1
	}
	return out
}

// abandon drops the log like kill -9 would: files closed, nothing flushed
// or checkpointed (the page cache keeps what was written).
func (l *Log) abandon() {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.closeFilesLocked()
}

// completeBatches validates the whole batches at the start of data; a batch
// cut at the end (as Read may return) is ignored.
func completeBatches(t testing.TB, data []byte) []BatchHeader {
	t.Helper()
	var out []BatchHeader
	for len(data) >= BatchHeaderSize {
		h, err := ParseBatchHeader(data)
		if err != nil {
			t.Fatalf("bad batch header: %v", err)
		}
		if h.Size() > len(data) {
			break
		}
		if _, err := checkBatch(data[:h.Size()]); err != nil {
			t.Fatalf("bad batch: %v", err)
		}
		out = append(out, h)
		data = data[h.Size():]
	}
	return out
}

func fileExists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}
