package storage

import (
	"encoding/binary"
	"fmt"
	"math"
)

// attrDeleteHorizon is attribute bit 6 (KIP-534): the batch's
// firstTimestamp holds its delete horizon, the time after which the
// cleaner may remove the tombstones in it. Record timestamp deltas are
// relative to it, so record timestamps are unchanged for every client.
const attrDeleteHorizon = 0x40

// offsetMap maps each key seen in the dirty section to the offset of its
// latest record there.
type offsetMap struct {
	offsets map[string]int64
	bytes   int64 // estimated memory use
}

// offsetMapEntryOverhead estimates a Go map entry besides the key bytes:
// string header, value, bucket share.
const offsetMapEntryOverhead = 48

func newOffsetMap() *offsetMap { return &offsetMap{offsets: map[string]int64{}} }

// addBatch records the keyed records of one batch. Control and
// transactional batches are left out: the cleaner keeps them as they are.
func (m *offsetMap) addBatch(batch []byte, h BatchHeader) error {
	if h.IsControl() || h.IsTransactional() {
		return nil
	}
	records, err := DecodeRecords(batch)
	if err != nil {
		return fmt.Errorf("storage: clean batch at offset %d: %w", h.BaseOffset, err)
	}
	for _, r := range records {
		if r.Key == nil {
			continue
		}
		if _, seen := m.offsets[string(r.Key)]; !seen {
			m.bytes += int64(len(r.Key)) + offsetMapEntryOverhead
		}
		m.offsets[string(r.Key)] = r.Offset // records come in offset order
	}
	return nil
}

// batchFilter decides, batch by batch, what a clean pass keeps.
type batchFilter struct {
	offsets *offsetMap
	nowMs   int64
	// newHorizon is the delete horizon stamped on a batch whose tombstones
	// are cleaned for the first time: now + delete.retention.ms.
	newHorizon int64
	// deadline is the earliest horizon among the tombstones kept so far,
	// noTimestamp if none.
	deadline int64
	// logEnd, if not noOffset, is the log end offset when the cleaned
	// section reaches it: a batch ending there is kept, if need be empty.
	logEnd int64
	stats  *CleanResult
	body   []byte // scratch for re-encoding
}

func newBatchFilter(offsets *offsetMap, nowMs, deleteRetentionMs, logEnd int64, stats *CleanResult) *batchFilter {
	horizon := nowMs + deleteRetentionMs
	if deleteRetentionMs > math.MaxInt64-nowMs {
		horizon = math.MaxInt64
	}
	return &batchFilter{offsets: offsets, nowMs: nowMs, newHorizon: horizon, deadline: noTimestamp, logEnd: logEnd, stats: stats}
}

func (f *batchFilter) noteTombstoneHorizon(horizon int64) {
	if f.deadline == noTimestamp || horizon < f.deadline {
		f.deadline = horizon
	}
}

// filter returns the batch to write in place of batch (whose header is h):
// batch itself when every record stays, a re-encoded batch when some go or
// a delete horizon must be stamped, nil when none stays. A record goes when
// its key has a later record in the dirty section, when it has no key, or
// when it is a tombstone whose batch's delete horizon has passed. A batch
// that loses every record but ends at the log end offset is kept with no
// records, as Kafka does: otherwise the log would end in a gap that
// readers (consumers catching up to the high watermark) never get past.
func (f *batchFilter) filter(batch []byte, h BatchHeader) ([]byte, error) {
	if h.IsControl() || h.IsTransactional() {
		// Transactions are not implemented; such batches are kept whole.
		f.stats.RecordsRead += int64(h.NumRecords)
		return batch, nil
	}
	records, err := DecodeRecords(batch)
	if err != nil {
		return nil, fmt.Errorf("storage: clean batch at offset %d: %w", h.BaseOffset, err)
	}
	f.stats.RecordsRead += int64(len(records))
	hasHorizon := h.Attributes&attrDeleteHorizon != 0
	kept := records[:0] // filtered in place
	keptTombstones := 0
	for _, r := range records {
		if r.Key == nil {
			continue
		}
		if latest, ok := f.offsets.offsets[string(r.Key)]; ok && r.Offset < latest {
			continue
		}
		if r.Value == nil {
			if hasHorizon && f.nowMs >= h.FirstTimestamp {
				f.stats.TombstonesRemoved++
				continue
			}
			keptTombstones++
		}
		kept = append(kept, r)
	}
	f.stats.RecordsRemoved += int64(len(records) - len(kept))

	horizon := int64(noTimestamp)
	if keptTombstones > 0 {
		horizon = f.newHorizon
		if hasHorizon {
			horizon = h.FirstTimestamp
		}
		f.noteTombstoneHorizon(horizon)
	}
	switch {
	case len(kept) == 0 && h.LastOffset()+1 == f.logEnd:
		if len(records) == 0 {
			return batch, nil
		}
		f.stats.BatchesRewritten++
		return emptyBatch(h), nil
	case len(kept) == 0:
		f.stats.BatchesDropped++
		return nil, nil
	case len(kept) == len(records) && (keptTombstones == 0 || hasHorizon):
		return batch, nil
	}
	f.stats.BatchesRewritten++
	return f.encode(h, kept, horizon)
}

