package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Open opens or creates the log in dir and recovers it; see "Recovery" in
// the package documentation.
func Open(dir string, cfg Config, opts Options) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if !opts.Fresh {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("storage: open %s: %w", dir, err)
		}
	}
	l := &Log{dir: dir, now: opts.Now, logger: opts.Logger, cfg: cfg}
	if opts.Fresh {
		l.materialize = opts.Materialize
	}
	l.lastFlush = l.now()
	l.compact.Store(cfg.Compact)
	l.remoteOffset.Store(noOffset)
	l.offsetMapBudget = defaultOffsetMapBudget
	l.scanBudget = recoveryScanBudget
	l.cleaner = newCleanerCheckpoint()
	r := &recovery{log: l, logStartFromFile: -1}
	run := r.run
	if opts.Fresh {
		run = r.fresh
	}
	if err := run(); err != nil {
		for _, s := range r.segments {
			s.file.close()
		}
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	if r.changed {
		// Make the repaired state durable at once: a cut tail, removed
		// segments or rebuilt indexes must not come back after another
		// crash. A tail that was only scanned needs nothing: it is still
		// after the recovery checkpoint on disk, so another crash scans it
		// again, and the next background flush (after a roll) or
		// checkpoint moves the recovery point past it. Not fsyncing here
		// keeps a restart's cost at reading the unflushed bytes.
		if err := l.Checkpoint(); err != nil {
			l.Close()
			return nil, fmt.Errorf("storage: open %s: %w", dir, err)
		}
	}
	// Close what recovery opened: every segment file is opened again on
	// first use (see "Lazy open" in the package documentation), so an
	// idle partition holds no file descriptor. Nothing can hold the files
	// yet: the log is not returned.
	for _, s := range r.segments {
		s.file.release()
	}
	return l, nil
}

// recovery holds the state of one Open while it rebuilds the Log.
type recovery struct {
	log              *Log
	segments         []*segment
	checkpoint       *recoveryCheckpoint
	epochs           epochCache
	logStartFromFile int64 // -1 if there is no log-start-offset file
	stats            RecoveryStats
	truncatedAt      int  // index of the segment whose tail was cut, -1 if none
	changed          bool // files were repaired (indexes rebuilt, a tail cut, files removed): checkpoint at once
}

func (r *recovery) run() error {
	l := r.log
	if err := r.completeCleaning(); err != nil {
		return err
	}
	bases, err := r.cleanDirectory()
	if err != nil {
		return err
	}
	if err := r.loadMetadata(); err != nil {
		return err
	}
	r.truncatedAt = -1
	for i, base := range bases {
		nextBase := int64(-1)
		if i+1 < len(bases) {
			nextBase = bases[i+1]
		}
		if err := r.loadSegment(base, nextBase); err != nil {
			return err
		}
		if r.truncatedAt >= 0 {
			// Segments after a cut one cannot follow on from it.
			for _, later := range bases[i+1:] {
				r.removeFiles(newSegment(l.dir, later, nil), "follows a segment whose tail was cut")
			}
			break
		}
	}
	r.dropEmptySegments()
	if err := r.checkContinuity(); err != nil {
		return err
	}
	for _, s := range r.segments {
		if err := r.loadTxnIndex(s); err != nil {
			return err
		}
	}
	if len(r.segments) == 0 {
		// cleanDirectory removed every index without a .log, so no stale
		// index can be taken for this segment's: its file is created by
		// its first use, like a fresh log's.
		s := freshSegment(l.dir, max(r.logStartFromFile, 0))
		s.unsynced = true
		l.dirUnsynced = true
		r.segments = []*segment{s}
	}
	r.finish()
	return nil
}

