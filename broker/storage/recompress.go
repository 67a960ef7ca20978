package storage

// Broker-side recompression: Kafka's topic config compression.type, when it
// names a codec rather than "producer", makes the broker store every batch
// with that codec (Kafka's LogValidator does this on the way in).
//
// A batch whose codec already matches is not touched, not even
// decompressed, so it is stored byte for byte as produced and fetches of it
// stay zero-copy. Any other batch is decompressed (bounded: see
// InflationLimit), its records are checked to be well formed, and the
// records section is compressed again with the target codec and level.
// Nothing inside the records section changes: offset deltas, timestamp
// deltas, keys, values and headers are carried over as bytes. The header
// keeps every field except batchLength, the codec bits of attributes and
// the CRC, which is computed anew:
//
//	field                 after recompression
//	baseOffset            unchanged (the log assigns it on append)
//	batchLength           61 - 12 + len(new records section)
//	partitionLeaderEpoch  unchanged (the log sets it on append)
//	crc                   CRC-32C of the new bytes 21..end
//	attributes            codec bits 0-2 = target codec; timestamp type,
//	                      transactional, control and delete-horizon bits kept
//	lastOffsetDelta, firstTimestamp, maxTimestamp, producerId,
//	producerEpoch, baseSequence, recordCount: unchanged
//
// so idempotence (sequence checks, the producer table) sees the same batch
// it would have seen without recompression.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// Compression codecs as attribute bits 0-2 number them.
const (
	CodecNone   int8 = 0
	CodecGzip   int8 = 1
	CodecSnappy int8 = 2
	CodecLZ4    int8 = 3
	CodecZstd   int8 = 4
)

// Compression levels (KIP-390: compression.gzip.level,
// compression.lz4.level, compression.zstd.level), with Kafka's ranges and
// defaults. gzip's -1 is the codec's own default; snappy has no levels.
const (
	GzipLevelDefault = -1
	GzipLevelMin     = 1
	GzipLevelMax     = 9
	LZ4LevelDefault  = 9
	LZ4LevelMin      = 1
	LZ4LevelMax      = 17
	ZstdLevelDefault = 3
	ZstdLevelMin     = -131072
	ZstdLevelMax     = 22
)

// DefaultLevel is Kafka's default level for codec (0 for codecs without
// levels).
func DefaultLevel(codec int8) int {
	switch codec {
	case CodecGzip:
		return GzipLevelDefault
	case CodecLZ4:
		return LZ4LevelDefault
	case CodecZstd:
		return ZstdLevelDefault
	}
	return 0
}

// ErrBatchTooLarge reports a compressed batch whose records inflate past
// the decompression limit: a decompression bomb, or a batch far larger
// than the topic allows. It comes wrapped together with ErrCorruptBatch.
var ErrBatchTooLarge = errors.New("storage: batch decompresses past the limit")

// Compression is the codec, and its Kafka level, that a topic stores its
// batches with.
type Compression struct {
	Codec int8
	Level int
}

// MaxInflation is how many times max.message.bytes a produced batch's
// records may decompress to on paths that decompress them (recompression,
// the checks of per-record rules). max.message.bytes limits the batch as
// sent, after compression, so a limit on the inflated size must leave room
// for real compression ratios; 16 covers text and JSON at zstd's or gzip's
// usual ratios, while a 1 KiB batch that would inflate to 1 GiB is refused
// after at most about the limit is allocated.
const MaxInflation = 16

// InflationLimit is the most bytes a produced batch's records may
// decompress to on a topic whose max.message.bytes is maxMessageBytes:
// MaxInflation times it, at least 1 MiB and at most 256 MiB.
func InflationLimit(maxMessageBytes int64) int {
	const floor = 1 << 20
	if maxMessageBytes >= maxDecompressedSize/MaxInflation {
		return maxDecompressedSize
	}
	return max(int(maxMessageBytes)*MaxInflation, floor)
}

// NeedsRecompression reports whether any data batch's codec differs from
// target's.
func NeedsRecompression(headers []BatchHeader, target Compression) bool {
	for i := range headers {
		if !headers[i].IsControl() && headers[i].Compression() != target.Codec {
			return true
		}
	}
	return false
}

