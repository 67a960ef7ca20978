package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxDecompressedSize bounds how much a single batch may inflate to, so a
// hostile batch cannot exhaust memory. The produce path sets a tighter
// bound from the topic's max.message.bytes (InflationLimit).
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
	records, _, err := DecodeRecordsInto(nil, nil, batch)
	if err != nil {
		return nil, err
	}
	return records, nil
}

// DecodeRecordsInto is DecodeRecords appending the records to dst, and
// decompressing a compressed batch into the spare capacity of arena
// (arena[len(arena):cap(arena)]) when it is large enough, into a new
// buffer otherwise. It returns arena grown by what it used there. The
// records alias batch (uncompressed) or the decompressed section: arena
// must outlive them.
func DecodeRecordsInto(dst []Record, arena, batch []byte) ([]Record, []byte, error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return dst, arena, err
	}
	if h.Size() > len(batch) {
		return dst, arena, fmt.Errorf("%w: batch of %d bytes but only %d available", ErrCorruptBatch, h.Size(), len(batch))
	}
	spare := arena[len(arena):]
	body, err := decompressInto(spare, h.Compression(), batch[BatchHeaderSize:h.Size()], maxDecompressedSize)
	if err != nil {
		return dst, arena, err
	}
	if len(body) > 0 && cap(spare) > 0 && unsafe.SliceData(body) == unsafe.SliceData(spare) {
		arena = arena[:len(arena)+len(body)]
	}
	if h.NumRecords < 0 {
		return dst, arena, fmt.Errorf("%w: negative record count %d", ErrCorruptBatch, h.NumRecords)
	}
	// Every record takes at least 7 bytes; never trust the count for capacity.
	dst = slices.Grow(dst, min(int(h.NumRecords), len(body)/7))
	first := len(dst)
	dec := recordDecoder{buf: body}
	for i := int32(0); i < h.NumRecords; i++ {
		rec, err := dec.record()
		if err != nil {
			return dst[:first], arena, fmt.Errorf("record %d: %w", i, err)
		}
		rec.Offset += h.BaseOffset
		if h.TimestampType() == 1 {
			rec.Timestamp = h.MaxTimestamp
		} else {
			rec.Timestamp += h.FirstTimestamp
		}
		dst = append(dst, rec)
	}
	if len(dec.buf) != 0 {
		return dst[:first], arena, fmt.Errorf("%w: %d bytes after the last record", ErrCorruptBatch, len(dec.buf))
	}
	return dst, arena, nil
}

// DecodedSizeHint is about how many bytes the records section of batch
// takes once decompressed, read from the codec's headers without
// decompressing, as decompressInto will ask for it: exact for snappy, an
// upper bound for zstd, the gzip trailer's size (at least 512) and one,
// and four times the compressed size where the stream does not say (lz4,
// malformed input). 0 for an uncompressed batch, which decodes in place,
// and for one that says it inflates past storage's bound (it fails to
// decode).
func DecodedSizeHint(batch []byte) int {
	n := decodedSizeHint(batch)
	if n > maxDecompressedSize {
		return 0
	}
	return n
}

func decodedSizeHint(batch []byte) int {
	h, err := ParseBatchHeader(batch)
	if err != nil || h.Size() > len(batch) || h.Compression() == CodecNone {
		return 0
	}
	data := batch[BatchHeaderSize:h.Size()]
	guess := 4 * len(data)
	switch h.Compression() {
	case CodecSnappy:
		if !bytes.HasPrefix(data, xerialMagic) {
			if n, err := snappyBlockLen(data, maxDecompressedSize+1); err == nil {
				return n
			}
			return guess
		}
		total := 0
		if forEachXerialBlock(data, func(block []byte) error {
			n, err := snappyBlockLen(block, maxDecompressedSize+1-total)
			total += n
			return err
		}) == nil {
			return total
		}
	case CodecZstd:
		if n, ok := zstdDecodedBound(data); ok {
			return n
		}
	case CodecGzip:
		if len(data) >= 18 {
			return max(512, int(binary.LittleEndian.Uint32(data[len(data)-4:]))) + 1
		}
	}
	return guess
}

// decompress returns the uncompressed records section of a batch, at most
// maxDecompressedSize bytes of it.
func decompress(codec int8, data []byte) ([]byte, error) {
	return decompressLimit(codec, data, maxDecompressedSize)
}

// decompressLimit is decompressInto with a new buffer.
func decompressLimit(codec int8, data []byte, limit int) ([]byte, error) {
	return decompressInto(nil, codec, data, limit)
}

