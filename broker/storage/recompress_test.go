package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

var codecNames = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// recompressRecords are records with what a codec could get wrong: null and
// empty keys and values, headers with null values, large and binary values,
// timestamps out of order.
func recompressRecords() []testRecord {
	rng := rand.New(rand.NewPCG(7, 7))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	return []testRecord{
		{key: []byte("k0"), value: []byte("v0"), timestamp: 1_700_000_000_000, headers: []RecordHeader{{Key: "h", Value: []byte("x")}, {Key: "null", Value: nil}}},
		{key: nil, value: bytes.Repeat([]byte("compressible "), 400), timestamp: 1_700_000_000_500},
		{key: []byte{}, value: nil, timestamp: 1_699_999_999_000},
		{key: []byte("bin"), value: random, timestamp: 1_700_000_000_001},
		{key: []byte("last"), value: []byte{}, timestamp: 1_700_000_000_002, headers: []RecordHeader{{Key: "", Value: []byte{}}}},
	}
}

// recompressSource is a batch in codec as a producer sends it, with the
// header fields recompression must keep: producer id, epoch and base
// sequence, transactional and timestamp-type bits.
func recompressSource(t testing.TB, codec int8, xerial bool, attributes int16, logAppendTime int64) []byte {
	t.Helper()
	b := makeBatch(t, batchSpec{codec: codec, xerialSnappy: xerial, records: recompressRecords(), producerID: 4242, attributes: attributes, logAppendTime: logAppendTime})
	return setProducer(b, 7, 1000)
}

