package storage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CleanResult describes what one Clean call did.
type CleanResult struct {
	Cleaned bool // a pass ran and its segments replaced the old ones
	// Aborted: a pass ran but retention, truncation or record deletion
	// changed the segments meanwhile, so its output was thrown away.
	Aborted    bool
	Reason     string  // why the pass ran: "dirty ratio", "max compaction lag" or "tombstones"
	DirtyRatio float64 // dirty bytes / cleanable bytes when the pass was decided

	FirstOffset, EndOffset        int64 // the offsets [FirstOffset, EndOffset) were rewritten
	SegmentsBefore, SegmentsAfter int
	BytesBefore, BytesAfter       int64
	RecordsRead                   int64
	RecordsRemoved                int64 // superseded, keyless and expired tombstones
	TombstonesRemoved             int64 // of RecordsRemoved, tombstones past their delete horizon
	BatchesRewritten              int64 // re-encoded: some records removed, or a delete horizon stamped
	BatchesDropped                int64 // every record removed
	Duration                      time.Duration
}

// cleanStep names the moments of a clean at which tests simulate a crash.
type cleanStep string

const (
	stepCleanedWritten cleanStep = "cleaned-written" // every .cleaned file written and synced
	stepSwapRenamed    cleanStep = "swap-renamed"    // one .cleaned file renamed to .swap; the first commits
	stepOldDeleted     cleanStep = "old-deleted"     // one replaced segment's files removed
	stepFinalRenamed   cleanStep = "final-renamed"   // one cleaned segment's .swap files moved into place
)

const (
	cleanedSuffix = ".cleaned"
	swapSuffix    = ".swap"

	// defaultOffsetMapBudget bounds the key → offset map of one pass (Kafka's
	// log.cleaner.dedupe.buffer.size). A pass whose dirty section has more
	// keys cleans up to the segment where the budget ran out; the next pass
	// goes on from there.
	defaultOffsetMapBudget = 128 << 20

	cleanWriteBufferSize = 1 << 20
)

// errCleanAborted reports that the segments a pass read changed before the
// swap; Clean turns it into CleanResult.Aborted.
var errCleanAborted = errors.New("storage: clean aborted: the segments changed")

// Compacted reports whether cleanup.policy includes compact.
func (l *Log) Compacted() bool { return l.compact.Load() }

// Clean runs one pass of the log cleaner if one is due; see "Log
// compaction" in the package documentation. now is the cleaner's clock for
// min/max.compaction.lag.ms and tombstone delete horizons. Reads and
// appends go on meanwhile; retention, truncation and Close win over a
// running pass (it is abandoned). Clean calls are serialized.
func (l *Log) Clean(now time.Time) (CleanResult, error) {
	return l.CleanBelow(now, math.MaxInt64)
}