// decompressInto returns the uncompressed records section of a batch,
// decoded into dst's capacity when it is large enough (dst's contents are
// overwritten) and into a new buffer otherwise; an uncompressed section is
// data itself. A section that would inflate past limit bytes fails with an
// error wrapping ErrBatchTooLarge (and ErrCorruptBatch) before much more
// than limit bytes are allocated: gzip and lz4 streams are read up to the
// limit, snappy blocks declare their size up front, and zstd frames are
// decoded into a buffer of at most limit+1 bytes that the decoder may not
// grow. Malformed input wraps ErrCorruptBatch; it never panics.
func decompressInto(dst []byte, codec int8, data []byte, limit int) ([]byte, error) {
	var (
		out []byte
		err error
	)
	switch codec {
	case CodecNone:
		if len(data) > limit {
			return nil, fmt.Errorf("%w: %w: %d bytes of records, limit %d", ErrCorruptBatch, ErrBatchTooLarge, len(data), limit)
		}
		return data, nil
	case CodecGzip:
		out, err = decompressGzip(dst, data, limit)
	case CodecSnappy:
		out, err = decompressSnappy(dst, data, limit)
	case CodecLZ4:
		out, err = decompressLZ4(dst, data, limit)
	case CodecZstd:
		out, err = decompressZstd(dst, data, limit)
	default:
		return nil, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, codec)
	}
	if errors.Is(err, ErrBatchTooLarge) {
		return nil, fmt.Errorf("%w: %w: codec %d inflates past %d bytes", ErrCorruptBatch, ErrBatchTooLarge, codec, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: codec %d: %v", ErrCorruptBatch, codec, err)
	}
	return out, nil
}

var (
	gzipReaders sync.Pool // *gzip.Reader
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
)

func decompressGzip(dst, data []byte, limit int) ([]byte, error) {
	src := bytes.NewReader(data)
	r, _ := gzipReaders.Get().(*gzip.Reader)
	if r == nil {
		var err error
		if r, err = gzip.NewReader(src); err != nil {
			return nil, err
		}
	} else if err := r.Reset(src); err != nil {
		gzipReaders.Put(r)
		return nil, err
	}
	defer gzipReaders.Put(r)
	hint := 4 * len(data)
	if len(data) >= 18 {
		// ISIZE, the trailer's uncompressed size (mod 2^32) of the last
		// member: exact for the single-member streams clients write.
		hint = int(binary.LittleEndian.Uint32(data[len(data)-4:]))
	}
	return readAllLimited(dst, r, limit, hint)
}

func decompressLZ4(dst, data []byte, limit int) ([]byte, error) {
	r := lz4Readers.Get().(*lz4.Reader)
	defer lz4Readers.Put(r)
	r.Reset(bytes.NewReader(data))
	return readAllLimited(dst, r, limit, 2*len(data))
}

// withCapacity is dst emptied if it can hold n bytes, else a new buffer
// that can.
func withCapacity(dst []byte, n int) []byte {
	if cap(dst) >= n {
		return dst[:0]
	}
	return make([]byte, 0, n)
}

