package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// xerialBlockSize is the uncompressed size of one block of the xerial
// snappy framing, as the Java client writes it.
const xerialBlockSize = 32 << 10

// compress compresses a batch's records section with codec at the codec's
// default level: the inverse of decompress. The cleaner uses it to
// re-encode a batch with the codec it was produced with.
func compress(codec int8, data []byte) ([]byte, error) {
	if codec == CodecNone {
		return data, nil
	}
	return appendCompressed(nil, codec, DefaultLevel(codec), data)
}

// appendCompressed appends data compressed with codec (0 none, 1 gzip,
// 2 snappy in the xerial framing Java clients read and write, 3 lz4 frame,
// 4 zstd) at the given Kafka level (KIP-390; see Compression) to dst. Each
// codec and level has one shared encoder (a pool of them for the
// stream-based gzip and lz4 writers), used by the cleaner and the produce
// path alike.
func appendCompressed(dst []byte, codec int8, level int, data []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return append(dst, data...), nil
	case CodecGzip:
		pool, err := gzipWriterPool(level)
		if err != nil {
			return nil, err
		}
		buf := bytes.NewBuffer(dst)
		w := pool.Get().(*gzip.Writer)
		defer pool.Put(w)
		w.Reset(buf)
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case CodecSnappy:
		dst = append(dst, xerialMagic...)
		dst = append(dst, 0, 0, 0, 1, 0, 0, 0, 1) // version 1, compatible with 1
		for rest := data; len(rest) > 0; {
			n := min(len(rest), xerialBlockSize)
			lengthAt := len(dst)
			dst = append(dst, 0, 0, 0, 0)
			dst = appendSnappyBlock(dst, rest[:n])
			binary.BigEndian.PutUint32(dst[lengthAt:], uint32(len(dst)-lengthAt-4))
			rest = rest[n:]
		}
		return dst, nil
	case CodecLZ4:
		pool, err := lz4WriterPool(level)
		if err != nil {
			return nil, err
		}
		buf := bytes.NewBuffer(dst)
		w := pool.Get().(*lz4.Writer)
		defer pool.Put(w)
		w.Reset(buf)
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case CodecZstd:
		enc, err := sharedZstdEncoder(level)
		if err != nil {
			return nil, err
		}
		return enc.EncodeAll(data, dst), nil
	default:
		return nil, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, codec)
	}
}

// appendSnappyBlock appends the raw snappy encoding of block to dst.
func appendSnappyBlock(dst, block []byte) []byte {
	need := snappy.MaxEncodedLen(len(block))
	if cap(dst)-len(dst) < need {
		grown := make([]byte, len(dst), len(dst)+need+len(dst)/2)
		copy(grown, dst)
		dst = grown
	}
	encoded := snappy.Encode(dst[len(dst):len(dst)+need], block)
	return dst[:len(dst)+len(encoded)]
}

var (
	// gzipEncoders holds a pool per level: index 0 for the default (-1),
	// index n for level n.
	gzipEncoders [GzipLevelMax + 1]sync.Pool
	// lz4Encoders holds a pool per pierrec level: index 0 for lz4.Fast,
	// n for lz4.Level<n>.
	lz4Encoders [10]sync.Pool
	// zstdEncoders holds one encoder per klauspost speed (zstd.SpeedFastest
	// … zstd.SpeedBestCompression); EncodeAll is safe for concurrent use.
	zstdEncoders [zstd.SpeedBestCompression + 1]struct {
		once sync.Once
		enc  *zstd.Encoder
		err  error
	}
)

func gzipWriterPool(level int) (*sync.Pool, error) {
	index := level
	switch {
	case level == GzipLevelDefault:
		index = 0
	case level < GzipLevelMin || level > GzipLevelMax:
		return nil, fmt.Errorf("storage: gzip level %d is not %d..%d or %d", level, GzipLevelMin, GzipLevelMax, GzipLevelDefault)
	}
	gzipPoolsOnce.Do(initGzipPools)
	return &gzipEncoders[index], nil
}

var gzipPoolsOnce sync.Once

func initGzipPools() {
	for i := range gzipEncoders {
		level := i
		if i == 0 {
			level = gzip.DefaultCompression
		}
		gzipEncoders[i].New = func() any {
			w, err := gzip.NewWriterLevel(nil, level)
			if err != nil {
				panic(fmt.Sprintf("storage: gzip level %d: %v", level, err)) // levels are checked above
			}
			return w
		}
	}
}

// lz4Level maps a Kafka lz4 level onto pierrec's: Kafka uses lz4's fast
// compressor at its default level 9 and the high-compression one (LZ4HC)
// at every other level; pierrec has HC levels 1 to 9, so Kafka levels 1-8
// map to them and 10-17 to pierrec's highest.
func lz4Level(level int) (index int, err error) {
	switch {
	case level < LZ4LevelMin || level > LZ4LevelMax:
		return 0, fmt.Errorf("storage: lz4 level %d is not %d..%d", level, LZ4LevelMin, LZ4LevelMax)
	case level == LZ4LevelDefault:
		return 0, nil
	case level > 9:
		return 9, nil
	}
	return level, nil
}

var lz4PoolsOnce sync.Once

func lz4WriterPool(level int) (*sync.Pool, error) {
	index, err := lz4Level(level)
	if err != nil {
		return nil, err
	}
	lz4PoolsOnce.Do(func() {
		levels := [...]lz4.CompressionLevel{lz4.Fast, lz4.Level1, lz4.Level2, lz4.Level3, lz4.Level4, lz4.Level5, lz4.Level6, lz4.Level7, lz4.Level8, lz4.Level9}
		for i := range lz4Encoders {
			pierrec := levels[i]
			lz4Encoders[i].New = func() any {
				w := lz4.NewWriter(nil)
				// 64 KiB independent blocks and no checksums, as
				// Kafka's Lz4BlockOutputStream writes them.
				if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false), lz4.CompressionLevelOption(pierrec)); err != nil {
					panic(fmt.Sprintf("storage: lz4 options: %v", err)) // constant options
				}
				return w
			}
		}
	})
	return &lz4Encoders[index], nil
}

// sharedZstdEncoder returns the shared encoder for a Kafka zstd level (mapped
// onto klauspost's four speeds by zstd.EncoderLevelFromZstd).
func sharedZstdEncoder(level int) (*zstd.Encoder, error) {
	if level < ZstdLevelMin || level > ZstdLevelMax {
		return nil, fmt.Errorf("storage: zstd level %d is not %d..%d", level, ZstdLevelMin, ZstdLevelMax)
	}
	speed := zstd.EncoderLevelFromZstd(level)
	e := &zstdEncoders[speed]
	e.once.Do(func() {
		e.enc, e.err = zstd.NewWriter(nil, zstd.WithEncoderLevel(speed))
	})
	return e.enc, e.err
}