// fresh is run for a directory the caller has just made (Options.Fresh):
// no files to clean, no checkpoints to read, no segments to scan, and the
// first segment's file is created when first used.
//
// The directory needs no fsync of its own (dirUnsynced): it is created
// (l.created), so the first flush of records syncs it, its files and its
// parent (SyncCreatedDir); an empty log has nothing to lose.
func (r *recovery) fresh() error {
	l := r.log
	s := freshSegment(l.dir, 0)
	s.file.beforeCreate = l.ensureDir
	s.unsynced = true
	l.created = true
	r.segments = []*segment{s}
	r.finish()
	return nil
}

// cleanDirectory removes temporary and deleted files and index files without
// a log file, and returns the base offsets of the segments, in order.
func (r *recovery) cleanDirectory() ([]int64, error) {
	l := r.log
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	var bases []int64
	indexes := map[string]int64{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		switch {
		case strings.HasSuffix(name, tmpSuffix) || strings.HasSuffix(name, deletedSuffix):
			l.logger.Info("storage: removing stray file", "dir", l.dir, "file", name)
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
				return nil, err
			}
			r.changed = true
		case strings.HasSuffix(name, logFileSuffix):
			base, ok := parseSegmentName(name, logFileSuffix)
			if !ok {
				l.logger.Warn("storage: ignoring unrecognised log file", "dir", l.dir, "file", name)
				continue
			}
			bases = append(bases, base)
		default:
			for _, suffix := range []string{offsetIndexSuffix, timeIndexSuffix, txnIndexSuffix} {
				if base, ok := parseSegmentName(name, suffix); ok {
					indexes[name] = base
				}
			}
		}
	}
	slices.Sort(bases)
	for name, base := range indexes {
		if _, found := slices.BinarySearch(bases, base); !found {
			l.logger.Info("storage: removing orphaned index file", "dir", l.dir, "file", name)
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
				return nil, err
			}
			r.changed = true
		}
	}
	return bases, nil
}

// completeCleaning finishes or rolls back a clean that a crash interrupted
// (see "Log compaction" in the package documentation). Without a .swap
// file the clean never committed: its .cleaned files are removed. With one,
// it did, and every .cleaned file was complete and fsynced before that
// first rename: the remaining .cleaned files become .swap files, the
// segments the swaps replace are removed, and the swaps are renamed into
// place. A <base>.log.swap replaces the segments whose base offset lies
// between its own and the next .log.swap's; the last one replaces only the
// segment of its own base, since the cleaner always rewrites its last
// segment alone. Every step can be repeated, so a crash during recovery is
// recovered the same way.
func (r *recovery) completeCleaning() error {
	l := r.log
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	var cleaned, swaps []string
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasSuffix(name, cleanedSuffix):
			cleaned = append(cleaned, name)
		case strings.HasSuffix(name, swapSuffix):
			swaps = append(swaps, name)
		}
	}
	if len(swaps) == 0 {
		for _, name := range cleaned {
			l.logger.Info("storage: removing output of an unfinished clean", "dir", l.dir, "file", name)
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
				return err
			}
			r.changed = true
		}
		return nil
	}

	l.logger.Warn("storage: completing an interrupted clean", "dir", l.dir, "swap_files", len(swaps), "cleaned_files", len(cleaned))
	r.changed = true
	for _, name := range cleaned {
		swap := strings.TrimSuffix(name, cleanedSuffix) + swapSuffix
		if err := os.Rename(filepath.Join(l.dir, name), filepath.Join(l.dir, swap)); err != nil {
			return err
		}
		swaps = append(swaps, swap)
	}
	var swapBases []int64
	for _, name := range swaps {
		if base, ok := parseSegmentName(strings.TrimSuffix(name, swapSuffix), logFileSuffix); ok {
			swapBases = append(swapBases, base)
		}
	}
	slices.Sort(swapBases)
	for _, e := range entries {
		base, ok := parseSegmentName(e.Name(), logFileSuffix)
		if !ok || len(swapBases) == 0 || base < swapBases[0] {
			continue
		}
		i, found := slices.BinarySearch(swapBases, base)
		if !found {
			i-- // the last swap below base
		}
		if found || i < len(swapBases)-1 {
			if err := newSegment(l.dir, base, nil).removeFiles(); err != nil {
				return err
			}
		}
	}
	if err := syncPath(l.dir); err != nil {
		return err
	}
	slices.Sort(swaps) // in base offset order
	for _, name := range swaps {
		if err := os.Rename(filepath.Join(l.dir, name), filepath.Join(l.dir, strings.TrimSuffix(name, swapSuffix))); err != nil {
			return err
		}
	}
	return syncPath(l.dir)
}

