package storage

import (
	"fmt"
	"sort"
)

// segmentIndexLocked returns the index of the segment with the largest base
// offset <= offset, or 0 if offset precedes them all. Needs mu.
func segmentIndexLocked(segments []*segment, offset int64) int {
	i := sort.Search(len(segments), func(i int) bool { return segments[i].baseOffset > offset })
	return max(i-1, 0)
}

// viewAfter snapshots the first segment whose base offset is above base.
func (l *Log) viewAfter(base int64) (segmentView, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, s := range l.mu.segments {
		if s.baseOffset > base {
			return s.view(), true
		}
	}
	return segmentView{}, false
}

// read: see Read. Read returns the bytes of one segment starting at the batch containing
// offset: at most maxBytes, never batches at or past maxOffset (a batch
// boundary such as the high watermark) and, with minOneBatch, the whole
// first batch even if it is larger than maxBytes. The last batch may be cut
// at maxBytes, as Kafka does. offset == LogEndOffset or >= maxOffset yields
// an empty chunk; offsets outside [LogStartOffset, LogEndOffset] yield
// ErrOffsetOutOfRange.
func (l *Log) read(offset int64, maxBytes int, maxOffset int64, minOneBatch bool) (FileChunk, error) {
	l.mu.RLock()
	if l.mu.closed {
		l.mu.RUnlock()
		return FileChunk{}, ErrClosed
	}
	start, end := l.mu.logStartOffset, l.mu.logEndOffset
	if offset < start || offset > end {
		l.mu.RUnlock()
		return FileChunk{}, fmt.Errorf("%w: offset %d not in [%d, %d]", ErrOffsetOutOfRange, offset, start, end)
	}
	active := l.activeLocked()
	// An empty chunk is never sent: it needs no open file.
	empty := FileChunk{File: active.file.opened(), Pos: active.size}
	if offset == end || offset >= maxOffset || (maxBytes <= 0 && !minOneBatch) {
		l.mu.RUnlock()
		return empty, nil
	}
	v := l.mu.segments[segmentIndexLocked(l.mu.segments, offset)].view()
	l.mu.RUnlock()

	chunk, err := l.readFrom(v, offset, maxBytes, maxOffset, minOneBatch, empty)
	if err != nil {
		if start := l.LogStartOffset(); offset < start {
			// Retention removed the segment while we read it.
			return FileChunk{}, fmt.Errorf("%w: offset %d below log start offset %d", ErrOffsetOutOfRange, offset, start)
		}
	}
	return chunk, err
}

func (l *Log) readFrom(v segmentView, offset int64, maxBytes int, maxOffset int64, minOneBatch bool, empty FileChunk) (FileChunk, error) {
	for {
		h, pos, found, err := v.findBatch(offset, lookupPosition(v.offsetIndex, v.seg.baseOffset, offset))
		if err != nil {
			return FileChunk{}, fmt.Errorf("storage: read offset %d from %s: %w", offset, v.seg.logPath, err)
		}
		if !found {
			// offset lies past this segment's last batch: continue in the next.
			next, ok := l.viewAfter(v.seg.baseOffset)
			if !ok {
				return empty, nil
			}
			v = next
			continue
		}
		if h.BaseOffset >= maxOffset {
			return FileChunk{File: v.seg.file.opened(), Pos: pos}, nil
		}
		limit, err := v.positionOf(maxOffset, pos)
		if err != nil {
			return FileChunk{}, fmt.Errorf("storage: read offset %d from %s: %w", offset, v.seg.logPath, err)
		}
		n := min(limit-pos, int64(max(maxBytes, 0)))
		if minOneBatch && n < int64(h.Size()) {
			n = int64(h.Size())
		}
		// findBatch opened the file; it stays open until the segment
		// is closed, so the chunk can go to sendfile.
		f, err := v.seg.file.get()
		if err != nil {
			return FileChunk{}, fmt.Errorf("storage: read offset %d from %s: %w", offset, v.seg.logPath, err)
		}
		return FileChunk{File: f, Pos: pos, Len: n}, nil
	}
}

// ForEachBatch calls fn with the header of every batch whose last offset is
// >= from, in order, up to the log end offset at the time each segment is
// reached. It stops at, and returns, the first error fn returns.
func (l *Log) ForEachBatch(from int64, fn func(BatchHeader) error) error {
	l.mu.RLock()
	if l.mu.closed {
		l.mu.RUnlock()
		return ErrClosed
	}
	v := l.mu.segments[segmentIndexLocked(l.mu.segments, from)].view()
	l.mu.RUnlock()

	for {
		pos := lookupPosition(v.offsetIndex, v.seg.baseOffset, from)
		for pos < v.size {
			h, err := readHeader(v.seg.file, pos, v.size, BatchHeaderSize)
			if err != nil {
				return fmt.Errorf("storage: scan %s: %w", v.seg.logPath, err)
			}
			if h.LastOffset() >= from {
				if err := fn(h); err != nil {
					return err
				}
			}
			pos += int64(h.Size())
		}
		next, ok := l.viewAfter(v.seg.baseOffset)
		if !ok {
			return nil
		}
		v = next
	}
}