// readAllLimited reads a decompressing stream to its end into dst (see
// withCapacity), refusing output larger than limit. The buffer starts at
// sizeHint (a guess of the output size; one byte more so that the end is
// seen without growing) and doubles as the output grows, so a bomb costs
// at most about twice the limit in allocations, whatever it would expand
// to.
func readAllLimited(dst []byte, r io.Reader, limit, sizeHint int) ([]byte, error) {
	out := withCapacity(dst, min(limit, max(512, sizeHint))+1)
	for {
		if len(out) == cap(out) {
			grown := make([]byte, len(out), min(2*cap(out), limit+1))
			copy(grown, out)
			out = grown
		}
		n, err := r.Read(out[len(out):min(cap(out), limit+1)])
		out = out[:len(out)+n]
		if len(out) > limit {
			return nil, ErrBatchTooLarge
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// decompressSnappy handles both raw snappy blocks and the xerial framing
// (magic, version, compatible version, then length-prefixed raw blocks).
// Every block declares its decoded length, so the output is checked
// against limit and allocated once, before anything is decoded.
func decompressSnappy(dst, data []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialMagic) {
		n, err := snappyBlockLen(data, limit)
		if err != nil {
			return nil, err
		}
		return decodeSnappyBlock(withCapacity(dst, n), data)
	}
	total := 0
	err := forEachXerialBlock(data, func(block []byte) error {
		n, err := snappyBlockLen(block, limit-total)
		total += n
		return err
	})
	if err != nil {
		return nil, err
	}
	out := withCapacity(dst, total)
	err = forEachXerialBlock(data, func(block []byte) error {
		var err error
		out, err = decodeSnappyBlock(out, block)
		return err
	})
	return out, err
}

// forEachXerialBlock calls fn with each raw snappy block of a xerial
// framed stream, in order.
func forEachXerialBlock(data []byte, fn func(block []byte) error) error {
	const xerialHeaderSize = 16 // magic(8) + version(4) + compatible version(4)
	if len(data) < xerialHeaderSize {
		return errors.New("short xerial snappy header")
	}
	for rest := data[xerialHeaderSize:]; len(rest) > 0; {
		if len(rest) < 4 {
			return errors.New("short xerial snappy block length")
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return errors.New("xerial snappy block overruns the batch")
		}
		if err := fn(rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// snappyBlockLen is the decoded length a raw snappy block declares,
// ErrBatchTooLarge if it is more than limit.
func snappyBlockLen(block []byte, limit int) (int, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > limit {
		return 0, ErrBatchTooLarge
	}
	return n, nil
}

// decodeSnappyBlock decodes one raw snappy block into dst's spare
// capacity, which must hold the block's declared length.
func decodeSnappyBlock(dst, block []byte) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if n > cap(dst)-len(dst) {
		return nil, errors.New("snappy block longer than declared")
	}
	decoded, err := snappy.Decode(dst[len(dst):len(dst)+n], block)
	if err != nil {
		return nil, err
	}
	return dst[:len(dst)+len(decoded)], nil
}

// zstdDecoders holds one shared decoder per memory bound (a power of two,
// at least zstdMinBound, which also bounds the window a frame may
// declare). DecodeAll is safe for concurrent use; these decoders stop at
// cap(dst) (WithDecodeAllCapLimit), at once when a frame declares a larger
// content size.
var zstdDecoders sync.Map // int → *zstd.Decoder

// zstdMinBound is the smallest decoder bound. klauspost's decoder also
// refuses frames whose window is larger than its bound, and streaming
// encoders (zstd-jni in Java clients) declare their level's window, up to
// 8 MiB at level 19, whatever the batch size.
const zstdMinBound = 8 << 20

func zstdDecoderFor(limit int) (*zstd.Decoder, error) {
	bound := zstdMinBound
	for bound < limit {
		bound <<= 1
	}
	if d, ok := zstdDecoders.Load(bound); ok {
		return d.(*zstd.Decoder), nil
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(uint64(bound)), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return nil, err
	}
	if prev, loaded := zstdDecoders.LoadOrStore(bound, d); loaded {
		d.Close()
		return prev.(*zstd.Decoder), nil
	}
	return d, nil
}

func decompressZstd(dst, data []byte, limit int) ([]byte, error) {
	d, err := zstdDecoderFor(limit)
	if err != nil {
		return nil, err
	}
	// The decoders decode at most cap(dst) bytes, so dst is sized once,
	// up front, to what the frames can decode to or one byte past the
	// limit, whichever is less: the output never grows (klauspost grows
	// it block by block otherwise, allocating about five times the final
	// size on the way) and a bomb costs one allocation of about limit.
	size := limit + 1
	if n, ok := zstdDecodedBound(data); ok {
		size = min(n, size)
	}
	out, err := d.DecodeAll(data, withCapacity(dst, size))
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || (err == nil && len(out) > limit) {
		return nil, ErrBatchTooLarge
	}
	return out, err
}

// zstdDecodedBound is an upper bound of what zstd frames decode to, read
// from their headers and block headers without decoding: a frame's
// declared content size, or else the sum over its blocks of a raw or RLE
// block's size and 128 KiB (the most a block decodes to) for a compressed
// one. ok is false when the frames cannot be walked; the decoder then
// finds out why.
func zstdDecodedBound(data []byte) (n int, ok bool) {
	const maxBlock = 128 << 10
	for len(data) > 0 {
		var h zstd.Header
		if err := h.Decode(data); err != nil || h.HeaderSize > len(data) {
			return 0, false
		}
		if h.Skippable {
			if uint64(h.HeaderSize)+uint64(h.SkippableSize) > uint64(len(data)) {
				return 0, false
			}
			data = data[h.HeaderSize+int(h.SkippableSize):]
			continue
		}
		data = data[h.HeaderSize:]
		frame := 0
		for last := false; !last; {
			if len(data) < 3 {
				return 0, false
			}
			bh := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16
			size := int(bh >> 3)
			last = bh&1 != 0
			data = data[3:]
			switch (bh >> 1) & 3 {
			case 0: // raw
				frame += size
			case 1: // RLE: one byte, repeated size times
				frame, size = frame+size, 1
			case 2: // compressed
				frame += maxBlock
			default:
				return 0, false
			}
			if size > len(data) {
				return 0, false
			}
			data = data[size:]
		}
		if h.HasFCS && h.FrameContentSize < uint64(frame) {
			frame = int(h.FrameContentSize)
		}
		if h.HasCheckSum {
			if len(data) < 4 {
				return 0, false
			}
			data = data[4:]
		}
		if n += frame; n > maxDecompressedSize {
			return n, true
		}
	}
	return n, true
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