// bodyOf is the uncompressed records section of a whole batch.
func bodyOf(t testing.TB, batch []byte) []byte {
	t.Helper()
	h, err := ParseBatchHeader(batch)
	if err != nil {
		t.Fatal(err)
	}
	body, err := decompress(h.Compression(), batch[BatchHeaderSize:h.Size()])
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func mustValidate(t testing.TB, b []byte) []BatchHeader {
	t.Helper()
	headers, err := ValidateBatches(b)
	if err != nil {
		t.Fatalf("ValidateBatches: %v", err)
	}
	return headers
}

// TestRecompressEveryCodecPair re-encodes a batch from every codec to
// every codec. A batch already in the target codec comes back as the very
// same bytes; any other gets the target codec with every other header
// field, the records section byte for byte and so every decoded record
// unchanged, and a valid CRC.
func TestRecompressEveryCodecPair(t *testing.T) {
	sources := []struct {
		name          string
		codec         int8
		xerial        bool
		attributes    int16
		logAppendTime int64
	}{
		{"none", CodecNone, false, 0, 0},
		{"gzip", CodecGzip, false, attrTransactional, 0},
		{"snappy", CodecSnappy, false, 0, 0},
		{"snappy-xerial", CodecSnappy, true, attrTransactional, 0},
		{"lz4", CodecLZ4, false, 0, 1_700_000_009_999},
		{"zstd", CodecZstd, false, attrTransactional, 0},
	}
	for _, src := range sources {
		for target := CodecNone; target <= CodecZstd; target++ {
			t.Run(src.name+"-to-"+codecNames[target], func(t *testing.T) {
				in := recompressSource(t, src.codec, src.xerial, src.attributes, src.logAppendTime)
				stampBatch(in, 500, 3, 0) // as a replica would see it: offsets and epoch set
				inHeaders := mustValidate(t, in)
				original := append([]byte(nil), in...)

				out, outHeaders, err := Recompress(in, inHeaders, Compression{Codec: target, Level: DefaultLevel(target)}, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(in, original) {
					t.Fatal("Recompress modified its input")
				}
				if src.codec == target {
					if &out[0] != &in[0] || len(out) != len(in) || !reflect.DeepEqual(outHeaders, inHeaders) {
						t.Fatal("a batch already in the target codec was not passed through as is")
					}
					return
				}
				if NeedsRecompression(outHeaders, Compression{Codec: target}) {
					t.Fatal("recompressed batch still needs recompression")
				}
				got := mustValidate(t, out) // CRC and lengths
				if !reflect.DeepEqual(got, outHeaders) {
					t.Fatalf("returned headers %+v, the bytes say %+v", outHeaders, got)
				}
				h, w := got[0], inHeaders[0]
				if h.Compression() != target {
					t.Fatalf("codec %d, want %d", h.Compression(), target)
				}
				if h.Attributes&^attrCompressionMask != w.Attributes&^attrCompressionMask {
					t.Fatalf("attributes %#x, want %#x with codec %d", h.Attributes, w.Attributes, target)
				}
				// Every field but length, CRC and codec bits is kept.
				h.Length, h.CRC, h.Attributes = w.Length, w.CRC, w.Attributes
				if h != w {
					t.Fatalf("header %+v, want %+v", h, w)
				}
				if !bytes.Equal(bodyOf(t, out), bodyOf(t, in)) {
					t.Fatal("records section changed")
				}
				wantRecords, err := DecodeRecords(in)
				if err != nil {
					t.Fatal(err)
				}
				gotRecords, err := DecodeRecords(out)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gotRecords, wantRecords) {
					t.Fatalf("records %+v, want %+v", gotRecords, wantRecords)
				}
			})
		}
	}
}

// TestRecompressLevels: every level at the ends of each codec's KIP-390
// range (and the defaults) compresses to something that decodes to the
// same records; levels outside the ranges are refused.
func TestRecompressLevels(t *testing.T) {
	in := recompressSource(t, CodecNone, false, 0, 0)
	headers := mustValidate(t, in)
	want := bodyOf(t, in)
	valid := map[int8][]int{
		CodecGzip: {GzipLevelDefault, GzipLevelMin, 5, GzipLevelMax},
		CodecLZ4:  {LZ4LevelMin, 8, LZ4LevelDefault, 10, LZ4LevelMax},
		CodecZstd: {ZstdLevelMin, -1, 0, 1, ZstdLevelDefault, 6, 10, ZstdLevelMax},
	}
	for codec, levels := range valid {
		for _, level := range levels {
			out, _, err := Recompress(in, headers, Compression{Codec: codec, Level: level}, 1<<20)
			if err != nil {
				t.Fatalf("%s level %d: %v", codecNames[codec], level, err)
			}
			mustValidate(t, out)
			if !bytes.Equal(bodyOf(t, out), want) {
				t.Fatalf("%s level %d: records section changed", codecNames[codec], level)
			}
		}
	}
	invalid := map[int8][]int{
		CodecGzip: {0, -2, 10},
		CodecLZ4:  {0, -1, 18},
		CodecZstd: {ZstdLevelMin - 1, 23},
	}
	for codec, levels := range invalid {
		for _, level := range levels {
			if _, _, err := Recompress(in, headers, Compression{Codec: codec, Level: level}, 1<<20); err == nil {
				t.Errorf("%s level %d accepted", codecNames[codec], level)
			}
		}
	}
	// Higher levels do compress better on compressible data.
	size := func(codec int8, level int) int {
		out, _, err := Recompress(in, headers, Compression{Codec: codec, Level: level}, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return len(out)
	}
	if fast, best := size(CodecGzip, 1), size(CodecGzip, 9); best > fast {
		t.Errorf("gzip level 9 gave %d bytes, level 1 %d", best, fast)
	}
}

// TestRecompressSeveralBatches: a produce of several batches keeps the
// ones already in the target codec byte for byte and re-encodes the rest.
func TestRecompressSeveralBatches(t *testing.T) {
	zstdBatch := recompressSource(t, CodecZstd, false, 0, 0)
	gzipBatch := recompressSource(t, CodecGzip, false, 0, 0)
	in := append(append(append([]byte(nil), zstdBatch...), gzipBatch...), zstdBatch...)
	headers := mustValidate(t, in)
	out, outHeaders, err := Recompress(in, headers, Compression{Codec: CodecZstd, Level: ZstdLevelDefault}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	got := mustValidate(t, out)
	if len(got) != 3 || !reflect.DeepEqual(got, outHeaders) {
		t.Fatalf("headers %+v", got)
	}
	for i, h := range got {
		if h.Compression() != CodecZstd {
			t.Errorf("batch %d codec %d", i, h.Compression())
		}
	}
	if !bytes.Equal(out[:len(zstdBatch)], zstdBatch) || !bytes.Equal(out[len(out)-len(zstdBatch):], zstdBatch) {
		t.Error("zstd batches were not kept byte for byte")
	}
}

// TestRecompressRefusesBadBatches: a batch with a valid CRC whose
// compressed body does not decode, or whose records are malformed or
// miscounted, is refused with ErrCorruptBatch and nothing else.
func TestRecompressRefusesBadBatches(t *testing.T) {
	records := recompressRecords()
	body := bodyOf(t, makeBatch(t, batchSpec{records: records}))
	cases := []struct {
		name  string
		codec int8
		body  []byte
		count int
	}{
		{"garbage gzip", CodecGzip, []byte("not gzip at all"), len(records)},
		{"garbage snappy", CodecSnappy, []byte{0x05, 0xff, 0xff, 0xff}, len(records)},
		{"garbage lz4", CodecLZ4, []byte("not lz4"), len(records)},
		{"garbage zstd", CodecZstd, []byte("not zstd"), len(records)},
		{"truncated gzip", CodecGzip, compressForTest(t, CodecGzip, false, body)[:40], len(records)},
		{"count too high", CodecGzip, compressForTest(t, CodecGzip, false, body), len(records) + 1},
		{"count too low", CodecLZ4, compressForTest(t, CodecLZ4, false, body), len(records) - 1},
		{"malformed record", CodecZstd, compressForTest(t, CodecZstd, false, append([]byte{0x7f}, body...)), len(records)},
		{"unknown codec", 6, body, len(records)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := rawBatch(c.codec, c.body, c.count)
			headers, err := ValidateBatches(b)
			if c.codec > maxCompressionCodec {
				if err == nil {
					t.Fatal("unknown codec validated")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range []int8{CodecNone, CodecZstd, CodecSnappy} {
				if target == c.codec {
					continue
				}
				_, _, err := Recompress(b, headers, Compression{Codec: target, Level: DefaultLevel(target)}, 1<<20)
				if !errors.Is(err, ErrCorruptBatch) || errors.Is(err, ErrBatchTooLarge) {
					t.Fatalf("to %s: got %v, want ErrCorruptBatch", codecNames[target], err)
				}
			}
		})
	}
	// Headers that do not describe the records are refused, not followed.
	good := recompressSource(t, CodecGzip, false, 0, 0)
	headers := mustValidate(t, good)
	if _, _, err := Recompress(good[:len(good)-1], headers, Compression{Codec: CodecZstd, Level: 3}, 1<<20); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("short records: %v", err)
	}
}

// rawBatch wraps an already compressed records section in a v2 batch
// header claiming count records, with a valid CRC.
func rawBatch(codec int8, body []byte, count int) []byte {
	b := make([]byte, BatchHeaderSize, BatchHeaderSize+len(body))
	be := binary.BigEndian
	be.PutUint32(b[offsetLength:], uint32(BatchHeaderSize-batchLogOverhead+len(body)))
	be.PutUint32(b[offsetLeaderEpoch:], 0xffffffff)
	b[offsetMagic] = 2
	be.PutUint16(b[offsetAttributes:], uint16(codec))
	be.PutUint32(b[offsetLastOffsetDelta:], uint32(max(count-1, 0)))
	be.PutUint64(b[offsetFirstTimestamp:], 1_700_000_000_000)
	be.PutUint64(b[offsetMaxTimestamp:], 1_700_000_000_000)
	be.PutUint64(b[offsetProducerID:], ^uint64(0))
	be.PutUint16(b[offsetProducerEpoch:], 0xffff)
	be.PutUint32(b[offsetBaseSequence:], 0xffffffff)
	be.PutUint32(b[offsetNumRecords:], uint32(count))
	b = append(b, body...)
	be.PutUint32(b[offsetCRC:], batchCRC(b))
	return b
}

// bombRecordPrefix is the start of a one-record records section whose
// value is valueLen bytes long; the value and a 0 header count follow.
func bombRecordPrefix(valueLen int) []byte {
	var rec []byte
	rec = append(rec, 0)              // attributes
	rec = binary.AppendVarint(rec, 0) // timestamp delta
	rec = binary.AppendVarint(rec, 0) // offset delta
	rec = binary.AppendVarint(rec, 1) // key length
	rec = append(rec, 'k')            // key
	rec = binary.AppendVarint(rec, int64(valueLen))
	length := int64(len(rec)) + int64(valueLen) + 1 // + header count
	return append(binary.AppendVarint(nil, length), rec...)
}

// streamBomb compresses a one-record section with a valueLen-byte value of
// zeros through w, a megabyte at a time, so the test never holds the
// expansion either.
func streamBomb(t testing.TB, w io.WriteCloser, valueLen int) {
	t.Helper()
	if _, err := w.Write(bombRecordPrefix(valueLen)); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for left := valueLen; left > 0; left -= len(zeros) {
		if _, err := w.Write(zeros[:min(left, len(zeros))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write([]byte{0}); err != nil { // no headers
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// zstdRLEBomb is a zstd frame, written by hand, of RLE blocks that decode
// to n zeros in all (n a multiple of 128 KiB): about 4 bytes per 128 KiB,
// so 1 GiB takes 32 KiB. No content size is declared, so a decoder learns
// the size only by decoding.
func zstdRLEBomb(n int) []byte {
	const block = 128 << 10
	out := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528) // magic
	out = append(out, 0x00)                                  // descriptor: no content size, not single segment
	out = append(out, (17-10)<<3)                            // window 2^17
	for left := n; left > 0; left -= block {
		header := uint32(block)<<3 | 1<<1 // RLE block of 128 KiB
		if left == block {
			header |= 1 // last block
		}
		out = append(out, byte(header), byte(header>>8), byte(header>>16), 0)
	}
	return out
}

// gzipBomb, lz4Bomb: a one-record section with an n-byte value of zeros.
func gzipBomb(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	streamBomb(t, w, n)
	return buf.Bytes()
}

func lz4Bomb(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	streamBomb(t, lz4.NewWriter(&buf), n)
	return buf.Bytes()
}

// snappyBomb is a raw snappy block that declares n decoded bytes and
// holds a few: the declaration alone must be refused.
func snappyBomb(n int) []byte {
	return append(binary.AppendUvarint(nil, uint64(n)), 0x00, 0x00)
}

// xerialFrame frames raw snappy blocks the way Java clients do.
func xerialFrame(blocks ...[]byte) []byte {
	out := append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1)
	for _, b := range blocks {
		out = append(binary.BigEndian.AppendUint32(out, uint32(len(b))), b...)
	}
	return out
}

// TestRecompressRefusesDecompressionBombs: batches that are small as sent
// but inflate far past the limit are refused with ErrBatchTooLarge after
// allocating about the limit, not the expansion (1 GiB for zstd and
// snappy). CheckRecords (the per-record rules' walk) refuses the same batches.
func TestRecompressRefusesDecompressionBombs(t *testing.T) {
	const limit = 4 << 20
	bombs := []struct {
		name     string
		codec    int8
		body     []byte
		inflated int
	}{
		{"gzip", CodecGzip, gzipBomb(t, 256<<20), 256 << 20},
		{"lz4", CodecLZ4, lz4Bomb(t, 256<<20), 256 << 20},
		{"zstd", CodecZstd, zstdRLEBomb(1 << 30), 1 << 30},
		{"snappy", CodecSnappy, snappyBomb(1 << 30), 1 << 30},
		{"snappy-xerial", CodecSnappy, xerialFrame(snappyBomb(1<<29), snappyBomb(1<<29)), 1 << 30},
	}
	for _, bomb := range bombs {
		t.Run(bomb.name, func(t *testing.T) {
			b := rawBatch(bomb.codec, bomb.body, 1)
			if len(b)*200 > bomb.inflated {
				t.Fatalf("bomb of %d bytes is not small next to its %d inflated", len(b), bomb.inflated)
			}
			headers := mustValidate(t, b)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, _, err := Recompress(b, headers, Compression{Codec: CodecNone}, limit)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrBatchTooLarge) || !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("got %v, want ErrBatchTooLarge", err)
			}
			// Cumulative allocations, counting every buffer growth, the
			// codec's own buffers (lz4 4 MiB blocks) and zstd's decoder
			// bound of at least 8 MiB (zstdMinBound).
			allocated := after.TotalAlloc - before.TotalAlloc
			if allocated > 32<<20 {
				t.Fatalf("refusing a %d-byte bomb (%d bytes inflated) allocated %d bytes", len(b), bomb.inflated, allocated)
			}
			t.Logf("%d-byte bomb of %d inflated bytes refused after %d bytes allocated", len(b), bomb.inflated, allocated)
			if _, err := CheckRecords(b, RecordRules{RequireKey: true, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64, MaxDecompressedBytes: limit}); !errors.Is(err, ErrBatchTooLarge) {
				t.Fatalf("CheckRecords: %v", err)
			}
		})
	}
	// Within a limit that fits, such a batch is a plain (if silly) one.
	small := rawBatch(CodecGzip, gzipBomb(t, 8<<20), 1)
	out, _, err := Recompress(small, mustValidate(t, small), Compression{Codec: CodecZstd, Level: 3}, 16<<20)
	if err != nil {
		t.Fatalf("8 MiB of zeros within a 16 MiB limit: %v", err)
	}
	if records, err := DecodeRecords(out); err != nil || len(records) != 1 || len(records[0].Value) != 8<<20 {
		t.Fatalf("recompressed zeros: %v", err)
	}
	// An uncompressed batch larger than the limit is too large as well.
	big := valueBatch(t, 4, 1<<10, 1)
	if _, err := CheckRecords(big, RecordRules{RequireKey: true, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64, MaxDecompressedBytes: 1 << 20}); err != nil {
		t.Fatalf("uncompressed batch: %v", err)
	}
	if _, _, err := Recompress(big, mustValidate(t, big), Compression{Codec: CodecZstd, Level: 3}, 1<<10); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("uncompressed batch over the limit: %v", err)
	}
}

func TestInflationLimit(t *testing.T) {
	for _, c := range []struct {
		maxMessageBytes int64
		want            int
	}{
		{0, 1 << 20},
		{1000, 1 << 20},
		{1048588, 1048588 * MaxInflation},
		{8 << 20, 128 << 20},
		{16 << 20, maxDecompressedSize},
		{1 << 40, maxDecompressedSize},
	} {
		if got := InflationLimit(c.maxMessageBytes); got != c.want {
			t.Errorf("InflationLimit(%d) = %d, want %d", c.maxMessageBytes, got, c.want)
		}
	}
}

// TestDecompressLimitEveryCodec: at exactly the decompressed size a batch
// decodes, one byte below it is ErrBatchTooLarge, for every codec.
func TestDecompressLimitEveryCodec(t *testing.T) {
	body := bodyOf(t, makeBatch(t, batchSpec{records: recompressRecords()}))
	for codec := CodecNone; codec <= CodecZstd; codec++ {
		for _, xerial := range []bool{false, true} {
			if xerial && codec != CodecSnappy {
				continue
			}
			name := fmt.Sprintf("%s-xerial=%v", codecNames[codec], xerial)
			data := compressForTest(t, codec, xerial, body)
			got, err := decompressLimit(codec, data, len(body))
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%s at the limit: %v", name, err)
			}
			if _, err := decompressLimit(codec, data, len(body)-1); !errors.Is(err, ErrBatchTooLarge) {
				t.Fatalf("%s over the limit: %v", name, err)
			}
		}
	}
}

// FuzzRecompress: Recompress never panics on what ValidateBatches accepts;
// when it succeeds the output validates, its headers say what its bytes
// say, every recompressed batch decodes to the records of its source, and
// the result is within the limit.
func FuzzRecompress(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, uint8(4))
		f.Add(s, uint8(0))
	}
	f.Add(rawBatch(CodecZstd, zstdRLEBomb(8<<20), 1), uint8(1))
	f.Add(rawBatch(CodecSnappy, snappyBomb(1<<30), 1), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, target uint8) {
		headers, err := ValidateBatches(b)
		if err != nil {
			return
		}
		codec := int8(target % 5)
		const limit = 1 << 20
		out, outHeaders, err := Recompress(b, headers, Compression{Codec: codec, Level: DefaultLevel(codec)}, limit)
		if err != nil {
			if !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("error %v does not wrap ErrCorruptBatch", err)
			}
			return
		}
		got, err := ValidateBatches(out)
		if err != nil {
			t.Fatalf("recompressed records do not validate: %v", err)
		}
		if !reflect.DeepEqual(got, outHeaders) {
			t.Fatalf("returned headers differ from the bytes")
		}
		pos, outPos := 0, 0
		for i, h := range headers {
			in, o := b[pos:pos+h.Size()], out[outPos:outPos+got[i].Size()]
			pos, outPos = pos+h.Size(), outPos+got[i].Size()
			if h.IsControl() || h.Compression() == codec {
				if !bytes.Equal(in, o) {
					t.Fatalf("batch %d was changed", i)
				}
				continue
			}
			if got[i].Compression() != codec {
				t.Fatalf("batch %d codec %d, want %d", i, got[i].Compression(), codec)
			}
			want, err := DecodeRecords(in)
			if err != nil {
				t.Fatalf("source batch %d does not decode but was recompressed: %v", i, err)
			}
			have, err := DecodeRecords(o)
			if err != nil || !reflect.DeepEqual(have, want) {
				t.Fatalf("batch %d decodes to %+v (%v), want %+v", i, have, err, want)
			}
		}
	})
}