// loadMetadata reads the recovery checkpoint, the leader-epoch cache and
// the log start offset. A damaged checkpoint or epoch file only costs a full
// scan; a damaged log-start-offset file is an error, since ignoring it would
// resurrect deleted records.
func (r *recovery) loadMetadata() error {
	l := r.log
	data, err := readOptionalFile(filepath.Join(l.dir, recoveryCheckpointFile))
	if err != nil {
		return err
	}
	if data != nil {
		cp, err := decodeRecoveryCheckpoint(data)
		if err != nil {
			l.logger.Warn("storage: ignoring recovery checkpoint, scanning the whole log", "dir", l.dir, "err", err)
		} else {
			r.checkpoint = &cp
		}
	}

	data, err = readOptionalFile(filepath.Join(l.dir, leaderEpochFile))
	if err != nil {
		return err
	}
	if data != nil {
		epochs, err := decodeEpochCache(data)
		if err != nil {
			l.logger.Warn("storage: ignoring leader-epoch checkpoint, rebuilding it from the log", "dir", l.dir, "err", err)
			r.checkpoint = nil
		} else {
			r.epochs = epochs
			l.epochsOnDisk = epochs.entries
		}
	}
	if r.checkpoint != nil && r.epochs.latest() < r.checkpoint.latestEpoch {
		l.logger.Warn("storage: leader-epoch checkpoint older than recovery checkpoint, scanning the whole log", "dir", l.dir)
		r.checkpoint = nil
	}
	r.stats.UsedCheckpoint = r.checkpoint != nil
	l.checkpointOnDisk = r.checkpoint
	// A recovery checkpoint is written only after a flush of records,
	// and that flush made the directory durable. Without one the
	// directory may be new, or its creation never reached the disk (a
	// process crash before the first flush leaves it in the page cache
	// only): the first flush of records makes it durable (created).
	l.created = r.checkpoint == nil

	data, err = readOptionalFile(filepath.Join(l.dir, cleanerCheckpointFile))
	if err != nil {
		return err
	}
	if data != nil {
		if cp, err := decodeCleanerCheckpoint(data); err != nil {
			l.logger.Warn("storage: ignoring cleaner checkpoint, the next clean rereads the whole log", "dir", l.dir, "err", err)
		} else {
			l.cleaner = cp
		}
	}

	data, err = readOptionalFile(filepath.Join(l.dir, logStartOffsetFile))
	if err != nil {
		return err
	}
	if data != nil {
		if r.logStartFromFile, err = decodeLogStartOffset(data); err != nil {
			return err
		}
	}
	return nil
}

// loadSegment recovers one segment by the rules of its place relative to
// the checkpoint: trusted below it (its log file is not even opened),
// scanned from the checkpoint position in it, scanned wholly after it.
func (r *recovery) loadSegment(base, nextBase int64) error {
	l := r.log
	s := newSegment(l.dir, base, nil)
	path := s.logPath
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	r.segments = append(r.segments, s)
	fileSize := st.Size()

	cp := r.checkpoint
	switch {
	case cp != nil && base < cp.segmentBase && nextBase >= 0 && nextBase <= cp.segmentBase:
		if err := r.loadTrusted(s, fileSize, nextBase); err == nil {
			return nil
		} else if errors.Is(err, ErrCorruptLog) {
			return err
		} else {
			l.logger.Warn("storage: rebuilding index", "segment", path, "err", err)
			r.stats.IndexesRebuilt++
			r.changed = true
		}
	case cp != nil && base == cp.segmentBase:
		if err := r.loadCheckpointed(s, fileSize); err == nil {
			return r.scan(s, fileSize, cp.position)
		} else if errors.Is(err, ErrCorruptLog) {
			return err
		} else {
			l.logger.Warn("storage: cannot resume at the checkpoint, scanning the segment", "segment", path, "err", err)
			r.stats.IndexesRebuilt++
			r.changed = true
		}
	}
	return r.scan(s, fileSize, 0)
}

