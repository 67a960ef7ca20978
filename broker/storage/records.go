package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxDecompressedSize bounds how much a single batch may inflate to, so a
// hostile batch cannot exhaust memory.
const maxDecompressedSize = 256 << 20

// xerialMagic opens the framed snappy stream that Java clients produce.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// Record is one decoded record of a batch (offset is absolute).
type Record struct {
	Offset    int64
	Timestamp int64
	Key       []byte // nil for a null key
	Value     []byte // nil for a null value
	Headers   []RecordHeader
}

// RecordHeader is one header of a record.
type RecordHeader struct {
	Key   string
	Value []byte
}

// DecodeRecords decompresses and decodes the records of one whole batch
// (batch must start with the batch header and hold at least the full batch).
// It checks the header's magic and lengths but not the CRC. Records of a
// LogAppendTime batch all carry the batch's MaxTimestamp. It never panics on
// arbitrary input; malformed input yields an error wrapping ErrCorruptBatch.
func DecodeRecords(batch []byte) ([]Record, error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return nil, err
	}
	if h.Size() > len(batch) {
		return nil, fmt.Errorf("%w: batch of %d bytes but only %d available", ErrCorruptBatch, h.Size(), len(batch))
	}
	body, err := decompress(h.Compression(), batch[BatchHeaderSize:h.Size()])
	if err != nil {
		return nil, err
	}
	if h.NumRecords < 0 {
		return nil, fmt.Errorf("%w: negative record count %d", ErrCorruptBatch, h.NumRecords)
	}
	// Every record takes at least 7 bytes; never trust the count for capacity.
	records := make([]Record, 0, min(int(h.NumRecords), len(body)/7))
	dec := recordDecoder{buf: body}
	for i := int32(0); i < h.NumRecords; i++ {
		rec, err := dec.record()
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		rec.Offset += h.BaseOffset
		if h.TimestampType() == 1 {
			rec.Timestamp = h.MaxTimestamp
		} else {
			rec.Timestamp += h.FirstTimestamp
		}
		records = append(records, rec)
	}
	if len(dec.buf) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last record", ErrCorruptBatch, len(dec.buf))
	}
	return records, nil
}

// decompress returns the uncompressed records section of a batch.
func decompress(codec int8, data []byte) ([]byte, error) {
	var (
		out []byte
		err error
	)
	switch codec {
	case 0:
		return data, nil
	case 1:
		out, err = readAllLimited(func() (io.Reader, error) { return gzip.NewReader(bytes.NewReader(data)) })
	case 2:
		out, err = decompressSnappy(data)
	case 3:
		out, err = readAllLimited(func() (io.Reader, error) { return lz4.NewReader(bytes.NewReader(data)), nil })
	case 4:
		out, err = decompressZstd(data)
	default:
		return nil, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, codec)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: codec %d: %v", ErrCorruptBatch, codec, err)
	}
	return out, nil
}

// readAllLimited reads a decompressing stream to its end, refusing output
// larger than maxDecompressedSize.
func readAllLimited(open func() (io.Reader, error)) ([]byte, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressedSize+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxDecompressedSize {
		return nil, errors.New("decompressed batch too large")
	}
	return out, nil
}

// decompressSnappy handles both raw snappy blocks and the xerial framing
// (magic, version, compatible version, then length-prefixed raw blocks).
func decompressSnappy(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialMagic) {
		return decodeSnappyBlock(nil, data)
	}
	const xerialHeaderSize = 16 // magic(8) + version(4) + compatible version(4)
	if len(data) < xerialHeaderSize {
		return nil, errors.New("short xerial snappy header")
	}
	var out []byte
	for rest := data[xerialHeaderSize:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, errors.New("short xerial snappy block length")
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return nil, errors.New("xerial snappy block overruns the batch")
		}
		var err error
		if out, err = decodeSnappyBlock(out, rest[:n]); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return out, nil
}

// decodeSnappyBlock appends the decoding of one raw snappy block to dst.
func decodeSnappyBlock(dst, block []byte) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if n < 0 || len(dst)+n > maxDecompressedSize {
		return nil, errors.New("decompressed batch too large")
	}
	decoded, err := snappy.Decode(make([]byte, n), block)
	if err != nil {
		return nil, err
	}
	return append(dst, decoded...), nil
}

var (
	zstdOnce    sync.Once
	zstdDecoder *zstd.Decoder
	zstdInitErr error
)

// decompressZstd uses one shared decoder; DecodeAll is safe for concurrent use.
func decompressZstd(data []byte) ([]byte, error) {
	zstdOnce.Do(func() {
		zstdDecoder, zstdInitErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(maxDecompressedSize))
	})
	if zstdInitErr != nil {
		return nil, zstdInitErr
	}
	return zstdDecoder.DecodeAll(data, nil)
}

// recordDecoder reads the v2 record encoding (see doc.go) from buf.
type recordDecoder struct {
	buf []byte
	err error
}

func (d *recordDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorruptBatch, fmt.Sprintf(format, args...))
	}
}

func (d *recordDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// bytesField reads a varint length and that many bytes; length -1 is null.
func (d *recordDecoder) bytesField(what string) []byte {
	n := d.varint()
	if d.err != nil {
		return nil
	}
	if n == -1 {
		return nil
	}
	if n < -1 || n > int64(len(d.buf)) {
		d.fail("%s length %d with %d bytes left", what, n, len(d.buf))
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *recordDecoder) record() (Record, error) {
	length := d.varint()
	if d.err != nil {
		return Record{}, d.err
	}
	if length < 0 || length > int64(len(d.buf)) {
		return Record{}, fmt.Errorf("%w: record length %d with %d bytes left", ErrCorruptBatch, length, len(d.buf))
	}
	rest := d.buf[length:]
	d.buf = d.buf[:length]
	if len(d.buf) < 1 {
		return Record{}, fmt.Errorf("%w: empty record", ErrCorruptBatch)
	}
	d.buf = d.buf[1:] // record attributes: unused
	var rec Record
	rec.Timestamp = d.varint()
	rec.Offset = int64(int32(d.varint()))
	rec.Key = d.bytesField("key")
	rec.Value = d.bytesField("value")
	numHeaders := d.varint()
	if d.err == nil && (numHeaders < 0 || numHeaders > int64(len(d.buf))) {
		d.fail("header count %d", numHeaders)
	}
	for i := int64(0); i < numHeaders && d.err == nil; i++ {
		key := d.bytesField("header key")
		value := d.bytesField("header value")
		rec.Headers = append(rec.Headers, RecordHeader{Key: string(key), Value: value})
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail("%d bytes left inside record", len(d.buf))
	}
	if d.err != nil {
		return Record{}, d.err
	}
	d.buf = rest
	return rec, nil
}
