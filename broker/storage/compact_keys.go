package storage

import (
	"fmt"
	"math"
)

// keyRequired is the rule set of a compacted topic alone.
var keyRequired = RecordRules{RequireKey: true, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64}

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
	return RecordsHaveNullKey(batch[:h.Size()])
}

// RecordsHaveNullKey applies BatchHasNullKey to every batch of a produce
// request's records (batches back to back, as ValidateBatches accepted).
func RecordsHaveNullKey(records []byte) (bool, error) {
	v, err := CheckRecords(records, keyRequired)
	return len(v) > 0, err
}