// loadTrusted loads a segment wholly below the checkpoint from its index
// files, without opening the log file: its first batch is checked when
// the file is first opened (segmentFile.checkBase).
func (r *recovery) loadTrusted(s *segment, fileSize, nextBase int64) error {
	offsets, times, err := readIndexes(s, fileSize, nextBase, false)
	if err != nil {
		return err
	}
	s.offsetIndex, s.offsetIndexOnDisk = offsets, len(offsets)
	s.timeIndex, s.timeIndexOnDisk = times, len(times)
	s.size, s.nextOffset = fileSize, nextBase
	if fileSize == 0 {
		s.nextOffset = s.baseOffset
	}
	if n := len(times); n > 0 {
		s.maxTimestamp, s.offsetOfMaxTimestamp = times[n-1].timestamp, s.baseOffset+int64(times[n-1].relativeOffset)
	}
	if fileSize > 0 {
		s.file.checkBase = s.baseOffset
	}
	return nil
}

// loadCheckpointed loads the checkpointed segment up to the checkpoint
// position, keeping only index entries for that prefix.
func (r *recovery) loadCheckpointed(s *segment, fileSize int64) error {
	cp := r.checkpoint
	if fileSize < cp.position {
		return fmt.Errorf("file has %d bytes, checkpoint says %d", fileSize, cp.position)
	}
	if cp.nextOffset < s.baseOffset || (cp.position == 0) != (cp.nextOffset == s.baseOffset) {
		return fmt.Errorf("checkpoint offset %d at position %d does not fit the segment", cp.nextOffset, cp.position)
	}
	if cp.offsetOfMaxTimestamp != noOffset && (cp.offsetOfMaxTimestamp < s.baseOffset || cp.offsetOfMaxTimestamp >= cp.nextOffset) {
		return fmt.Errorf("checkpoint max timestamp offset %d outside the segment", cp.offsetOfMaxTimestamp)
	}
	if cp.position > 0 {
		f, err := s.file.get()
		if err != nil {
			return err
		}
		if err := checkFirstBatch(f, s.logPath, s.baseOffset); err != nil {
			return err
		}
	}
	// A segment's index files are created by the first flush after it
	// holds a batch (writeIndexes), and the checkpoint is written after
	// that flush fsynced them and the directory: they are absent only if
	// the checkpointed prefix is empty. Missing otherwise, they are rebuilt.
	offsets, times, err := readIndexes(s, fileSize, -1, cp.position == 0)
	if err != nil {
		return err
	}
	keepOffsets := 0
	for keepOffsets < len(offsets) && int64(offsets[keepOffsets].position) < cp.position {
		keepOffsets++
	}
	keepTimes := 0
	for keepTimes < len(times) && s.baseOffset+int64(times[keepTimes].relativeOffset) < cp.nextOffset {
		keepTimes++
	}
	if keepTimes > 0 && times[keepTimes-1].timestamp > cp.maxTimestamp {
		return fmt.Errorf("time index entry %d exceeds the checkpointed max timestamp %d", times[keepTimes-1].timestamp, cp.maxTimestamp)
	}
	s.offsetIndex, s.offsetIndexOnDisk = offsets[:keepOffsets:keepOffsets], keepOffsets
	s.timeIndex, s.timeIndexOnDisk = times[:keepTimes:keepTimes], keepTimes
	// Cut entries past the checkpoint from the files. Usually there are
	// none (index entries reach the files only at a flush), and a restart
	// writes nothing.
	if keepOffsets < len(offsets) || keepTimes < len(times) {
		if err := s.truncateIndexFiles(); err != nil {
			return err
		}
	}
	s.size, s.nextOffset = cp.position, cp.nextOffset
	s.maxTimestamp, s.offsetOfMaxTimestamp = cp.maxTimestamp, cp.offsetOfMaxTimestamp
	s.bytesSinceIndexEntry = cp.position
	if keepOffsets > 0 {
		s.bytesSinceIndexEntry = cp.position - int64(offsets[keepOffsets-1].position)
	}
	return nil
}

