package storage

import "fmt"

// ForEachRecord calls fn with the key and value of every record of a
// produce's batches (back to back, as ValidateBatches accepted them), in
// order; index counts records from 0 across the batches, as
// RecordViolation.Index does. A null key or value is nil, an empty one a
// non-nil empty slice. The slices alias records (or, for a compressed
// batch, a pooled buffer): fn must not keep them. Control batches are
// skipped. A batch inflating past limit bytes fails with ErrBatchTooLarge
// (0: storage's absolute bound); malformed input returns an error wrapping
// ErrCorruptBatch; it never panics. An error from fn stops the walk and is
// returned as it is.
func ForEachRecord(records []byte, limit int, fn func(index int32, key, value []byte) error) error {
	if limit <= 0 || limit > maxDecompressedSize {
		limit = maxDecompressedSize
	}
	var index int32
	for pos := 0; pos < len(records); {
		h, err := ParseBatchHeader(records[pos:])
		if err != nil {
			return err
		}
		if h.Size() > len(records)-pos {
			return fmt.Errorf("%w: batch of %d bytes but only %d available", ErrCorruptBatch, h.Size(), len(records)-pos)
		}
		if h.NumRecords < 0 {
			return fmt.Errorf("%w: negative record count %d", ErrCorruptBatch, h.NumRecords)
		}
		batch := records[pos : pos+h.Size()]
		pos += h.Size()
		if h.IsControl() {
			continue
		}
		err = walkBatchRecords(h, batch, limit, index, func(index int32, _ int64, key, value []byte) error { return fn(index, key, value) })
		if err != nil {
			return err
		}
		index += h.NumRecords
	}
	return nil
}

// walkBatchRecords calls fn with each record of one batch (its timestamp
// delta, key and value, nil when null), without copying them, after
// decompressing a compressed batch into a pooled buffer. first is the
// index of its first record.
func walkBatchRecords(h BatchHeader, batch []byte, limit int, first int32, fn func(index int32, timestampDelta int64, key, value []byte) error) error {
	var dst []byte
	if h.Compression() != CodecNone { // else body is the batch itself
		dst = getBody()
	}
	body, err := decompressInto(dst, h.Compression(), batch[BatchHeaderSize:h.Size()], limit)
	if err != nil {
		return err
	}
	if h.Compression() != CodecNone {
		defer putBody(body)
	}
	dec := recordDecoder{buf: body}
	for i := int32(0); i < h.NumRecords; i++ {
		length := dec.varint()
		if dec.err != nil {
			return dec.err
		}
		if length < 1 || length > int64(len(dec.buf)) {
			return fmt.Errorf("%w: record %d length %d with %d bytes left", ErrCorruptBatch, i, length, len(dec.buf))
		}
		rest := dec.buf[length:]
		dec.buf = dec.buf[1:length] // skip the attributes byte
		timestampDelta := dec.varint()
		dec.varint() // offsetDelta
		key := dec.bytesField("key")
		value := dec.bytesField("value")
		if dec.err != nil {
			return fmt.Errorf("record %d: %w", i, dec.err)
		}
		if err := fn(first+i, timestampDelta, key, value); err != nil {
			return err
		}
		dec.buf = rest
	}
	if len(dec.buf) != 0 {
		return fmt.Errorf("%w: %d bytes after the last record", ErrCorruptBatch, len(dec.buf))
	}
	return nil
}
