package storage

import (
	"fmt"
	"slices"
)

// TruncateTo removes everything at or after offset; when offset falls inside
// a batch the cut is at the start of that batch. An offset below the log
// start offset empties the log, which then starts at offset. The recovery
// checkpoint is removed first if it covers the removed bytes and rewritten
// afterwards. Appends wait meanwhile; no fsync runs under their lock.
func (l *Log) TruncateTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("%w: truncate to negative offset %d", ErrOffsetOutOfRange, offset)
	}
	defer l.closeExpired() // after flushMu is released
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	// Only holders of flushMu lower the end offset or move the start offset,
	// so these checks hold until truncateLocked runs.
	l.mu.RLock()
	closed, start, end := l.mu.closed, l.mu.logStartOffset, l.mu.logEndOffset
	l.mu.RUnlock()
	switch {
	case closed:
		return ErrClosed
	case offset >= end:
		return nil
	}
	if cp := l.checkpointOnDisk; cp != nil && offset < cp.nextOffset {
		if err := removeFileDurably(l.dir, recoveryCheckpointFile); err != nil {
			return err
		}
		l.checkpointOnDisk = nil
	}
	if offset < start {
		if err := l.writeFile(logStartOffsetFile, encodeLogStartOffset(offset)); err != nil {
			return err
		}
	}
	// Records appended after the cut are dirty, whatever was cleaned before.
	// The cut lands at or above offset's segment (or at offset, below the log
	// start), so that bounds the new first dirty offset.
	l.mu.RLock()
	segments := l.mu.segments
	dirtyFrom := min(offset, segments[segmentIndexLocked(segments, offset)].baseOffset)
	l.mu.RUnlock()
	if l.cleaner.firstDirtyOffset > dirtyFrom {
		l.cleaner.firstDirtyOffset = dirtyFrom
		if err := l.writeFile(cleanerCheckpointFile, l.cleaner.encode()); err != nil {
			return err
		}
	}
	if err := l.truncateLocked(offset); err != nil {
		return err
	}
	return l.checkpointLocked()
}

// truncateLocked needs flushMu.
func (l *Log) truncateLocked(offset int64) error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	now := l.now()
	if offset < l.mu.logStartOffset {
		return l.truncateFullyLocked(offset)
	}

	segments := l.mu.segments
	i := segmentIndexLocked(segments, offset)
	s := segments[i]
	v := s.view()
	h, cutPos, found, err := v.findBatch(offset, lookupPosition(v.offsetIndex, s.baseOffset, offset))
	if err != nil {
		return fmt.Errorf("storage: truncate %s: %w", s.logPath, err)
	}
	cutOffset := s.nextOffset
	if found {
		cutOffset = min(h.BaseOffset, s.nextOffset)
	}
	// Cleaned segments have gaps: an offset between batches ends the log there.
	cutOffset = min(cutOffset, offset)
	f, err := s.file.get()
	if err != nil {
		return fmt.Errorf("storage: truncate %s: %w", s.logPath, err)
	}
	if err := f.Truncate(cutPos); err != nil {
		return fmt.Errorf("storage: truncate %s: %w", s.logPath, err)
	}
	maxTs, maxTsOffset, err := s.maxTimestampBelow(cutPos, cutOffset)
	if err != nil {
		return err
	}

	l.mu.Lock()
	removed := segments[i+1:]
	l.mu.segments = slices.Clone(segments[:i+1])
	s.cutTo(cutPos, cutOffset, maxTs, maxTsOffset)
	l.mu.logEndOffset = cutOffset
	l.mu.logStartOffset = min(l.mu.logStartOffset, cutOffset)
	l.mu.epochs.truncateFromEnd(cutOffset)
	l.mu.Unlock()
	if err := s.truncateIndexFiles(); err != nil {
		return err
	}
	if err := s.truncateTxnIndexFile(); err != nil {
		return err
	}
	if s.rollBaseTime.IsZero() || len(removed) > 0 {
		s.rollBaseTime = now
	}
	// Newest first, so a crash leaves a contiguous log.
	slices.Reverse(removed)
	return l.discardSegmentsLocked(removed, now)
}

// truncateFullyLocked replaces every segment with one empty segment at
// offset, which becomes the log start offset (already persisted by the
// caller). Needs flushMu and writeMu.
func (l *Log) truncateFullyLocked(offset int64) error {
	now := l.now()
	old := slices.Clone(l.mu.segments)
	slices.Reverse(old)
	// Remove the old files before creating the new segment: one may share its name.
	if err := l.discardSegmentsLocked(old, now); err != nil {
		return err
	}
	if err := l.ensureDir(); err != nil {
		return err
	}
	next, err := createSegment(l.dir, offset)
	if err != nil {
		return err
	}
	next.rollBaseTime = now
	next.unsynced = true
	l.mu.Lock()
	l.mu.segments = []*segment{next}
	l.mu.logStartOffset, l.mu.logEndOffset = offset, offset
	l.mu.epochs = epochCache{}
	l.mu.Unlock()
	return nil
}