// checkFirstBatch errors out if a trusted segment's non-empty file f
// starts with a batch below the offset base it is named for. It may start
// above it: a cleaned segment keeps the name of the first segment it
// replaced.
func checkFirstBatch(f *os.File, path string, base int64) error {
	first, err := firstBatchOffset(f)
	if err != nil {
		return fmt.Errorf("storage: read %s: %w", path, err)
	}
	if first < base {
		return fmt.Errorf("%w: segment %s is named for offset %d but its first batch has offset %d", ErrCorruptLog, path, base, first)
	}
	return nil
}

// readIndexes reads and validates a segment's index files. nextBase, if
// known (>= 0), bounds the offsets they may name. absentIsEmpty reads a
// missing file as one without entries (the active segment's).
func readIndexes(s *segment, fileSize, nextBase int64, absentIsEmpty bool) ([]offsetIndexEntry, []timeIndexEntry, error) {
	s.indexFilesExist = true
	read := func(path string) ([]byte, error) {
		data, err := os.ReadFile(path)
		if absentIsEmpty && errors.Is(err, os.ErrNotExist) {
			s.indexFilesExist = false
			return nil, nil
		}
		return data, err
	}
	data, err := read(s.offsetIndexPath)
	if err != nil {
		return nil, nil, err
	}
	offsets, err := decodeOffsetIndex(data, fileSize)
	if err != nil {
		return nil, nil, err
	}
	if data, err = read(s.timeIndexPath); err != nil {
		return nil, nil, err
	}
	times, err := decodeTimeIndex(data)
	if err != nil {
		return nil, nil, err
	}
	if nextBase >= 0 {
		limit := nextBase - s.baseOffset
		if n := len(offsets); n > 0 && int64(offsets[n-1].relativeOffset) >= limit {
			return nil, nil, fmt.Errorf("%w: offset index names offsets past the segment", errBadIndex)
		}
		if n := len(times); n > 0 && int64(times[n-1].relativeOffset) >= limit {
			return nil, nil, fmt.Errorf("%w: time index names offsets past the segment", errBadIndex)
		}
	}
	return offsets, times, nil
}

// scan reads and CRC-checks the batches of s from pos (a batch boundary
// whose state s already holds) to the end of the file, extending the
// indexes, and cuts the file after the last valid batch.
func (r *recovery) scan(s *segment, fileSize, pos int64) error {
	l := r.log
	if pos == 0 {
		file := s.file
		*s = *newSegment(l.dir, s.baseOffset, nil)
		s.file = file
		if err := s.truncateIndexFiles(); err != nil {
			return err
		}
	}
	if fileSize <= pos {
		return nil // nothing after the checkpoint: the file stays unopened
	}
	r.stats.SegmentsScanned++
	r.stats.BytesScanned += fileSize - pos
	s.unsynced = true // its index entries are written by the next flush
	f, err := s.file.get()
	if err != nil {
		return err
	}
	sc := batchScanner{file: f, pos: pos, end: fileSize}
	var stop error
	for {
		h, at, err := sc.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			stop = err
			break
		}
		if at == 0 && h.BaseOffset < s.baseOffset {
			return fmt.Errorf("%w: segment %s is named for offset %d but its first batch has offset %d", ErrCorruptLog, s.logPath, s.baseOffset, h.BaseOffset)
		}
		if h.BaseOffset < s.nextOffset {
			stop = fmt.Errorf("%w: batch offset %d below the expected %d", ErrCorruptBatch, h.BaseOffset, s.nextOffset)
			break
		}
		s.trackBatch(h, at, l.cfg.IndexIntervalBytes)
		r.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset)
	}
	if stop == nil {
		return nil
	}
	if !errors.Is(stop, ErrCorruptBatch) && !errors.Is(stop, ErrUnsupportedMagic) {
		return fmt.Errorf("storage: scan %s: %w", s.logPath, stop)
	}
	l.logger.Warn("storage: cutting log tail", "segment", s.logPath, "at", s.size, "bytes", fileSize-s.size, "reason", stop)
	if err := f.Truncate(s.size); err != nil {
		return fmt.Errorf("storage: cut %s: %w", s.logPath, err)
	}
	r.stats.BytesTruncated += fileSize - s.size
	r.truncatedAt = len(r.segments) - 1
	r.changed = true
	return nil
}