// CleanBelow is Clean restricted to segments that end at or below limit.
// The broker passes the offset its producer-state snapshot covers, since
// rebuilding producer state after a crash replays the batches after the
// snapshot, which must therefore still be there.
func (l *Log) CleanBelow(now time.Time, limit int64) (CleanResult, error) {
	l.cleanMu.Lock()
	defer l.cleanMu.Unlock()
	if l.cleanFailed != nil {
		return CleanResult{}, l.cleanFailed
	}
	started := time.Now()
	plan, err := l.planClean(now, limit)
	if err != nil || plan == nil {
		return CleanResult{}, err
	}
	res, err := l.runClean(plan)
	res.Duration = time.Since(started)
	if errors.Is(err, errCleanAborted) {
		res.Cleaned, res.Aborted = false, true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	l.logger.Debug("storage: cleaned log", "dir", l.dir, "reason", res.Reason,
		"offsets", fmt.Sprintf("[%d, %d)", res.FirstOffset, res.EndOffset),
		"bytes_before", res.BytesBefore, "bytes_after", res.BytesAfter,
		"records_removed", res.RecordsRemoved, "took", res.Duration)
	return res, nil
}

// NeedsClean reports whether Clean(now) would run a pass.
func (l *Log) NeedsClean(now time.Time) bool {
	plan, err := l.planClean(now, math.MaxInt64)
	return err == nil && plan != nil
}

// cleanPlan is a pass decided on a snapshot of the segments.
type cleanPlan struct {
	cfg        Config
	now        time.Time
	segments   []segmentView // the cleanable segments, from the first one of the log
	endOffset  int64         // base offset of the segment after them
	logEnd     int64         // the log end offset then
	firstDirty int           // index in segments of the first dirty one
	dirtyRatio float64
	reason     string
}

// planClean decides whether a pass is due and over which segments. The
// cleanable segments are the log's from the first, never the active one,
// stopping at the first that reaches limit or, among the dirty ones (from
// the cleaner checkpoint's first dirty offset on), at the first whose
// newest record is within min.compaction.lag.ms of now. A pass is due when dirty
// bytes make up at least min.cleanable.dirty.ratio of the cleanable bytes,
// when the first dirty batch is older than max.compaction.lag.ms, or when a
// kept tombstone's delete horizon has passed.
func (l *Log) planClean(now time.Time, limit int64) (*cleanPlan, error) {
	l.writeMu.Lock()
	cfg := l.cfg
	l.writeMu.Unlock()
	if !cfg.Compact {
		return nil, nil
	}
	l.flushMu.Lock()
	state := l.cleaner
	l.flushMu.Unlock()

	l.mu.RLock()
	if l.mu.closed {
		l.mu.RUnlock()
		return nil, ErrClosed
	}
	segments := l.mu.segments
	logStart, logEnd := l.mu.logStartOffset, l.mu.logEndOffset
	views := make([]segmentView, 0, len(segments)-1)
	for _, s := range segments[:len(segments)-1] {
		if s.nextOffset > limit {
			break
		}
		views = append(views, s.view())
	}
	endOffset := segments[len(views)].baseOffset
	l.mu.RUnlock()

	firstDirtyOffset := max(state.firstDirtyOffset, logStart)
	firstDirty := 0
	for firstDirty < len(views) && views[firstDirty].nextOffset <= firstDirtyOffset {
		firstDirty++
	}
	nowMs := now.UnixMilli()
	if cfg.MinCompactionLagMs > 0 {
		// Only dirty segments can hold records the lag protects.
		for i := firstDirty; i < len(views); i++ {
			if v := views[i]; v.size > 0 && v.largestTimestamp() > nowMs-cfg.MinCompactionLagMs {
				views, endOffset = views[:i], v.seg.baseOffset
				break
			}
		}
	}
	if len(views) == 0 {
		return nil, nil
	}
	var cleanBytes, dirtyBytes int64
	for i, v := range views {
		if i < firstDirty {
			cleanBytes += v.size
		} else {
			dirtyBytes += v.size
		}
	}
	plan := &cleanPlan{cfg: cfg, now: now, segments: views, endOffset: endOffset, logEnd: logEnd, firstDirty: firstDirty}
	if dirtyBytes > 0 {
		plan.dirtyRatio = float64(dirtyBytes) / float64(cleanBytes+dirtyBytes)
	}
	switch {
	case dirtyBytes > 0 && plan.dirtyRatio >= cfg.MinCleanableDirtyRatio:
		plan.reason = "dirty ratio"
	case dirtyBytes > 0 && cfg.MaxCompactionLagMs < math.MaxInt64 && firstBatchTimestamp(views[firstDirty:]) <= nowMs-cfg.MaxCompactionLagMs:
		plan.reason = "max compaction lag"
	case state.tombstoneDeadline != noTimestamp && nowMs >= state.tombstoneDeadline:
		plan.reason = "tombstones"
	default:
		return nil, nil
	}
	return plan, nil
}

// largestTimestamp is segment.largestTimestamp for a snapshot.
func (v segmentView) largestTimestamp() int64 {
	if v.maxTimestamp >= 0 {
		return v.maxTimestamp
	}
	if mtime, err := v.seg.file.modTime(); err == nil {
		return mtime
	}
	return noTimestamp
}

// firstBatchTimestamp is the max timestamp of the first batch of the first
// non-empty segment (Kafka's measure of how long dirty data has waited), or
// math.MaxInt64 if it cannot be read.
func firstBatchTimestamp(views []segmentView) int64 {
	for _, v := range views {
		if v.size == 0 {
			continue
		}
		h, err := readHeader(v.seg.file, 0, v.size, BatchHeaderSize)
		if err != nil {
			return math.MaxInt64
		}
		if h.MaxTimestamp < 0 {
			return v.largestTimestamp()
		}
		return h.MaxTimestamp
	}
	return math.MaxInt64
}

// cleanedOutput is one segment a pass wrote: seg has its final paths but
// its file is open on the .cleaned (later .swap, later final) file.
type cleanedOutput struct {
	seg *segment
	// keep: installed in the log. The first output always is, even empty,
	// so that the log keeps its first base offset (the log start offset
	// after a restart); the others only when they hold batches.
	keep bool
}

func (o *cleanedOutput) paths(suffix string) []string {
	paths := []string{o.seg.logPath + suffix, o.seg.offsetIndexPath + suffix, o.seg.timeIndexPath + suffix}
	if len(o.seg.txnIndex) > 0 { // the .txnindex file exists only with entries
		paths = append(paths, o.seg.txnIndexPath+suffix)
	}
	return paths
}

// remove closes the output's file and deletes its files under suffix.
func (o *cleanedOutput) remove(suffix string) error {
	o.seg.file.close()
	var first error
	for _, p := range o.paths(suffix) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

// runClean builds the key → offset map over the dirty segments, rewrites
// every cleanable segment from the first into .cleaned files, and swaps
// them in.
func (l *Log) runClean(plan *cleanPlan) (CleanResult, error) {
	res := CleanResult{Reason: plan.reason, DirtyRatio: plan.dirtyRatio}
	if err := l.removeCleanerLeftovers(); err != nil {
		return res, err
	}

	offsets := newOffsetMap()
	end := len(plan.segments)
	for i := plan.firstDirty; i < len(plan.segments); i++ {
		if i > plan.firstDirty && offsets.bytes > l.offsetMapBudget {
			end = i
			break
		}
		err := l.forEachCleanBatch(plan.segments[i], offsets.addBatch)
		if err != nil {
			return res, l.cleanErrorBeforeCommit(plan.segments, err)
		}
	}
	views := plan.segments[:end]
	endOffset := plan.endOffset
	if end < len(plan.segments) {
		endOffset = plan.segments[end].seg.baseOffset
	}
	res.FirstOffset, res.EndOffset, res.SegmentsBefore = views[0].seg.baseOffset, endOffset, len(views)
	for _, v := range views {
		res.BytesBefore += v.size
	}

	reachesLogEnd := int64(noOffset)
	if endOffset == plan.logEnd {
		reachesLogEnd = endOffset // the active segment was empty
	}
	filter := newBatchFilter(offsets, plan.now.UnixMilli(), plan.cfg.DeleteRetentionMs, reachesLogEnd, &res)
	groups := groupForCleaning(views, plan.cfg)
	outputs := make([]*cleanedOutput, 0, len(groups))
	discard := func() {
		for _, o := range outputs {
			if err := o.remove(cleanedSuffix); err != nil {
				l.logger.Warn("storage: remove cleaner output", "dir", l.dir, "err", err)
			}
		}
	}
	for i, group := range groups {
		out, err := l.writeCleaned(group, filter, plan.cfg)
		if err != nil {
			discard()
			return res, l.cleanErrorBeforeCommit(views, err)
		}
		first, last := i == 0, i == len(groups)-1
		out.keep = first || out.seg.size > 0
		if !out.keep && !last {
			// An empty output in the middle needs no file: the swap before
			// it replaces its segments too. The last one must exist (see
			// completeCleaning) and is removed once the swap is done.
			if err := out.remove(cleanedSuffix); err != nil {
				discard()
				return res, err
			}
			continue
		}
		outputs = append(outputs, out)
	}
	if err := carryTxnIndexes(views, outputs); err != nil {
		discard()
		return res, l.cleanErrorBeforeCommit(views, err)
	}
	if err := syncPath(l.dir); err != nil {
		discard()
		return res, fmt.Errorf("storage: fsync dir %s: %w", l.dir, err)
	}
	if err := l.cleanHookError(stepCleanedWritten); err != nil {
		for _, o := range outputs {
			o.seg.file.close()
		}
		return res, err
	}

	if err := l.swapCleaned(views, outputs, endOffset, filter.deadline); err != nil {
		return res, err
	}
	res.Cleaned = true
	for _, o := range outputs {
		if o.keep {
			res.SegmentsAfter++
			res.BytesAfter += o.seg.size
		}
	}
	return res, nil
}

// cleanErrorBeforeCommit turns an error of a pass that committed nothing
// into errCleanAborted when the segments it read changed (retention or
// truncation removed or cut them, which also makes their reads fail), or
// ErrClosed when the log is closing.
func (l *Log) cleanErrorBeforeCommit(views []segmentView, err error) error {
	if l.closing.Load() {
		return ErrClosed
	}
	if intact := l.segmentsIntact(views); intact != nil {
		return intact
	}
	return err
}

// segmentsIntact returns nil if the log still starts with exactly the
// segments of views, unchanged in size; errCleanAborted or ErrClosed if not.
func (l *Log) segmentsIntact(views []segmentView) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.mu.closed {
		return ErrClosed
	}
	if len(l.mu.segments) <= len(views) {
		return errCleanAborted
	}
	for i, v := range views {
		// An aborted transaction recorded in a segment after the pass read
		// it would be lost by the swap.
		if s := l.mu.segments[i]; s != v.seg || s.size != v.size || len(s.txnIndex) != len(v.txnIndex) {
			return errCleanAborted
		}
	}
	return nil
}

// removeCleanerLeftovers deletes .cleaned files an earlier failed pass could
// not remove. A .swap file means a committed pass did not finish: only
// reopening the log (recovery) may complete it.
func (l *Log) removeCleanerLeftovers() error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("storage: clean %s: %w", l.dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, swapSuffix):
			return fmt.Errorf("storage: clean %s: unfinished swap %s; reopen the log to complete it", l.dir, name)
		case strings.HasSuffix(name, cleanedSuffix):
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
				return fmt.Errorf("storage: clean %s: %w", l.dir, err)
			}
		}
	}
	return nil
}