// OffsetForTimestamp finds the first record at or after the log start whose
// timestamp is >= ts: the first segment whose max timestamp reaches ts, the
// time index to skip records known to be older, batch headers to find the
// candidate batch, and the decoded records for the exact offset.
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, ok bool, err error) {
	l.mu.RLock()
	if l.mu.closed {
		l.mu.RUnlock()
		return 0, 0, false, ErrClosed
	}
	start := l.mu.logStartOffset
	views := make([]segmentView, 0, len(l.mu.segments))
	for _, s := range l.mu.segments {
		if s.maxTimestamp >= ts && s.nextOffset > start {
			views = append(views, s.view())
		}
	}
	l.mu.RUnlock()

	for _, v := range views {
		base := v.seg.baseOffset
		pos := lookupPosition(v.offsetIndex, base, start)
		if older, ok := lookupTimestamp(v.timeIndex, base, ts); ok {
			pos = max(pos, lookupPosition(v.offsetIndex, base, older))
		}
		for pos < v.size {
			h, err := readHeader(v.seg.file, pos, v.size, BatchHeaderSize)
			if err != nil {
				return 0, 0, false, fmt.Errorf("storage: timestamp lookup in %s: %w", v.seg.logPath, err)
			}
			if h.LastOffset() >= start && h.MaxTimestamp >= ts {
				rec, found, err := v.findRecord(h, pos, func(r Record) bool { return r.Timestamp >= ts && r.Offset >= start })
				if err != nil || found {
					return rec.Offset, rec.Timestamp, found, err
				}
			}
			pos += int64(h.Size())
		}
	}
	return 0, 0, false, nil
}

// MaxTimestamp returns the offset and timestamp of the record with the
// largest timestamp (the earliest such record on ties). ok is false when the
// log holds no timestamped record. Segments wholly below the log start
// offset are skipped; within the first kept segment, records below the start
// offset still count (as in Kafka, which tracks the max per segment).
func (l *Log) MaxTimestamp() (offset, timestamp int64, ok bool, err error) {
	l.mu.RLock()
	if l.mu.closed {
		l.mu.RUnlock()
		return 0, 0, false, ErrClosed
	}
	start := l.mu.logStartOffset
	var best segmentView
	for _, s := range l.mu.segments {
		if s.nextOffset > start && s.offsetOfMaxTimestamp >= 0 && (best.seg == nil || s.maxTimestamp > best.maxTimestamp) {
			best = s.view()
		}
	}
	l.mu.RUnlock()
	if best.seg == nil {
		return 0, 0, false, nil
	}

	target := best.offsetOfMaxTimestamp
	h, pos, found, err := best.findBatch(target, lookupPosition(best.offsetIndex, best.seg.baseOffset, target))
	if err != nil {
		return 0, 0, false, fmt.Errorf("storage: max timestamp lookup in %s: %w", best.seg.logPath, err)
	}
	if !found {
		return target, best.maxTimestamp, true, nil
	}
	h, err = readHeader(best.seg.file, pos, best.size, BatchHeaderSize)
	if err != nil {
		return 0, 0, false, err
	}
	rec, found, err := best.findRecord(h, pos, func(r Record) bool { return r.Timestamp == best.maxTimestamp })
	if err != nil {
		return 0, 0, false, err
	}
	if !found {
		// The header's max timestamp matches no record; name the batch.
		return h.LastOffset(), best.maxTimestamp, true, nil
	}
	return rec.Offset, rec.Timestamp, true, nil
}

// findRecord decodes the batch h at pos and returns its first record
// matching match.
func (v segmentView) findRecord(h BatchHeader, pos int64, match func(Record) bool) (Record, bool, error) {
	batch, err := v.readBatch(h, pos)
	if err != nil {
		return Record{}, false, err
	}
	rec, found, err := firstRecordMatching(batch, match)
	if err != nil {
		return Record{}, false, fmt.Errorf("storage: decode batch at offset %d of %s: %w", h.BaseOffset, v.seg.logPath, err)
	}
	return rec, found, nil
}

// firstRecordMatching decodes the whole batch at the start of batch and
// returns its first record matching match.
func firstRecordMatching(batch []byte, match func(Record) bool) (Record, bool, error) {
	records, err := DecodeRecords(batch)
	if err != nil {
		return Record{}, false, err
	}
	for _, r := range records {
		if match(r) {
			return r, true, nil
		}
	}
	return Record{}, false, nil
}
