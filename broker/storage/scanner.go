package storage

import (
	"fmt"
	"io"
	"os"
)

// scanChunkSize is how much of a log file recovery reads at a time.
const scanChunkSize = 1 << 20

// batchScanner reads consecutive batches from a log file in large chunks
// and validates each one fully (lengths, magic, CRC).
type batchScanner struct {
	file   *os.File
	pos    int64 // next batch
	end    int64 // file size
	buf    []byte
	bufPos int64 // file position of buf[0]
}

// next returns the next valid batch's header and position, io.EOF at a
// clean end of file, or an error wrapping ErrCorruptBatch for a torn or
// corrupt batch.
func (sc *batchScanner) next() (BatchHeader, int64, error) {
	if sc.pos >= sc.end {
		return BatchHeader{}, 0, io.EOF
	}
	if sc.end-sc.pos < BatchHeaderSize {
		return BatchHeader{}, 0, fmt.Errorf("%w: %d bytes at %d, too few for a batch header", ErrCorruptBatch, sc.end-sc.pos, sc.pos)
	}
	head, err := sc.bytes(sc.pos, BatchHeaderSize)
	if err != nil {
		return BatchHeader{}, 0, err
	}
	h, err := ParseBatchHeader(head)
	if err != nil {
		return h, 0, err
	}
	if sc.pos+int64(h.Size()) > sc.end {
		return h, 0, fmt.Errorf("%w: batch at %d of %d bytes runs past the end of the file", ErrCorruptBatch, sc.pos, h.Size())
	}
	batch, err := sc.bytes(sc.pos, h.Size())
	if err != nil {
		return h, 0, err
	}
	if h, err = checkBatch(batch); err != nil {
		return h, 0, err
	}
	at := sc.pos
	sc.pos += int64(h.Size())
	return h, at, nil
}

// bytes returns n bytes at pos, reading a new chunk if the buffer lacks them.
func (sc *batchScanner) bytes(pos int64, n int) ([]byte, error) {
	if pos >= sc.bufPos && pos+int64(n) <= sc.bufPos+int64(len(sc.buf)) {
		return sc.buf[pos-sc.bufPos:][:n], nil
	}
	size := int(min(max(int64(n), scanChunkSize), sc.end-pos))
	if cap(sc.buf) < size {
		sc.buf = make([]byte, size)
	}
	sc.buf = sc.buf[:size]
	if _, err := sc.file.ReadAt(sc.buf, pos); err != nil {
		sc.buf = sc.buf[:0]
		return nil, fmt.Errorf("storage: read %s at %d: %w", sc.file.Name(), pos, err)
	}
	sc.bufPos = pos
	return sc.buf[:n], nil
}