// forEachCleanBatch reads the segment's batches in order, each checked
// fully (lengths, magic, CRC) as recovery does. The bytes passed to fn are
// only valid during the call.
func (l *Log) forEachCleanBatch(v segmentView, fn func(batch []byte, h BatchHeader) error) error {
	f, err := v.seg.file.get()
	if err != nil {
		return fmt.Errorf("storage: clean %s: %w", v.seg.logPath, err)
	}
	sc := batchScanner{file: f, end: v.size}
	for {
		h, at, err := sc.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("storage: clean %s: %w", v.seg.logPath, err)
		}
		batch, err := sc.bytes(at, h.Size())
		if err != nil {
			return err
		}
		if err := fn(batch, h); err != nil {
			return err
		}
		if l.closing.Load() {
			return ErrClosed
		}
	}
}

// groupForCleaning splits the segments into runs that are each rewritten as
// one segment: consecutive segments while their total size fits
// segment.bytes, their index entries segment.index.bytes and their offsets
// a relative offset. The last segment is always a run of its own, which
// recovery relies on (see completeCleaning).
func groupForCleaning(views []segmentView, cfg Config) [][]segmentView {
	var groups [][]segmentView
	for i := 0; i < len(views); {
		base := views[i].seg.baseOffset
		size, entries := views[i].size, len(views[i].offsetIndex)+1
		j := i + 1
		for ; j < len(views)-1; j++ {
			v := views[j]
			lastOffset := max(v.nextOffset-1, v.seg.baseOffset)
			if size+v.size > cfg.maxSegmentSize() ||
				(entries+len(v.offsetIndex)+1)*timeIndexEntrySize > cfg.SegmentIndexBytes ||
				lastOffset-base > maxRelativeOffset {
				break
			}
			size += v.size
			entries += len(v.offsetIndex) + 1
		}
		groups = append(groups, views[i:j])
		i = j
	}
	return groups
}