// Recompress re-encodes with target's codec and level every data batch of
// a produce's records whose codec differs (records and headers as
// ValidateBatches accepted and returned them); the other batches are copied
// unchanged. It returns the new records and their headers, or records and
// headers themselves when no batch needs it. A batch whose records would
// decompress past limit bytes fails with an error wrapping ErrBatchTooLarge;
// one that does not decompress, or whose records are malformed, with
// ErrCorruptBatch. It never panics.
func Recompress(records []byte, headers []BatchHeader, target Compression, limit int) ([]byte, []BatchHeader, error) {
	if err := checkCover(records, headers); err != nil {
		return nil, nil, err
	}
	if target.Codec < CodecNone || target.Codec > maxCompressionCodec {
		return nil, nil, fmt.Errorf("storage: recompress: unknown codec %d", target.Codec)
	}
	if !NeedsRecompression(headers, target) {
		return records, headers, nil
	}
	out := make([]byte, 0, len(records)+BatchHeaderSize)
	outHeaders := make([]BatchHeader, len(headers))
	pos := 0
	for i, h := range headers {
		batch := records[pos : pos+h.Size()]
		pos += h.Size()
		if h.IsControl() || h.Compression() == target.Codec {
			out = append(out, batch...)
			outHeaders[i] = h
			continue
		}
		var err error
		if out, outHeaders[i], err = appendRecompressed(out, batch, h, target, limit); err != nil {
			return nil, nil, fmt.Errorf("batch %d: %w", i, err)
		}
	}
	return out, outHeaders, nil
}

// appendRecompressed appends batch (whose header is h) re-encoded with
// target to dst and returns the new batch's header.
func appendRecompressed(dst, batch []byte, h BatchHeader, target Compression, limit int) ([]byte, BatchHeader, error) {
	body, err := decompressInto(getBody(), h.Compression(), batch[BatchHeaderSize:], limit)
	if err != nil {
		return nil, h, err
	}
	if h.Compression() != CodecNone {
		defer putBody(body) // compressed again below, then garbage
	}
	if err := checkRecordsSection(body, h.NumRecords); err != nil {
		return nil, h, err
	}
	start := len(dst)
	dst = append(dst, batch[:BatchHeaderSize]...)
	if dst, err = appendCompressed(dst, target.Codec, target.Level, body); err != nil {
		return nil, h, fmt.Errorf("storage: recompress with codec %d level %d: %w", target.Codec, target.Level, err)
	}
	b := dst[start:]
	if len(b)-batchLogOverhead > maxSegmentPosition {
		return nil, h, fmt.Errorf("%w: %w: recompressed batch of %d bytes", ErrCorruptBatch, ErrBatchTooLarge, len(b))
	}
	attrs := uint16(h.Attributes)&^attrCompressionMask | uint16(target.Codec)
	be := binary.BigEndian
	be.PutUint16(b[offsetAttributes:], attrs)
	be.PutUint32(b[offsetLength:], uint32(len(b)-batchLogOverhead))
	be.PutUint32(b[offsetCRC:], batchCRC(b))
	return dst, decodeHeader(b), nil
}

// checkRecordsSection checks that an uncompressed records section holds
// exactly n well-formed records and nothing after them.
func checkRecordsSection(body []byte, n int32) error {
	dec := recordDecoder{buf: body}
	for i := int32(0); i < n; i++ {
		if _, err := dec.record(); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
	}
	if len(dec.buf) != 0 {
		return fmt.Errorf("%w: %d bytes after the last of %d records", ErrCorruptBatch, len(dec.buf), n)
	}
	return nil
}

// bodyBuffers recycles the decompressed records sections of Recompress and
// CheckRecords, which live only until compressed again or checked:
// without them each batch costs a fresh, zeroed buffer of its inflated
// size. Buffers above maxPooledBody are left to the collector.
var bodyBuffers sync.Pool // *[]byte

const maxPooledBody = 8 << 20

func getBody() []byte {
	if b, ok := bodyBuffers.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

func putBody(b []byte) {
	if cap(b) > 0 && cap(b) <= maxPooledBody {
		b = b[:0]
		bodyBuffers.Put(&b)
	}
}

// checkCover checks that headers describe records exactly, batch after
// batch, so slicing records by them cannot go out of range.
func checkCover(records []byte, headers []BatchHeader) error {
	total := 0
	for _, h := range headers {
		if h.Length < minBatchLength {
			return fmt.Errorf("%w: batch length %d smaller than header", ErrCorruptBatch, h.Length)
		}
		total += h.Size()
		if total > len(records) {
			break
		}
	}
	if total != len(records) {
		return fmt.Errorf("%w: %d headers describe %d bytes, have %d", ErrCorruptBatch, len(headers), total, len(records))
	}
	return nil
}