// maxTimestampBelow recomputes the segment's max timestamp over the batches
// before cutPos. The time index gives it as of the last offset index entry
// before the cut; the batches from that entry to the cut are re-read.
func (s *segment) maxTimestampBelow(cutPos, cutOffset int64) (int64, int64, error) {
	maxTs, maxTsOffset := int64(noTimestamp), int64(noOffset)
	for _, e := range s.timeIndex {
		if s.baseOffset+int64(e.relativeOffset) < cutOffset {
			maxTs, maxTsOffset = e.timestamp, s.baseOffset+int64(e.relativeOffset)
		}
	}
	pos := int64(0)
	for _, e := range s.offsetIndex {
		if int64(e.position) < cutPos {
			pos = int64(e.position)
		}
	}
	for pos < cutPos {
		h, err := readHeader(s.file, pos, cutPos, BatchHeaderSize)
		if err != nil {
			return 0, 0, fmt.Errorf("storage: truncate %s: %w", s.logPath, err)
		}
		if h.MaxTimestamp > maxTs {
			maxTs, maxTsOffset = h.MaxTimestamp, h.LastOffset()
		}
		pos += int64(h.Size())
	}
	return maxTs, maxTsOffset, nil
}

// cutTo shrinks the read state to the first cutPos bytes. Index slices are
// copied, never shortened in place, because readers may hold the old ones.
// Needs writeMu and mu.
func (s *segment) cutTo(cutPos, cutOffset, maxTs, maxTsOffset int64) {
	keepOffsets := 0
	for keepOffsets < len(s.offsetIndex) && int64(s.offsetIndex[keepOffsets].position) < cutPos {
		keepOffsets++
	}
	keepTimes := 0
	for keepTimes < len(s.timeIndex) && s.baseOffset+int64(s.timeIndex[keepTimes].relativeOffset) < cutOffset {
		keepTimes++
	}
	s.offsetIndex = slices.Clone(s.offsetIndex[:keepOffsets])
	// The index files may hold entries past the cut; truncateIndexFiles cuts them.
	s.timeIndex = slices.Clone(s.timeIndex[:keepTimes])
	s.offsetIndexOnDisk = min(s.offsetIndexOnDisk, keepOffsets)
	s.timeIndexOnDisk = min(s.timeIndexOnDisk, keepTimes)
	s.cutTxnIndex(cutOffset)
	s.size, s.nextOffset = cutPos, cutOffset
	s.maxTimestamp, s.offsetOfMaxTimestamp = maxTs, maxTsOffset
	s.bytesSinceIndexEntry = cutPos
	if keepOffsets > 0 {
		s.bytesSinceIndexEntry = cutPos - int64(s.offsetIndex[keepOffsets-1].position)
	}
	s.unsynced = true
}

// truncateIndexFiles cuts the index files to the entries they hold that are
// still valid after cutTo. Needs writeMu.
// An absent file stays absent (index files are created lazily, see
// createSegment).
func (s *segment) truncateIndexFiles() error {
	if err := truncateIndexFile(s.offsetIndexPath, int64(s.offsetIndexOnDisk*offsetIndexEntrySize)); err != nil {
		return fmt.Errorf("storage: truncate %s: %w", s.offsetIndexPath, err)
	}
	if err := truncateIndexFile(s.timeIndexPath, int64(s.timeIndexOnDisk*timeIndexEntrySize)); err != nil {
		return fmt.Errorf("storage: truncate %s: %w", s.timeIndexPath, err)
	}
	return nil
}

// TruncateFully empties the log, which then starts (and ends) at offset,
// whatever its current range: a follower whose log ends below its
// leader's log start offset restarts there. The new start offset is
// persisted first.
func (l *Log) TruncateFully(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("%w: truncate to negative offset %d", ErrOffsetOutOfRange, offset)
	}
	defer l.closeExpired() // after flushMu is released
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.RLock()
	closed := l.mu.closed
	l.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if cp := l.checkpointOnDisk; cp != nil {
		if err := removeFileDurably(l.dir, recoveryCheckpointFile); err != nil {
			return err
		}
		l.checkpointOnDisk = nil
	}
	if err := l.writeFile(logStartOffsetFile, encodeLogStartOffset(offset)); err != nil {
		return err
	}
	if l.cleaner.firstDirtyOffset > offset {
		l.cleaner.firstDirtyOffset = offset
		if err := l.writeFile(cleanerCheckpointFile, l.cleaner.encode()); err != nil {
			return err
		}
	}
	l.writeMu.Lock()
	err := l.truncateFullyLocked(offset)
	l.writeMu.Unlock()
	if err != nil {
		return err
	}
	return l.checkpointLocked()
}