// encode builds a batch from h's fields and the kept records: same base
// offset, lastOffsetDelta (so the batch spans the same offsets), producer
// id, epoch and base sequence, leader epoch, codec and timestamp type;
// records keep their offset deltas. firstTimestamp is the delete horizon
// when there is one (attribute bit 6), else the first record's timestamp;
// for CreateTime, maxTimestamp is recomputed over the kept records.
func (f *batchFilter) encode(h BatchHeader, records []Record, horizon int64) ([]byte, error) {
	logAppendTime := h.TimestampType() == 1
	first, maxTs := h.FirstTimestamp, h.MaxTimestamp
	if !logAppendTime {
		first, maxTs = records[0].Timestamp, records[0].Timestamp
		for _, r := range records[1:] {
			maxTs = max(maxTs, r.Timestamp)
		}
	}
	attrs := h.Attributes &^ attrDeleteHorizon
	if horizon != noTimestamp {
		attrs |= attrDeleteHorizon
		first = horizon
	}

	body := f.body[:0]
	var rec []byte
	for _, r := range records {
		rec = rec[:0]
		rec = append(rec, 0) // record attributes: unused in v2
		rec = binary.AppendVarint(rec, r.Timestamp-first)
		rec = binary.AppendVarint(rec, r.Offset-h.BaseOffset)
		rec = appendNullableBytes(rec, r.Key)
		rec = appendNullableBytes(rec, r.Value)
		rec = binary.AppendVarint(rec, int64(len(r.Headers)))
		for _, hd := range r.Headers {
			rec = appendNullableBytes(rec, []byte(hd.Key))
			rec = appendNullableBytes(rec, hd.Value)
		}
		body = binary.AppendVarint(body, int64(len(rec)))
		body = append(body, rec...)
	}
	f.body = body
	payload, err := compress(h.Compression(), body)
	if err != nil {
		return nil, fmt.Errorf("storage: clean batch at offset %d: compress: %w", h.BaseOffset, err)
	}

	out := make([]byte, BatchHeaderSize, BatchHeaderSize+len(payload))
	be := binary.BigEndian
	be.PutUint64(out[offsetBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(out[offsetLength:], uint32(BatchHeaderSize-batchLogOverhead+len(payload)))
	be.PutUint32(out[offsetLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	out[offsetMagic] = 2
	be.PutUint16(out[offsetAttributes:], uint16(attrs))
	be.PutUint32(out[offsetLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(out[offsetFirstTimestamp:], uint64(first))
	be.PutUint64(out[offsetMaxTimestamp:], uint64(maxTs))
	be.PutUint64(out[offsetProducerID:], uint64(h.ProducerID))
	be.PutUint16(out[offsetProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(out[offsetBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(out[offsetNumRecords:], uint32(len(records)))
	out = append(out, payload...)
	be.PutUint32(out[offsetCRC:], batchCRC(out))
	return out, nil
}

// emptyBatch is h's batch without records: same offsets, producer fields
// and leader epoch, no compression, both timestamps h's max timestamp.
func emptyBatch(h BatchHeader) []byte {
	out := make([]byte, BatchHeaderSize)
	be := binary.BigEndian
	be.PutUint64(out[offsetBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(out[offsetLength:], uint32(BatchHeaderSize-batchLogOverhead))
	be.PutUint32(out[offsetLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	out[offsetMagic] = 2
	be.PutUint16(out[offsetAttributes:], uint16(h.Attributes&^(attrCompressionMask|attrDeleteHorizon)))
	be.PutUint32(out[offsetLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(out[offsetFirstTimestamp:], uint64(h.MaxTimestamp))
	be.PutUint64(out[offsetMaxTimestamp:], uint64(h.MaxTimestamp))
	be.PutUint64(out[offsetProducerID:], uint64(h.ProducerID))
	be.PutUint16(out[offsetProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(out[offsetBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(out[offsetNumRecords:], 0)
	be.PutUint32(out[offsetCRC:], batchCRC(out))
	return out
}

// appendNullableBytes appends a varint length and the bytes; nil is -1.
func appendNullableBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}
