package storage

import "fmt"

// flush: see Flush. Flush fsyncs every segment (log and index files) written since the last
// flush, and the directory if files were created or removed.
func (l *Log) flush() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	_, err := l.flushLocked()
	return err
}

// flushIfDue: see FlushIfDue. FlushIfDue flushes when flush.ms elapsed since the last flush and records
// were appended since. It also closes deleted segments' files whose delay
// passed. The broker calls it periodically.
func (l *Log) flushIfDue() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.writeMu.Lock()
	now := l.now()
	expired := l.takeExpiredLocked(now, false)
	due := l.unflushedRecords > 0 && elapsed(l.lastFlush, now, l.cfg.FlushMs)
	l.writeMu.Unlock()
	l.closeFiles(expired)
	if !due {
		return nil
	}
	_, err := l.flushLocked()
	return err
}

// flushState is what a flush made durable: enough to write a checkpoint.
type flushState struct {
	checkpoint recoveryCheckpoint
	epochs     []epochEntry
	segments   int
}

// flushLocked writes pending index entries, then fsyncs outside writeMu.
// Needs flushMu, which keeps files from being closed or cut meanwhile.
func (l *Log) flushLocked() (flushState, error) {
	l.writeMu.Lock()
	l.mu.RLock()
	closed := l.mu.closed
	segments := l.mu.segments
	active := segments[len(segments)-1]
	state := flushState{
		checkpoint: recoveryCheckpoint{
			nextOffset:           l.mu.logEndOffset,
			segmentBase:          active.baseOffset,
			position:             active.size,
			maxTimestamp:         active.maxTimestamp,
			offsetOfMaxTimestamp: active.offsetOfMaxTimestamp,
			latestEpoch:          l.mu.epochs.latest(),
		},
		epochs:   l.mu.epochs.entries,
		segments: len(segments),
	}
	l.mu.RUnlock()
	if closed {
		l.writeMu.Unlock()
		return flushState{}, ErrClosed
	}
	var toSync []*segment
	for _, s := range segments {
		if !s.unsynced {
			continue
		}
		created, err := s.writeIndexes(false)
		if err != nil {
			l.writeMu.Unlock()
			return flushState{}, err
		}
		l.dirUnsynced = l.dirUnsynced || created
		s.unsynced = false
		toSync = append(toSync, s)
	}
	syncDir := l.dirUnsynced
	l.dirUnsynced = false
	// A directory not known durable becomes so with the first flush of a
	// log that holds records (created); an empty log has nothing to lose.
	created := l.created && !state.emptyLog()
	l.created = l.created && !created
	flushed := l.unflushedRecords
	l.writeMu.Unlock()

	err := l.syncAll(toSync, syncDir)
	if err == nil && created {
		err = SyncCreatedDir(l.dir)
	}

	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err != nil {
		for _, s := range toSync {
			s.unsynced = true
		}
		l.dirUnsynced = l.dirUnsynced || syncDir
		l.created = l.created || created
		return flushState{}, err
	}
	l.unflushedRecords -= flushed
	l.lastFlush = l.now()
	return state, nil
}

func (l *Log) syncAll(segments []*segment, syncDir bool) error {
	for _, s := range segments {
		if err := s.sync(); err != nil {
			return err
		}
	}
	if syncDir {
		if err := syncPath(l.dir); err != nil {
			return fmt.Errorf("storage: fsync dir %s: %w", l.dir, err)
		}
	}
	return nil
}

// checkpoint: see Checkpoint. Checkpoint flushes, then durably records the recovery checkpoint (and the
// leader-epoch cache, if it changed) so that the next Open trusts everything
// flushed and scans only what comes after.
func (l *Log) checkpoint() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	return l.checkpointLocked()
}

// checkpointLocked needs flushMu.
func (l *Log) checkpointLocked() error {
	state, err := l.flushLocked()
	if err != nil {
		return err
	}
	if !epochsEqual(state.epochs, l.epochsOnDisk) {
		cache := epochCache{entries: state.epochs}
		if err := l.writeFile(leaderEpochFile, cache.encode()); err != nil {
			return err
		}
		l.epochsOnDisk = state.epochs
	}
	if l.checkpointOnDisk != nil && *l.checkpointOnDisk == state.checkpoint {
		return nil
	}
	if l.checkpointOnDisk == nil && state.emptyLog() {
		// Without a (valid) checkpoint file Open scans the whole log,
		// which is one empty segment: the file would save nothing. A
		// partition that never received a record writes none.
		return nil
	}
	if err := l.writeFile(recoveryCheckpointFile, state.checkpoint.encode()); err != nil {
		return err
	}
	cp := state.checkpoint
	l.checkpointOnDisk = &cp
	return nil
}

// emptyLog reports whether the flushed log was one empty segment.
func (s flushState) emptyLog() bool {
	return s.segments == 1 && s.checkpoint.position == 0 && s.checkpoint.nextOffset == s.checkpoint.segmentBase
}

func epochsEqual(a, b []epochEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// UnflushedRecords is how many appended records the next flush will make
// durable.
func (l *Log) UnflushedRecords() int64 {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	return l.unflushedRecords
}

// recoveryScanBudget is how many bytes of the active segment may lie past
// the recovery point before the background flusher moves it: a restart
// after a crash scans at most about this much (plus what one housekeeping
// round appends) per partition, whatever segment.bytes is.
const recoveryScanBudget = 64 << 20

// RecoveryPointBehind reports whether the recovery checkpoint on disk lags
// further than a restart should rescan: a segment was rolled since it was
// written (it names an older segment, or there is none and the log has
// more than one segment), or more than recoveryScanBudget bytes were
// appended to the active segment after it. The broker then calls
// Checkpoint from its background flusher, which fsyncs the sealed
// segments and the active one and moves the recovery point to the log
// end, so a restart after a crash scans only the few bytes appended since
// (Kafka rescans every segment after its recovery point). It answers
// false while another flush holds the log: the caller asks again on its
// next round.
func (l *Log) RecoveryPointBehind() bool {
	if !l.flushMu.TryLock() {
		return false
	}
	defer l.flushMu.Unlock()
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.mu.closed {
		return false
	}
	segments := l.mu.segments
	active := segments[len(segments)-1]
	cp := l.checkpointOnDisk
	switch {
	case cp == nil:
		return len(segments) > 1 || active.size > l.scanBudget
	case cp.segmentBase < active.baseOffset:
		return true
	default:
		return active.size-cp.position > l.scanBudget
	}
}
