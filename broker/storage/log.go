package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

var (
	// ErrOffsetOutOfRange reports an offset outside [LogStartOffset, LogEndOffset].
	ErrOffsetOutOfRange = errors.New("storage: offset out of range")
	// ErrCorruptLog marks on-disk state that recovery cannot repair by
	// cutting a torn tail, such as a segment whose name does not match its
	// first batch, or a damaged log-start-offset file.
	ErrCorruptLog = errors.New("storage: corrupt log directory")
	// ErrClosed reports a call on a closed Log.
	ErrClosed = errors.New("storage: log closed")
)

// Log is the storage of one partition: a directory of segments. Reads are
// safe concurrently with everything; mutations serialize internally.
//
// Lock order: flushMu, then writeMu, then mu. flushMu serializes fsyncs and
// the operations that delete or truncate files, so no file is closed or cut
// under a running fsync. writeMu serializes appends and rolls. mu guards the
// state readers look at and is never held across I/O.
type Log struct {
	dir    string
	now    func() time.Time
	logger *slog.Logger
	stats  RecoveryStats // written by Open only

	flushMu sync.Mutex
	// Guarded by flushMu.
	checkpointOnDisk *recoveryCheckpoint // nil when there is no valid checkpoint file
	epochsOnDisk     []epochEntry

	writeMu sync.Mutex
	// Guarded by writeMu.
	cfg              Config
	unflushedRecords int64
	lastFlush        time.Time
	dirUnsynced      bool // files were created or removed since the last flush
	pendingCloses    []pendingClose

	mu struct {
		sync.RWMutex
		segments       []*segment // ordered by base offset; replaced, never modified in place
		logStartOffset int64
		logEndOffset   int64
		epochs         epochCache
		closed         bool
	}
}

// pendingClose is a deleted segment's file, kept open for in-flight reads.
type pendingClose struct {
	file     *os.File
	deadline time.Time
}

// AppendOptions control one Append.
type AppendOptions struct {
	LeaderEpoch int32 // stamped into every batch; a new epoch starts a leader-epoch entry
	// LogAppendTime, if > 0, becomes every batch's MaxTimestamp with the
	// LogAppendTime attribute set and the CRC recomputed.
	LogAppendTime int64
}

// AppendResult describes what Append assigned.
type AppendResult struct {
	FirstOffset   int64
	LastOffset    int64
	LogAppendTime int64 // -1 if not used
}

// FileChunk is a byte range of a segment file to send with sendfile.
type FileChunk struct {
	File *os.File
	Pos  int64
	Len  int64
}

// ReadAll preads the range.
func (c FileChunk) ReadAll() ([]byte, error) {
	if c.Len <= 0 {
		return []byte{}, nil
	}
	buf := make([]byte, c.Len)
	n, err := c.File.ReadAt(buf, c.Pos)
	if n == len(buf) {
		return buf, nil
	}
	return nil, fmt.Errorf("storage: read %d bytes at %d of %s: got %d: %w", c.Len, c.Pos, c.File.Name(), n, err)
}

// RecoveryStats describes the work Open did to recover the log.
type RecoveryStats struct {
	BytesScanned    int64 // log bytes read and CRC-checked
	SegmentsScanned int   // segments scanned in whole or in part
	IndexesRebuilt  int   // segments whose index files were rebuilt from the log
	BytesTruncated  int64 // torn or corrupt bytes cut from the tail
	SegmentsRemoved int   // segments deleted (after a corrupt one, or empty)
	UsedCheckpoint  bool  // a valid recovery checkpoint was found
}

// RecoveryStats reports what Open did.
func (l *Log) RecoveryStats() RecoveryStats { return l.stats }

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// LogStartOffset is the first offset readers may fetch.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.logStartOffset
}

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.logEndOffset
}

// Size is the total bytes of all segments.
func (l *Log) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var total int64
	for _, s := range l.mu.segments {
		total += s.size
	}
	return total
}

// NumSegments is the number of segments, the active one included.
func (l *Log) NumSegments() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.mu.segments)
}

// LatestEpoch is the latest leader epoch in the epoch cache, -1 if none.
func (l *Log) LatestEpoch() int32 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.epochs.latest()
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: for the largest known
// epoch <= epoch, that epoch and the start offset of the next larger epoch,
// or LogEndOffset if it is the latest. (-1, -1) if epoch is smaller than
// every known epoch (or none is known).
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.epochs.endOffsetFor(epoch, l.mu.logEndOffset)
}

