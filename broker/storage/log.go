package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

var (
	// ErrOffsetOutOfRange reports an offset outside [LogStartOffset, LogEndOffset].
	ErrOffsetOutOfRange = errors.New("storage: offset out of range")
	// ErrCorruptLog marks on-disk state that recovery cannot repair by
	// cutting a torn tail, such as a segment whose name does not match its
	// first batch, or a damaged log-start-offset file.
	ErrCorruptLog = CorruptionErrorf("storage: corrupt log directory")
	// ErrClosed reports a call on a closed Log.
	ErrClosed = errors.New("storage: log closed")
)

// Log is the storage of one partition: a directory of segments. Reads are
// safe concurrently with everything; mutations serialize internally.
//
// Lock order: cleanMu, then flushMu, then writeMu, then mu. cleanMu
// serializes Clean, which reads and writes files without other locks and
// takes flushMu only to swap segments. flushMu serializes fsyncs and the
// operations that delete or truncate files, so no file is closed or cut
// under a running fsync. writeMu serializes appends and rolls. mu guards the
// state readers look at and is never held across I/O.
type Log struct {
	dir    string
	now    func() time.Time
	logger *slog.Logger
	stats  RecoveryStats // written by Open only
	// scanBudget: recoveryScanBudget (tests lower it). Set by Open only.
	scanBudget int64

	// A log opened with Options.Materialize has no directory until it
	// first writes a file: ensureDir runs materialize once, under dirMu,
	// and sets dirReady. dirMu guards only that one creation.
	materialize func() error
	dirReady    atomic.Bool
	dirMu       sync.Mutex

	compact atomic.Bool // cfg.Compact, for Compacted without a lock
	// remoteOffset: every offset below it is in remote storage (-1: none
	// known). Set by the broker through SetRemoteOffset, never persisted.
	remoteOffset atomic.Int64

	cleanMu sync.Mutex
	closing atomic.Bool // set by Close first, so that a running Clean gives up
	// Guarded by cleanMu.
	cleanFailed     error                 // a committed swap could not finish; reopening completes it
	offsetMapBudget int64                 // bytes the key → offset map of one pass may take
	cleanHook       func(cleanStep) error // tests: a non-nil error simulates a crash at that step

	flushMu sync.Mutex
	// Guarded by flushMu.
	checkpointOnDisk *recoveryCheckpoint // nil when there is no valid checkpoint file
	epochsOnDisk     []epochEntry
	cleaner          cleanerCheckpoint // what the last clean did, as in its checkpoint file

	writeMu sync.Mutex
	// Guarded by writeMu.
	cfg              Config
	unflushedRecords int64
	lastFlush        time.Time
	dirUnsynced      bool // files were created or removed since the last flush
	// created: the directory is not known durable (no recovery
	// checkpoint at Open); the first flush of a log with records makes
	// all of it durable (SyncCreatedDir).
	created       bool
	pendingCloses []pendingClose

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
	file     *segmentFile
	deadline time.Time
}

// AppendOptions control one Append.
type AppendOptions struct {
	LeaderEpoch int32 // stamped into every batch; a new epoch starts a leader-epoch entry
	// LogAppendTime, if > 0, becomes every batch's MaxTimestamp with the
	// LogAppendTime attribute set and the CRC recomputed.
	LogAppendTime int64
	// KeepOffsets appends a leader's batches as a follower does: each
	// batch keeps its base offset and partition leader epoch (LeaderEpoch
	// and LogAppendTime are ignored). Base offsets must not go below the
	// log end offset and must increase; gaps (a compacted leader's) are
	// kept.
	KeepOffsets bool
	// DeferFlush leaves an fsync that flush.messages or flush.ms make due
	// to the caller, who calls Flush once it holds no lock of its own
	// (AppendResult.FlushDue says so): a partition's append lock is never
	// held across the disk.
	DeferFlush bool
}

// AppendResult describes what Append assigned.
type AppendResult struct {
	FirstOffset   int64
	LastOffset    int64
	LogAppendTime int64 // -1 if not used
	LeaderEpoch   int32 // the epoch stamped (AppendOptions.LeaderEpoch)
	FlushDue      bool  // with DeferFlush: the caller must Flush now
}

// FileChunk is a byte range of a segment file to send with sendfile.
type FileChunk struct {
	File *os.File
	Pos  int64
	Len  int64
}

// ReadAll preads the range.
func (c FileChunk) ReadAll() ([]byte, error) {
	return c.ReadInto(nil)
}

// ReadInto preads the range into dst's capacity when it is large enough
// (dst's contents are overwritten), into a new buffer otherwise.
func (c FileChunk) ReadInto(dst []byte) ([]byte, error) {
	if c.Len <= 0 {
		return []byte{}, nil
	}
	buf := dst[:0]
	if int64(cap(buf)) < c.Len {
		buf = make([]byte, c.Len)
	}
	buf = buf[:c.Len]
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
	l.compact.Store(cfg.Compact)
}

// activeLocked is the segment appends go to. Needs writeMu or mu.
func (l *Log) activeLocked() *segment { return l.mu.segments[len(l.mu.segments)-1] }

func (l *Log) isClosed() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.closed
}

// Close checkpoints, then closes all files. Closing twice is a no-op. A
// running Clean is abandoned (its output removed) before the files close.
func (l *Log) Close() error {
	l.closing.Store(true)
	l.cleanMu.Lock()
	defer l.cleanMu.Unlock()
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
		if err := s.file.close(); err != nil && first == nil {
			first = err
		}
	}
	l.closeFiles(l.takeExpiredLocked(time.Time{}, true))
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

// Config is the log's current configuration.
func (l *Log) Config() Config {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	return l.cfg
}

// ensureDir makes the log's directory if it was opened without one
// (Options.Materialize); every write of a file in the directory calls it
// first. A failure is returned to that write and retried by the next.
func (l *Log) ensureDir() error {
	if l.materialize == nil || l.dirReady.Load() {
		return nil
	}
	l.dirMu.Lock()
	defer l.dirMu.Unlock()
	if l.dirReady.Load() {
		return nil
	}
	if err := l.materialize(); err != nil {
		return fmt.Errorf("storage: create %s: %w", l.dir, err)
	}
	l.dirReady.Store(true)
	return nil
}

// EnsureDir makes the log's directory now if it was opened without one,
// for callers that write their own files beside the log's (the producer
// snapshot) or copy the directory (a move between log dirs).
func (l *Log) EnsureDir() error { return l.ensureDir() }

// writeFile writes name in the log's directory atomically
// (WriteFileAtomic), making the directory first if needed.
func (l *Log) writeFile(name string, data []byte) error {
	if err := l.ensureDir(); err != nil {
		return err
	}
	return WriteFileAtomic(l.dir, name, data)
}