// FuzzDecompressLimit: never panics, never returns more than the limit,
// and refuses only with ErrCorruptBatch.
func FuzzDecompressLimit(f *testing.F) {
	body := bodyOf(f, makeBatch(f, batchSpec{records: recompressRecords()}))
	for codec := CodecNone; codec <= CodecZstd; codec++ {
		f.Add(uint8(codec), compressForTest(f, codec, false, body), uint32(len(body)))
	}
	f.Add(uint8(CodecSnappy), compressForTest(f, CodecSnappy, true, body), uint32(100))
	f.Add(uint8(CodecZstd), zstdRLEBomb(1<<20), uint32(1000))
	f.Fuzz(func(t *testing.T, codec uint8, data []byte, limit uint32) {
		limit %= 4 << 20
		out, err := decompressLimit(int8(codec%6), data, int(limit))
		if err != nil {
			if !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("error %v does not wrap ErrCorruptBatch", err)
			}
			return
		}
		if len(out) > int(limit) {
			t.Fatalf("%d bytes out, limit %d", len(out), limit)
		}
	})
}

// TestDecompressZstdStreamed: frames from a streaming encoder (as Java's
// zstd-jni writes them) declare no content size; the bound read from
// their block headers is never below what they decode to, so they decode
// at exactly their size and not one byte under it, in several frames too.
func TestDecompressZstdStreamed(t *testing.T) {
	var body []byte
	for i := 0; len(body) < 1<<20; i++ {
		body = fmt.Appendf(body, "record %d: some text that compresses %d\n", i, i%97)
	}
	var buf bytes.Buffer
	for frame := 0; frame < 2; frame++ {
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(8<<20))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(body[frame*len(body)/2 : (frame+1)*len(body)/2]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data := buf.Bytes()
	var h zstd.Header
	if err := h.Decode(data); err != nil || h.HasFCS {
		t.Fatalf("streamed frame header %+v (%v): want no content size", h, err)
	}
	if n, ok := zstdDecodedBound(data); !ok || n < len(body) {
		t.Fatalf("bound %d (ok %v) below the %d bytes decoded", n, ok, len(body))
	}
	got, err := decompressLimit(CodecZstd, data, len(body))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("at the limit: %v", err)
	}
	if _, err := decompressLimit(CodecZstd, data, len(body)-1); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("one byte over: %v", err)
	}
	if got, err := decompress(CodecZstd, data); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("without a limit: %v", err)
	}
}