// UpdateConfig replaces the configuration. An invalid config is logged and
// ignored; callers should Validate it first.
func (l *Log) UpdateConfig(cfg Config) {
	if err := cfg.Validate(); err != nil {
		l.logger.Error("storage: ignoring invalid config update", "dir", l.dir, "err", err)
		return
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.cfg = cfg
}

// activeLocked is the segment appends go to. Needs writeMu or mu.
func (l *Log) activeLocked() *segment { return l.mu.segments[len(l.mu.segments)-1] }

// Append assigns offsets to already-validated batches and writes them, in
// one write call, to the active segment (rolling first if needed). batches
// are the bytes ValidateBatches accepted and headers its result; both are
// updated in place with the assigned base offsets, the leader epoch and,
// with LogAppendTime, the new timestamp and CRC. When an fsync required by
// flush.messages or flush.ms fails, the records are written (the result is
// valid) and the error is returned.
func (l *Log) Append(batches []byte, headers []BatchHeader, opts AppendOptions) (AppendResult, error) {
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
	if flushDue {
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
	if _, err := active.file.WriteAt(batches, start); err != nil {
		// Cut whatever part landed so the file ends at a batch boundary.
		if terr := active.file.Truncate(start); terr != nil {
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
	l.mu.epochs.assign(opts.LeaderEpoch, firstOffset)
	l.mu.Unlock()

	res := AppendResult{FirstOffset: firstOffset, LastOffset: lastOffset, LogAppendTime: -1}
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
	case elapsed(active.rollBaseTime, now, cfg.SegmentMs):
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

// Roll starts a new active segment unless the current one is empty.
func (l *Log) Roll() error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.isClosed() {
		return ErrClosed
	}
	return l.rollLocked(l.now())
}

// MaybeRoll rolls when segment.ms has elapsed since the active segment's
// first append and the segment is not empty.
func (l *Log) MaybeRoll() error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.isClosed() {
		return ErrClosed
	}
	now := l.now()
	active := l.activeLocked()
	if active.size == 0 || !elapsed(active.rollBaseTime, now, l.cfg.SegmentMs) {
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
	if err := old.writeIndexes(); err != nil {
		return err
	}
	old.unsynced = true

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

func (l *Log) isClosed() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.closed
}

// Flush fsyncs every segment (log and index files) written since the last
// flush, and the directory if files were created or removed.
func (l *Log) Flush() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	_, err := l.flushLocked()
	return err
}

// FlushIfDue flushes when flush.ms elapsed since the last flush and records
// were appended since. It also closes deleted segments' files whose delay
// passed. The broker calls it periodically.
func (l *Log) FlushIfDue() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.writeMu.Lock()
	now := l.now()
	l.closeExpiredLocked(now, false)
	due := l.unflushedRecords > 0 && elapsed(l.lastFlush, now, l.cfg.FlushMs)
	l.writeMu.Unlock()
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
		epochs: l.mu.epochs.entries,
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
		if err := s.writeIndexes(); err != nil {
			l.writeMu.Unlock()
			return flushState{}, err
		}
		s.unsynced = false
		toSync = append(toSync, s)
	}
	syncDir := l.dirUnsynced
	l.dirUnsynced = false
	flushed := l.unflushedRecords
	l.writeMu.Unlock()

	err := l.syncAll(toSync, syncDir)

	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err != nil {
		for _, s := range toSync {
			s.unsynced = true
		}
		l.dirUnsynced = l.dirUnsynced || syncDir
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

// Checkpoint flushes, then durably records the recovery checkpoint (and the
// leader-epoch cache, if it changed) so that the next Open trusts everything
// flushed and scans only what comes after.
func (l *Log) Checkpoint() error {
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
		if err := writeFileAtomic(l.dir, leaderEpochFile, cache.encode()); err != nil {
			return err
		}
		l.epochsOnDisk = state.epochs
	}
	if l.checkpointOnDisk != nil && *l.checkpointOnDisk == state.checkpoint {
		return nil
	}
	if err := writeFileAtomic(l.dir, recoveryCheckpointFile, state.checkpoint.encode()); err != nil {
		return err
	}
	cp := state.checkpoint
	l.checkpointOnDisk = &cp
	return nil
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

// Close checkpoints, then closes all files. Closing twice is a no-op.
func (l *Log) Close() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if l.isClosed() {
		return nil
	}
	err := l.checkpointLocked()
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if cerr := l.closeFilesLocked(); err == nil {
		err = cerr
	}
	return err
}

// closeFilesLocked marks the log closed and closes every file it holds.
// Needs writeMu.
func (l *Log) closeFilesLocked() error {
	l.mu.Lock()
	l.mu.closed = true
	segments := l.mu.segments
	l.mu.Unlock()
	var first error
	for _, s := range segments {
		if err := s.file.Close(); err != nil && first == nil {
			first = err
		}
	}
	l.closeExpiredLocked(time.Time{}, true)
	return first
}

// Delete closes the log and removes its directory.
func (l *Log) Delete() error {
	cerr := l.Close()
	if err := os.RemoveAll(l.dir); err != nil {
		return fmt.Errorf("storage: delete %s: %w", l.dir, err)
	}
	if cerr != nil && !errors.Is(cerr, ErrClosed) {
		l.logger.Warn("storage: checkpoint before delete failed", "dir", l.dir, "err", cerr)
	}
	return nil
}
