package storage

import (
	"fmt"
	"time"
)

// ApplyRetention deletes the oldest segments, never the active one, while
// retention.ms or retention.bytes allows (only when the cleanup policy
// includes delete), or while they lie wholly below the log start offset;
// the log start offset moves to the first kept segment. It returns how many
// segments it deleted. Like Kafka it stops at the first segment that must
// be kept.
//
// With remote storage (Config.Remote) it deletes only local copies of
// uploaded segments, those whose next offset is <= RemoteOffset, and
// measures them against local.retention.ms and local.retention.bytes (see
// Config.EffectiveLocalRetention) whatever the cleanup policy, so compacted
// topics are tiered too. An uploaded segment wholly below the log start
// offset goes as well; one not uploaded stays, and so do all after it.
func (l *Log) ApplyRetention() (int, error) {
	defer l.closeExpired() // after flushMu and writeMu are released
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.isClosed() {
		return 0, ErrClosed
	}
	now := l.now()

	cfg := l.cfg
	segments := l.mu.segments
	logStart := l.mu.logStartOffset
	var total int64
	for _, s := range segments {
		total += s.size
	}
	// Which limits apply: retention.* under cleanup.policy=delete; with
	// remote storage, local.retention.* whatever the policy, and only for
	// segments already uploaded.
	deleteByLimits, retentionMs, retentionBytes := cfg.Delete, cfg.RetentionMs, cfg.RetentionBytes
	remoteOffset := l.RemoteOffset()
	if cfg.Remote {
		deleteByLimits = true
		retentionMs, retentionBytes = cfg.EffectiveLocalRetention()
	}
	n := 0
	for ; n < len(segments)-1; n++ {
		s := segments[n]
		if cfg.Remote && s.nextOffset > remoteOffset {
			break // not wholly uploaded yet
		}
		belowStart := segments[n+1].baseOffset <= logStart
		byTime := deleteByLimits && retentionMs >= 0 && s.largestTimestamp() < now.UnixMilli()-retentionMs
		bySize := deleteByLimits && retentionBytes >= 0 && total-s.size >= retentionBytes
		if !belowStart && !byTime && !bySize {
			break
		}
		total -= s.size
	}
	if n == 0 {
		return 0, nil
	}
	err := l.removeOldestLocked(n, segments[n].baseOffset, now)
	l.logger.Info("storage: retention deleted segments", "dir", l.dir, "count", n, "log_start_offset", segments[n].baseOffset)
	return n, err
}

// DeleteRecordsBefore moves the log start offset up to offset, persisting it
// before returning, and deletes the segments wholly below it. offset above
// the log end offset is ErrOffsetOutOfRange; at or below the current start
// it is a no-op.
func (l *Log) DeleteRecordsBefore(offset int64) error {
	defer l.closeExpired() // after flushMu and writeMu are released
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.RLock()
	closed, start, end := l.mu.closed, l.mu.logStartOffset, l.mu.logEndOffset
	l.mu.RUnlock()
	switch {
	case closed:
		return ErrClosed
	case offset > end:
		return fmt.Errorf("%w: delete records before %d, log end offset is %d", ErrOffsetOutOfRange, offset, end)
	case offset <= start:
		return nil
	}
	// flushMu keeps truncation and other deletions out, and appends only
	// raise the end offset, so the checks above still hold after this write.
	if err := l.writeFile(logStartOffsetFile, encodeLogStartOffset(offset)); err != nil {
		return err
	}

	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.mu.Lock()
	l.mu.logStartOffset = offset
	l.mu.epochs.truncateFromStart(offset)
	segments := l.mu.segments
	l.mu.Unlock()
	n := 0
	for n < len(segments)-1 && segments[n+1].baseOffset <= offset {
		n++
	}
	if n == 0 {
		return nil
	}
	return l.removeOldestLocked(n, offset, l.now())
}

// removeOldestLocked deletes the n oldest segments and raises the log start
// offset to newStart. Their files are unlinked now and closed after
// file.delete.delay.ms. Needs flushMu and writeMu.
func (l *Log) removeOldestLocked(n int, newStart int64, now time.Time) error {
	l.mu.Lock()
	removed := l.mu.segments[:n]
	l.mu.segments = append([]*segment(nil), l.mu.segments[n:]...)
	if newStart > l.mu.logStartOffset {
		l.mu.logStartOffset = newStart
		l.mu.epochs.truncateFromStart(newStart)
	}
	l.mu.Unlock()
	return l.discardSegmentsLocked(removed, now)
}

// discardSegmentsLocked unlinks the files of segments no longer in the log
// and schedules their closing. Needs flushMu and writeMu.
func (l *Log) discardSegmentsLocked(removed []*segment, now time.Time) error {
	pinForRemoval(removed)
	var first error
	for _, s := range removed {
		if err := s.removeFiles(); err != nil && first == nil {
			first = fmt.Errorf("storage: delete segment %s: %w", s.logPath, err)
		}
	}
	l.closeLaterLocked(removed, now)
	return first
}

// closeLaterLocked schedules the files of segments no longer in the log
// (already unlinked or replaced) to be closed after file.delete.delay.ms, so
// reads that hold them finish; closeExpired closes them. Needs flushMu and
// writeMu.
func (l *Log) closeLaterLocked(removed []*segment, now time.Time) {
	for _, s := range removed {
		l.pendingCloses = append(l.pendingCloses, pendingClose{
			file:     s.file,
			deadline: now.Add(time.Duration(l.cfg.FileDeleteDelayMs) * time.Millisecond),
		})
	}
	l.dirUnsynced = true
}

// closeExpired closes the files of deleted segments whose delay has
// passed. It holds writeMu only to pick them: closing the last descriptor
// of an unlinked segment frees its blocks and cached pages in the close
// call (tens to hundreds of milliseconds for a large segment while the
// disk is busy writing back), which appends must not wait for.
func (l *Log) closeExpired() {
	l.writeMu.Lock()
	files := l.takeExpiredLocked(l.now(), false)
	l.writeMu.Unlock()
	l.closeFiles(files)
}

// takeExpiredLocked removes from the pending closes the files whose delay
// has passed (every one with all) and returns them for closeFiles. Needs
// writeMu.
func (l *Log) takeExpiredLocked(now time.Time, all bool) []*segmentFile {
	var expired []*segmentFile
	kept := l.pendingCloses[:0]
	for _, p := range l.pendingCloses {
		if all || !now.Before(p.deadline) {
			expired = append(expired, p.file)
			continue
		}
		kept = append(kept, p)
	}
	clear(l.pendingCloses[len(kept):])
	l.pendingCloses = kept
	return expired
}

// closeFiles closes files takeExpiredLocked returned; the caller holds no
// lock of the log.
func (l *Log) closeFiles(files []*segmentFile) {
	for _, f := range files {
		if err := f.close(); err != nil {
			l.logger.Warn("storage: close deleted segment", "file", f.path, "err", err)
		}
	}
}