// removeFiles deletes a segment recovery gave up on.
func (r *recovery) removeFiles(s *segment, why string) {
	r.log.logger.Warn("storage: removing segment", "segment", s.logPath, "reason", why)
	if err := s.removeFiles(); err != nil {
		r.log.logger.Error("storage: remove segment", "segment", s.logPath, "err", err)
	}
	r.stats.SegmentsRemoved++
	r.changed = true
	r.log.dirUnsynced = true
}

// dropEmptySegments removes empty segments other than the first and the
// last. The first stays: cleaning may have emptied it, and its name still
// holds the log start offset.
func (r *recovery) dropEmptySegments() {
	kept := r.segments[:0]
	for i, s := range r.segments {
		if s.size == 0 && i > 0 && i < len(r.segments)-1 {
			s.file.close()
			r.removeFiles(s, "empty segment before the last")
			continue
		}
		kept = append(kept, s)
	}
	r.segments = kept
}

// checkContinuity refuses segments whose offsets overlap.
func (r *recovery) checkContinuity() error {
	for i := 1; i < len(r.segments); i++ {
		prev, s := r.segments[i-1], r.segments[i]
		if prev.nextOffset > s.baseOffset {
			return fmt.Errorf("%w: segment %s ends at offset %d, after the start of %s", ErrCorruptLog, prev.logPath, prev.nextOffset, s.logPath)
		}
	}
	return nil
}

// finish publishes the recovered state into the Log.
func (r *recovery) finish() {
	l := r.log
	active := r.segments[len(r.segments)-1]
	leo := active.nextOffset
	start := max(r.segments[0].baseOffset, r.logStartFromFile)
	if start > leo {
		l.logger.Warn("storage: log start offset beyond the recovered log end", "dir", l.dir, "log_start_offset", start, "log_end_offset", leo)
		start = leo
	}
	r.epochs.truncateFromEnd(leo)
	r.epochs.truncateFromStart(start)
	active.rollBaseTime = rollBaseTime(active, l.now())

	l.stats = r.stats
	l.mu.segments = r.segments
	l.mu.logStartOffset = start
	l.mu.logEndOffset = leo
	l.mu.epochs = r.epochs
	// Debug: a broker opening thousands of logs logs one summary line
	// (RecoveryStats) instead.
	l.logger.Debug("storage: opened log", "dir", l.dir, "segments", len(r.segments),
		"log_start_offset", start, "log_end_offset", leo,
		"bytes_scanned", r.stats.BytesScanned, "bytes_truncated", r.stats.BytesTruncated)
}

// rollBaseTime estimates when the reopened active segment got its first
// append, for segment.ms: its first batch's max timestamp, but never later
// than now (Kafka also measures segment age by record timestamps).
func rollBaseTime(s *segment, now time.Time) time.Time {
	if s.size == 0 {
		return now
	}
	h, err := readHeader(s.file, 0, s.size, BatchHeaderSize)
	if err != nil || h.MaxTimestamp <= 0 || h.MaxTimestamp > now.UnixMilli() {
		return now
	}
	return time.UnixMilli(h.MaxTimestamp)
}