// writeCleaned writes what the filter keeps of a run of segments to
// <base>.log.cleaned with its two indexes (.index.cleaned,
// .timeindex.cleaned), all fsynced, named by the run's first base offset.
func (l *Log) writeCleaned(group []segmentView, filter *batchFilter, cfg Config) (*cleanedOutput, error) {
	base := group[0].seg.baseOffset
	f, err := os.OpenFile(filepath.Join(l.dir, segmentName(base)+logFileSuffix+cleanedSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: clean: %w", err)
	}
	seg := newSegment(l.dir, base, f)
	out := &cleanedOutput{seg: seg}
	fail := func(err error) (*cleanedOutput, error) {
		out.remove(cleanedSuffix)
		return nil, err
	}

	w := bufio.NewWriterSize(f, cleanWriteBufferSize)
	var pos int64
	for _, v := range group {
		err := l.forEachCleanBatch(v, func(batch []byte, h BatchHeader) error {
			kept, err := filter.filter(batch, h)
			if err != nil || kept == nil {
				return err
			}
			if pos+int64(len(kept)) > maxSegmentPosition {
				return fmt.Errorf("storage: clean: cleaned segment %d would exceed %d bytes", base, maxSegmentPosition)
			}
			if _, err := w.Write(kept); err != nil {
				return fmt.Errorf("storage: clean: write %s: %w", f.Name(), err)
			}
			seg.trackBatch(decodeHeader(kept), pos, cfg.IndexIntervalBytes)
			pos += int64(len(kept))
			return nil
		})
		if err != nil {
			return fail(err)
		}
	}
	if err := w.Flush(); err != nil {
		return fail(fmt.Errorf("storage: clean: write %s: %w", f.Name(), err))
	}
	seg.maybeAppendTimeEntry()
	if err := writeSyncedFile(seg.offsetIndexPath+cleanedSuffix, encodeOffsetIndex(seg.offsetIndex)); err != nil {
		return fail(err)
	}
	if err := writeSyncedFile(seg.timeIndexPath+cleanedSuffix, encodeTimeIndex(seg.timeIndex)); err != nil {
		return fail(err)
	}
	seg.offsetIndexOnDisk, seg.timeIndexOnDisk = len(seg.offsetIndex), len(seg.timeIndex)
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("storage: clean: fsync %s: %w", f.Name(), err))
	}
	return out, nil
}

