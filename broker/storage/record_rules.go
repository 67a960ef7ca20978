package storage

import (
	"fmt"
	"math"
)

// RecordRules are the per-record rules a topic imposes on produced
// records, beyond the batch framing ValidateBatches checks. Kafka reports
// a record that breaks one by its index in the batch (KIP-467), and
// refuses the whole batch.
type RecordRules struct {
	// RequireKey refuses records with a null key (compacted topics).
	RequireKey bool
	// MinTimestamp and MaxTimestamp bound record timestamps (CreateTime
	// topics: now - message.timestamp.before.max.ms and now +
	// message.timestamp.after.max.ms). math.MinInt64 / math.MaxInt64 mean
	// unbounded.
	MinTimestamp, MaxTimestamp int64
	// MaxDecompressedBytes bounds what a compressed batch may inflate to
	// while its records are walked (InflationLimit); past it CheckRecords
	// fails with ErrBatchTooLarge. 0 means storage's absolute bound.
	MaxDecompressedBytes int
}

// NoTimestamp is the timestamp of a record written without one (-1);
// the timestamp bounds do not apply to it, as in Kafka.
const NoTimestamp = -1

// RecordViolation is one record that breaks a RecordRules rule.
type RecordViolation struct {
	// Index is the record's position in the produce's records, counted
	// from 0 across its batches (a produce carries one batch per
	// partition in practice, so this is the batch index of KIP-467).
	Index int32
	// Timestamp: the record broke a timestamp bound (Kafka's
	// INVALID_TIMESTAMP); otherwise it had no key (INVALID_RECORD).
	Timestamp bool
	Message   string
}

// active reports whether any rule can reject a record.
func (r RecordRules) active() bool {
	return r.RequireKey || r.MinTimestamp != math.MinInt64 || r.MaxTimestamp != math.MaxInt64
}

// CheckRecords returns the records of a produce's batches (back to back,
// as ValidateBatches accepted them) that break rules, in record order.
// Only what the rules need is read: when no key is required and the
// batch's own first and max timestamps are within the bounds, the batch is
// not decompressed (Kafka producers write the first record's timestamp as
// the base, so no record is older than it... unless a client writes
// negative deltas, which is why a MinTimestamp bound always walks the
// records). Control batches are skipped. A batch inflating past
// rules.MaxDecompressedBytes fails with ErrBatchTooLarge; malformed input
// returns an error wrapping ErrCorruptBatch; it never panics.
func CheckRecords(records []byte, rules RecordRules) ([]RecordViolation, error) {
	if !rules.active() {
		return nil, nil
	}
	var (
		out   []RecordViolation
		index int32
	)
	for pos := 0; pos < len(records); {
		h, err := ParseBatchHeader(records[pos:])
		if err != nil {
			return nil, err
		}
		if h.Size() > len(records)-pos {
			return nil, fmt.Errorf("%w: batch of %d bytes but only %d available", ErrCorruptBatch, h.Size(), len(records)-pos)
		}
		if h.NumRecords < 0 {
			return nil, fmt.Errorf("%w: negative record count %d", ErrCorruptBatch, h.NumRecords)
		}
		batch := records[pos : pos+h.Size()]
		pos += h.Size()
		if h.IsControl() {
			continue
		}
		walk := rules.RequireKey || rules.MinTimestamp != math.MinInt64 ||
			h.MaxTimestamp > rules.MaxTimestamp || h.FirstTimestamp > rules.MaxTimestamp
		if !walk {
			index += h.NumRecords
			continue
		}
		v, err := checkBatchRecords(h, batch, rules, index)
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
		index += h.NumRecords
	}
	return out, nil
}

// checkBatchRecords walks one batch's records without copying them (after
// decompressing a compressed batch). first is the index of its first record.
func checkBatchRecords(h BatchHeader, batch []byte, rules RecordRules, first int32) ([]RecordViolation, error) {
	limit := rules.MaxDecompressedBytes
	if limit <= 0 || limit > maxDecompressedSize {
		limit = maxDecompressedSize
	}
	var out []RecordViolation
	err := walkBatchRecords(h, batch, limit, first, func(index int32, timestampDelta int64, key, _ []byte) error {
		timestamp := h.FirstTimestamp + timestampDelta
		switch {
		case timestamp != NoTimestamp && (timestamp < rules.MinTimestamp || timestamp > rules.MaxTimestamp):
			out = append(out, RecordViolation{Index: index, Timestamp: true,
				Message: fmt.Sprintf("timestamp %d of record %d is out of range: it must be within [%d, %d]", timestamp, index, rules.MinTimestamp, rules.MaxTimestamp)})
		case rules.RequireKey && key == nil:
			out = append(out, RecordViolation{Index: index, Message: "compacted topic cannot accept a record without a key"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
