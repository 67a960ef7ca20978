package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// BatchHeaderSize is the size of the fixed header of a v2 record batch.
const BatchHeaderSize = 61

// Byte offsets of the header fields inside a v2 record batch; see doc.go.
const (
	offsetBaseOffset      = 0
	offsetLength          = 8
	offsetLeaderEpoch     = 12
	offsetMagic           = 16
	offsetCRC             = 17
	offsetAttributes      = 21
	offsetLastOffsetDelta = 23
	offsetFirstTimestamp  = 27
	offsetMaxTimestamp    = 35
	offsetProducerID      = 43
	offsetProducerEpoch   = 51
	offsetBaseSequence    = 53
	offsetNumRecords      = 57

	// batchLogOverhead is the part of a batch before and including the
	// batchLength field: Size() == batchLogOverhead + Length.
	batchLogOverhead = 12
	// minBatchLength is the smallest legal batchLength: a header without records.
	minBatchLength = BatchHeaderSize - batchLogOverhead

	attrCompressionMask = 0x07
	attrTimestampType   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20

	// maxCompressionCodec is zstd, the highest codec Kafka defines.
	maxCompressionCodec = 4
)

var (
	// ErrCorruptBatch reports a record batch whose CRC or lengths are wrong.
	ErrCorruptBatch = CorruptionErrorf("storage: corrupt record batch")
	// ErrUnsupportedMagic reports a record batch whose magic is not 2.
	ErrUnsupportedMagic = errors.New("storage: unsupported record batch magic")
)

// BatchHeader is the fixed 61-byte header of a v2 record batch.
type BatchHeader struct {
	BaseOffset           int64
	Length               int32 // batchLength field: bytes after this field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Size is the total number of bytes of the batch on disk.
func (h BatchHeader) Size() int { return batchLogOverhead + int(h.Length) }

// LastOffset is the offset of the last record of the batch.
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Compression is the compression codec: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.
func (h BatchHeader) Compression() int8 { return int8(h.Attributes & attrCompressionMask) }

// TimestampType is 0 for CreateTime and 1 for LogAppendTime (attribute bit 3).
func (h BatchHeader) TimestampType() int8 {
	if h.Attributes&attrTimestampType != 0 {
		return 1
	}
	return 0
}

// IsTransactional reports attribute bit 4.
func (h BatchHeader) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

// IsControl reports attribute bit 5.
func (h BatchHeader) IsControl() bool { return h.Attributes&attrControl != 0 }

// ParseBatchHeader decodes the header at the start of b without checking the
// CRC. It fails with ErrCorruptBatch when b is shorter than BatchHeaderSize or
// the batchLength field is smaller than a header, and with ErrUnsupportedMagic
// when the magic byte (at the same position in every message format) is not 2.
func ParseBatchHeader(b []byte) (BatchHeader, error) {
	if len(b) < BatchHeaderSize {
		if len(b) > offsetMagic && b[offsetMagic] != 2 {
			return BatchHeader{}, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, int8(b[offsetMagic]))
		}
		return BatchHeader{}, fmt.Errorf("%w: header needs %d bytes, have %d", ErrCorruptBatch, BatchHeaderSize, len(b))
	}
	h := decodeHeader(b)
	if h.Magic != 2 {
		return h, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, h.Magic)
	}
	if h.Length < minBatchLength {
		return h, fmt.Errorf("%w: batch length %d smaller than header", ErrCorruptBatch, h.Length)
	}
	return h, nil
}

// decodeHeader decodes the fields of a header; b must hold BatchHeaderSize bytes.
func decodeHeader(b []byte) BatchHeader {
	be := binary.BigEndian
	return BatchHeader{
		BaseOffset:           int64(be.Uint64(b[offsetBaseOffset:])),
		Length:               int32(be.Uint32(b[offsetLength:])),
		PartitionLeaderEpoch: int32(be.Uint32(b[offsetLeaderEpoch:])),
		Magic:                int8(b[offsetMagic]),
		CRC:                  be.Uint32(b[offsetCRC:]),
		Attributes:           int16(be.Uint16(b[offsetAttributes:])),
		LastOffsetDelta:      int32(be.Uint32(b[offsetLastOffsetDelta:])),
		FirstTimestamp:       int64(be.Uint64(b[offsetFirstTimestamp:])),
		MaxTimestamp:         int64(be.Uint64(b[offsetMaxTimestamp:])),
		ProducerID:           int64(be.Uint64(b[offsetProducerID:])),
		ProducerEpoch:        int16(be.Uint16(b[offsetProducerEpoch:])),
		BaseSequence:         int32(be.Uint32(b[offsetBaseSequence:])),
		NumRecords:           int32(be.Uint32(b[offsetNumRecords:])),
	}
}

// batchCRC computes the CRC-32C of a whole batch: everything from the
// attributes field to the end.
func batchCRC(batch []byte) uint32 {
	return CRC32C(batch[offsetAttributes:])
}

// checkBatch validates the batch at the start of b (which may hold more
// bytes after it) and returns its header. It never panics.
func checkBatch(b []byte) (BatchHeader, error) {
	h, err := ParseBatchHeader(b)
	if err != nil {
		return h, err
	}
	if int64(h.Size()) > int64(len(b)) {
		return h, fmt.Errorf("%w: batch of %d bytes but only %d available", ErrCorruptBatch, h.Size(), len(b))
	}
	if h.LastOffsetDelta < 0 {
		return h, fmt.Errorf("%w: negative last offset delta %d", ErrCorruptBatch, h.LastOffsetDelta)
	}
	if h.NumRecords < 0 {
		return h, fmt.Errorf("%w: negative record count %d", ErrCorruptBatch, h.NumRecords)
	}
	if h.Compression() > maxCompressionCodec {
		return h, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, h.Compression())
	}
	if got := batchCRC(b[:h.Size()]); got != h.CRC {
		return h, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptBatch, h.CRC, got)
	}
	return h, nil
}

// ValidateBatches splits a produce request's Records bytes into batches and
// checks each: magic 2, batchLength consistent with the buffer, a
// non-negative lastOffsetDelta and record count, a known compression codec
// and a matching CRC-32C. The input must be non-empty and hold nothing after
// the last batch. It returns the headers in order and never panics.
func ValidateBatches(b []byte) ([]BatchHeader, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: no record batches", ErrCorruptBatch)
	}
	headers := make([]BatchHeader, 0, 1)
	for pos := 0; pos < len(b); {
		h, err := checkBatch(b[pos:])
		if err != nil {
			return nil, fmt.Errorf("batch %d at byte %d: %w", len(headers), pos, err)
		}
		headers = append(headers, h)
		pos += h.Size()
	}
	return headers, nil
}

// stampBatch rewrites, in place, the fields the broker assigns on append.
// baseOffset and leaderEpoch lie outside the CRC; a logAppendTime > 0 also
// sets maxTimestamp and the timestamp-type attribute and recomputes the CRC.
func stampBatch(batch []byte, baseOffset int64, leaderEpoch int32, logAppendTime int64) {
	be := binary.BigEndian
	be.PutUint64(batch[offsetBaseOffset:], uint64(baseOffset))
	be.PutUint32(batch[offsetLeaderEpoch:], uint32(leaderEpoch))
	if logAppendTime > 0 {
		attrs := be.Uint16(batch[offsetAttributes:]) | attrTimestampType
		be.PutUint16(batch[offsetAttributes:], attrs)
		be.PutUint64(batch[offsetMaxTimestamp:], uint64(logAppendTime))
		be.PutUint32(batch[offsetCRC:], batchCRC(batch))
	}
}