// writeSyncedFile creates (or replaces) path with data and fsyncs it.
func writeSyncedFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("storage: clean: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("storage: clean: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("storage: clean: fsync %s: %w", path, err)
	}
	return f.Close()
}

func (l *Log) cleanHookError(step cleanStep) error {
	if l.cleanHook == nil {
		return nil
	}
	return l.cleanHook(step)
}

// swapCleaned replaces the segments of views with the outputs, durably and
// atomically as far as recovery is concerned:
//
//  1. (done) outputs written as *.cleaned and fsynced;
//  2. recovery checkpoint refreshed, so it names a segment above them;
//  3. every *.cleaned renamed to *.swap, dir fsynced: the first rename
//     commits the pass;
//  4. the replaced segments' files removed, dir fsynced;
//  5. each *.swap renamed into place (an empty last output is removed
//     instead), dir fsynced;
//  6. the new segments published to readers; the old files close after
//     file.delete.delay.ms; the cleaner checkpoint written.
//
// Needs cleanMu; takes flushMu, so no fsync, retention or truncation runs
// meanwhile. Appends and reads go on.
func (l *Log) swapCleaned(views []segmentView, outputs []*cleanedOutput, endOffset, tombstoneDeadline int64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	discard := func(err error) error {
		for _, o := range outputs {
			if rerr := o.remove(cleanedSuffix); rerr != nil {
				l.logger.Warn("storage: remove cleaner output", "dir", l.dir, "err", rerr)
			}
		}
		return err
	}
	if err := l.segmentsIntact(views); err != nil {
		return discard(err)
	}
	if err := l.checkpointLocked(); err != nil {
		return discard(err)
	}

	committed := false
	// failed stops the pass. A simulated crash (test hook) leaves the files
	// as they are. A real error before the commit removes the output; after
	// it, the files are left to recovery and the log is closed (as Kafka
	// takes a failing log directory offline): the old segments it holds may
	// already share names with new files, so deleting them by name, as
	// retention would, could remove new data. Reopening completes the swap.
	failed := func(err error, simulated bool) error {
		if !simulated && !committed {
			return discard(err)
		}
		for _, o := range outputs {
			o.seg.file.close()
		}
		if simulated {
			return err
		}
		l.cleanFailed = fmt.Errorf("storage: clean of %s failed after its commit; the log is closed, reopen it to complete the clean: %w", l.dir, err)
		l.logger.Error("storage: clean failed after commit, closing the log", "dir", l.dir, "err", err)
		l.writeMu.Lock()
		l.closeFilesLocked()
		l.writeMu.Unlock()
		return l.cleanFailed
	}

	for _, o := range outputs {
		for _, p := range o.paths("") {
			if err := os.Rename(p+cleanedSuffix, p+swapSuffix); err != nil {
				return failed(fmt.Errorf("storage: clean: %w", err), false)
			}
			committed = true
			if err := l.cleanHookError(stepSwapRenamed); err != nil {
				return failed(err, true)
			}
		}
	}
	if err := syncPath(l.dir); err != nil {
		return failed(fmt.Errorf("storage: fsync dir %s: %w", l.dir, err), false)
	}

	replaced := make([]*segment, len(views))
	for i, v := range views {
		replaced[i] = v.seg
	}
	pinForRemoval(replaced)
	for _, v := range views {
		if err := v.seg.removeFiles(); err != nil {
			return failed(fmt.Errorf("storage: clean: delete segment %s: %w", v.seg.logPath, err), false)
		}
		if err := l.cleanHookError(stepOldDeleted); err != nil {
			return failed(err, true)
		}
	}
	if err := syncPath(l.dir); err != nil {
		return failed(fmt.Errorf("storage: fsync dir %s: %w", l.dir, err), false)
	}

	for _, o := range outputs {
		for _, p := range o.paths("") {
			var err error
			if o.keep {
				err = os.Rename(p+swapSuffix, p)
			} else {
				err = os.Remove(p + swapSuffix)
			}
			if err != nil {
				return failed(fmt.Errorf("storage: clean: %w", err), false)
			}
		}
		if err := l.cleanHookError(stepFinalRenamed); err != nil {
			return failed(err, true)
		}
	}
	if err := syncPath(l.dir); err != nil {
		return failed(fmt.Errorf("storage: fsync dir %s: %w", l.dir, err), false)
	}

	installed := make([]*segment, 0, len(outputs))
	for _, o := range outputs {
		// The open file is the renamed one. Not published yet, the
		// segment starts unopened under its final name, like those Open
		// loads (see "Lazy open").
		o.seg.file.close()
		if !o.keep {
			continue
		}
		o.seg.file = newSegmentFile(o.seg.logPath, nil)
		installed = append(installed, o.seg)
	}
	l.writeMu.Lock()
	l.mu.Lock()
	rest := l.mu.segments[len(views):]
	segments := make([]*segment, 0, len(installed)+len(rest))
	l.mu.segments = append(append(segments, installed...), rest...)
	l.mu.Unlock()
	now := l.now()
	l.closeLaterLocked(replaced, now)
	expired := l.takeExpiredLocked(now, false)
	l.writeMu.Unlock()
	l.closeFiles(expired)

	l.cleaner = cleanerCheckpoint{firstDirtyOffset: endOffset, tombstoneDeadline: tombstoneDeadline}
	if err := l.writeFile(cleanerCheckpointFile, l.cleaner.encode()); err != nil {
		// Only an optimisation: the next pass rereads more.
		l.logger.Warn("storage: write cleaner checkpoint", "dir", l.dir, "err", err)
	}
	return nil
}
