package storage

import (
	"fmt"
	"time"
)

// appendBatches: see Append. Append assigns offsets to already-validated batches and writes them, in
// one write call, to the active segment (rolling first if needed). batches
// are the bytes ValidateBatches accepted and headers its result; both are
// updated in place with the assigned base offsets, the leader epoch and,
// with LogAppendTime, the new timestamp and CRC. When an fsync required by
// flush.messages or flush.ms fails, the records are written (the result is
// valid) and the error is returned.
func (l *Log) appendBatches(batches []byte, headers []BatchHeader, opts AppendOptions) (AppendResult, error) {
	total := 0
	for _, h := range headers {
		total += h.Size()
	}
	if len(headers) == 0 || total != len(batches) {
		return AppendResult{}, fmt.Errorf("%w: %d headers describe %d bytes, have %d", ErrCorruptBatch, len(headers), total, len(batches))
	}
	if total > maxSegmentPosition {
		return AppendResult{}, fmt.Errorf("%w: append of %d bytes is too large", ErrCorruptBatch, total)
	}

	l.writeMu.Lock()
	now := l.now()
	res, err := l.appendLocked(batches, headers, opts, now)
	flushDue := err == nil && (l.unflushedRecords >= l.cfg.FlushMessages || elapsed(l.lastFlush, now, l.cfg.FlushMs))
	l.writeMu.Unlock()
	if err != nil {
		return AppendResult{}, err
	}
	if flushDue && opts.DeferFlush {
		res.FlushDue = true
	} else if flushDue {
		if err := l.Flush(); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (l *Log) appendLocked(batches []byte, headers []BatchHeader, opts AppendOptions, now time.Time) (AppendResult, error) {
	l.mu.RLock()
	closed, firstOffset := l.mu.closed, l.mu.logEndOffset
	l.mu.RUnlock()
	if closed {
		return AppendResult{}, ErrClosed
	}
	var records int64
	for _, h := range headers {
		records += int64(h.LastOffsetDelta) + 1
	}
	lastOffset := firstOffset + records - 1
	if opts.KeepOffsets {
		next := firstOffset
		for _, h := range headers {
			if h.BaseOffset < next {
				return AppendResult{}, fmt.Errorf("%w: replicated batch at offset %d is below the log end offset %d", ErrCorruptBatch, h.BaseOffset, next)
			}
			next = h.LastOffset() + 1
		}
		firstOffset, lastOffset = headers[0].BaseOffset, next-1
	}

	active := l.activeLocked()
	if l.shouldRollLocked(active, int64(len(batches)), lastOffset, len(headers), now) {
		if err := l.rollLocked(now); err != nil {
			return AppendResult{}, err
		}
		active = l.activeLocked()
	}

	pos, offset := 0, firstOffset
	for i := range headers {
		h := &headers[i]
		if opts.KeepOffsets {
			pos += h.Size()
			offset = h.LastOffset() + 1
			continue
		}
		stampBatch(batches[pos:pos+h.Size()], offset, opts.LeaderEpoch, opts.LogAppendTime)
		h.BaseOffset, h.PartitionLeaderEpoch = offset, opts.LeaderEpoch
		if opts.LogAppendTime > 0 {
			h.Attributes |= attrTimestampType
			h.MaxTimestamp = opts.LogAppendTime
			h.CRC = batchCRC(batches[pos : pos+h.Size()])
		}
		pos += h.Size()
		offset = h.LastOffset() + 1
	}

	start := active.size
	f, err := active.file.get()
	if err != nil {
		return AppendResult{}, fmt.Errorf("storage: append to %s: %w", active.logPath, err)
	}
	if _, err := f.WriteAt(batches, start); err != nil {
		// Cut whatever part landed so the file ends at a batch boundary.
		if terr := f.Truncate(start); terr != nil {
			l.logger.Error("storage: cannot cut failed append", "segment", active.logPath, "err", terr)
		}
		return AppendResult{}, fmt.Errorf("storage: append to %s: %w", active.logPath, err)
	}

	if start == 0 {
		active.rollBaseTime = now
	}
	active.unsynced = true
	l.unflushedRecords += records

	l.mu.Lock()
	at := start
	for _, h := range headers {
		active.trackBatch(h, at, l.cfg.IndexIntervalBytes)
		at += int64(h.Size())
	}
	l.mu.logEndOffset = offset
	if opts.KeepOffsets {
		for _, h := range headers {
			l.mu.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset)
		}
	} else {
		l.mu.epochs.assign(opts.LeaderEpoch, firstOffset)
	}
	l.mu.Unlock()

	res := AppendResult{FirstOffset: firstOffset, LastOffset: lastOffset, LogAppendTime: -1, LeaderEpoch: opts.LeaderEpoch}
	if opts.LogAppendTime > 0 {
		res.LogAppendTime = opts.LogAppendTime
	}
	return res, nil
}

// shouldRollLocked decides whether an append of size bytes, up to lastOffset,
// in numBatches batches, needs a fresh segment. An empty segment never rolls.
func (l *Log) shouldRollLocked(active *segment, size, lastOffset int64, numBatches int, now time.Time) bool {
	if active.size == 0 {
		return false
	}
	cfg := l.cfg
	switch {
	case active.size+size > cfg.maxSegmentSize():
		return true
	case elapsed(active.rollBaseTime, now, cfg.rollMs()):
		return true
	case (len(active.offsetIndex)+numBatches)*offsetIndexEntrySize > cfg.SegmentIndexBytes:
		return true
	case (len(active.timeIndex)+numBatches+1)*timeIndexEntrySize > cfg.SegmentIndexBytes:
		return true
	case lastOffset-active.baseOffset > maxRelativeOffset:
		return true
	}
	return false
}

// roll: see Roll. Roll starts a new active segment unless the current one is empty.
func (l *Log) roll() error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.isClosed() {
		return ErrClosed
	}
	return l.rollLocked(l.now())
}

// maybeRoll: see MaybeRoll. MaybeRoll rolls when segment.ms (for a compacted log, at most
// max.compaction.lag.ms) has elapsed since the active segment's first
// append and the segment is not empty.
func (l *Log) maybeRoll() error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.isClosed() {
		return ErrClosed
	}
	now := l.now()
	active := l.activeLocked()
	if active.size == 0 || !elapsed(active.rollBaseTime, now, l.cfg.rollMs()) {
		return nil
	}
	return l.rollLocked(now)
}

// rollLocked seals the active segment (final time index entry, index files
// written; the fsync is left to the next flush) and creates a new one at the
// log end offset. Needs writeMu.
func (l *Log) rollLocked(now time.Time) error {
	old := l.activeLocked()
	if old.size == 0 {
		return nil
	}
	l.mu.Lock()
	old.maybeAppendTimeEntry()
	leo := l.mu.logEndOffset
	l.mu.Unlock()
	if _, err := old.writeIndexes(true); err != nil {
		return err
	}
	old.unsynced = true // and dirUnsynced, below

	next, err := createSegment(l.dir, leo)
	if err != nil {
		return err
	}
	next.rollBaseTime = now
	next.unsynced = true
	l.dirUnsynced = true

	l.mu.Lock()
	l.mu.segments = append(l.mu.segments[:len(l.mu.segments):len(l.mu.segments)], next)
	l.mu.Unlock()
	l.logger.Debug("storage: rolled segment", "dir", l.dir, "base", leo)
	return nil
}
