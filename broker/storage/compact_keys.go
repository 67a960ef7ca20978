package storage

import "fmt"

// BatchHasNullKey reports whether a record of the batch at the start of
// batch has a null key. Kafka refuses such records on compacted topics
// (INVALID_RECORD), since the cleaner could keep no "latest value" for
// them. Control batches hold no data records and report false. The
// records are walked without being copied, after decompressing a
// compressed batch. Malformed input returns an error wrapping
// ErrCorruptBatch; it never panics.
func BatchHasNullKey(batch []byte) (bool, error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return false, err
	}
	if h.Size() > len(batch) {
		return false, fmt.Errorf("%w: batch of %d bytes but only %d available", ErrCorruptBatch, h.Size(), len(batch))
	}
	if h.IsControl() {
		return false, nil
	}
	body, err := decompress(h.Compression(), batch[BatchHeaderSize:h.Size()])
	if err != nil {
		return false, err
	}
	if h.NumRecords < 0 {
		return false, fmt.Errorf("%w: negative record count %d", ErrCorruptBatch, h.NumRecords)
	}
	dec := recordDecoder{buf: body}
	for i := int32(0); i < h.NumRecords; i++ {
		length := dec.varint()
		if dec.err != nil {
			return false, dec.err
		}
		if length < 1 || length > int64(len(dec.buf)) {
			return false, fmt.Errorf("%w: record %d length %d with %d bytes left", ErrCorruptBatch, i, length, len(dec.buf))
		}
		rest := dec.buf[length:]
		dec.buf = dec.buf[1:length] // skip the attributes byte
		dec.varint()                // timestampDelta
		dec.varint()                // offsetDelta
		keyLength := dec.varint()
		if dec.err != nil {
			return false, fmt.Errorf("record %d: %w", i, dec.err)
		}
		if keyLength == -1 {
			return true, nil
		}
		dec.buf = rest
	}
	return false, nil
}

// RecordsHaveNullKey applies BatchHasNullKey to every batch of a produce
// request's records (batches back to back, as ValidateBatches accepted).
func RecordsHaveNullKey(records []byte) (bool, error) {
	for pos := 0; pos < len(records); {
		h, err := ParseBatchHeader(records[pos:])
		if err != nil {
			return false, err
		}
		if h.Size() > len(records)-pos {
			return false, fmt.Errorf("%w: batch of %d bytes but only %d available", ErrCorruptBatch, h.Size(), len(records)-pos)
		}
		null, err := BatchHasNullKey(records[pos : pos+h.Size()])
		if err != nil || null {
			return null, err
		}
		pos += h.Size()
	}
	return false, nil
}
