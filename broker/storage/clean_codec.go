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

var (
	gzipWriterPool = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

	cleanZstdOnce    sync.Once
	cleanZstdEncoder *zstd.Encoder
	cleanZstdInitErr error
)

// compress compresses a batch's records section with codec (0 none,
// 1 gzip, 2 snappy in the xerial framing Java clients read and write,
// 3 lz4 frame, 4 zstd): the inverse of decompress. The cleaner uses it to
// re-encode a batch with the codec it was produced with.
func compress(codec int8, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch codec {
	case 0:
		return data, nil
	case 1:
		w := gzipWriterPool.Get().(*gzip.Writer)
		defer gzipWriterPool.Put(w)
		w.Reset(&buf)
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case 2:
		buf.Write(xerialMagic)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1}) // version 1, compatible with 1
		for rest := data; len(rest) > 0; {
			n := min(len(rest), xerialBlockSize)
			block := snappy.Encode(nil, rest[:n])
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(block))))
			buf.Write(block)
			rest = rest[n:]
		}
	case 3:
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)); err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case 4:
		cleanZstdOnce.Do(func() {
			cleanZstdEncoder, cleanZstdInitErr = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		})
		if cleanZstdInitErr != nil {
			return nil, cleanZstdInitErr
		}
		return cleanZstdEncoder.EncodeAll(data, nil), nil
	default:
		return nil, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, codec)
	}
	return buf.Bytes(), nil
}
