package storage

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// ErrCorruptRemoteData reports bytes of a remote segment copy (index or
// leader-epoch data) that fail validation.
var ErrCorruptRemoteData = CorruptionErrorf("storage: corrupt remote segment data")

// SetRemoteOffset records that every offset below next is durably in remote
// storage, so that ApplyRetention may delete local copies of segments
// ending at or below it (with Config.Remote). It only moves forward: a
// value below the current one is ignored. It is kept in memory only; the
// broker restores it from its remote manifest after Open.
func (l *Log) SetRemoteOffset(next int64) {
	for {
		current := l.remoteOffset.Load()
		if next <= current || l.remoteOffset.CompareAndSwap(current, next) {
			return
		}
	}
}

// RemoteOffset is the offset below which everything is in remote storage,
// as last told by SetRemoteOffset; -1 until then.
func (l *Log) RemoteOffset() int64 { return l.remoteOffset.Load() }

// EpochEntry says that leader epoch Epoch wrote its first record at
// StartOffset (an entry of the leader-epoch cache).
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// SealedSegment is a snapshot of a sealed segment for upload to remote
// storage. The caller owns File and must Close it.
type SealedSegment struct {
	BaseOffset, NextOffset int64 // the segment holds offsets in [BaseOffset, NextOffset)
	Size                   int64 // bytes of the .log file that belong to the segment
	// MaxTimestamp is the largest batch max timestamp (-1 if none), and
	// OffsetOfMaxTimestamp the last offset of the first batch reaching it
	// (-1 if none).
	MaxTimestamp, OffsetOfMaxTimestamp int64
	// File is a duplicate descriptor of the .log file: it stays readable
	// after retention or compaction deleted the segment. Read it with ReadAt
	// only (the descriptor shares its file offset with the log's), in
	// [0, Size).
	File *os.File
	// OffsetIndex and TimeIndex are the segment's indexes in the .index and
	// .timeindex formats, encoded from memory; search them with
	// OffsetIndexLookup and TimeIndexLookup.
	OffsetIndex, TimeIndex []byte
	// TxnIndex is the segment's aborted-transaction index in the .txnindex
	// format (empty if none aborted in it); DecodeTxnIndex parses it.
	TxnIndex []byte
	// Epochs are the leader epochs covering the segment: the epoch in force
	// at BaseOffset (its StartOffset raised to BaseOffset) and every later
	// one starting below NextOffset. EncodeEpochs serializes them.
	Epochs []EpochEntry
}

// SealedSegments returns, in offset order, a snapshot of the sealed
// segments (every one but the active) whose NextOffset is above after: the
// candidates for upload to remote storage. For a compacted log only
// segments wholly below the cleaner's first dirty offset are returned, that
// is segments cleaned at least once, so that what is uploaded is compacted.
// A segment compaction emptied is left out: it has nothing to upload. On
// error no file is left open.
func (l *Log) SealedSegments(after int64) ([]SealedSegment, error) {
	// flushMu keeps every segment file open (files are closed only under
	// it), so the descriptors can be duplicated after mu is released.
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.writeMu.Lock()
	compact := l.cfg.Compact
	l.writeMu.Unlock()
	limit := int64(math.MaxInt64)
	if compact {
		limit = l.cleaner.firstDirtyOffset // guarded by flushMu
	}

	l.mu.RLock()
	if l.mu.closed {
		l.mu.RUnlock()
		return nil, ErrClosed
	}
	var views []segmentView
	for _, s := range l.mu.segments[:len(l.mu.segments)-1] {
		if s.nextOffset > limit {
			break
		}
		// A segment with no offsets (compaction emptied it; a clean
		// keeps its first segment, to keep the log's base offset) has
		// nothing to upload, and a manifest refuses an empty range.
		if s.nextOffset > after && s.nextOffset > s.baseOffset {
			views = append(views, s.view())
		}
	}
	epochs := slices.Clone(l.mu.epochs.entries)
	l.mu.RUnlock()

	out := make([]SealedSegment, 0, len(views))
	for _, v := range views {
		// The upload reads its own descriptor; opening the segment's
		// keeps the file reachable if retention or a clean removes it.
		f, err := v.seg.file.get()
		if err == nil {
			f, err = dupFile(f)
		}
		if err != nil {
			for _, s := range out {
				s.File.Close()
			}
			return nil, fmt.Errorf("storage: duplicate %s: %w", v.seg.logPath, err)
		}
		out = append(out, SealedSegment{
			BaseOffset:           v.seg.baseOffset,
			NextOffset:           v.nextOffset,
			Size:                 v.size,
			MaxTimestamp:         v.maxTimestamp,
			OffsetOfMaxTimestamp: v.offsetOfMaxTimestamp,
			File:                 f,
			OffsetIndex:          encodeOffsetIndex(v.offsetIndex),
			TimeIndex:            encodeTimeIndex(v.timeIndex),
			TxnIndex:             EncodeTxnIndex(v.txnIndex),
			Epochs:               segmentEpochs(epochs, v.seg.baseOffset, v.nextOffset),
		})
	}
	return out, nil
}

// segmentEpochs returns the epoch entries covering [base, next): the one in
// force at base, moved to base, and those starting after it below next.
func segmentEpochs(entries []epochEntry, base, next int64) []EpochEntry {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].StartOffset > base })
	var out []EpochEntry
	if i > 0 {
		out = append(out, EpochEntry{Epoch: entries[i-1].Epoch, StartOffset: base})
	}
	for ; i < len(entries) && entries[i].StartOffset < next; i++ {
		out = append(out, EpochEntry(entries[i]))
	}
	return out
}

// dupFile duplicates f's descriptor (close-on-exec) into a new *os.File.
func dupFile(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	newFd, dupErr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) {
		// As the os package does: no fork between dup and close-on-exec.
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		newFd, dupErr = syscall.Dup(int(fd))
		if dupErr == nil {
			syscall.CloseOnExec(newFd)
		}
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	return os.NewFile(uintptr(newFd), f.Name()), nil
}

// EncodeEpochs serializes leader-epoch entries in Kafka's
// leader-epoch-checkpoint text format (as Kafka uploads a segment's epochs):
//
//	0              version
//	2              number of entries
//	3 4711         epoch startOffset
//	4 4800
func EncodeEpochs(entries []EpochEntry) []byte {
	c := epochCache{entries: make([]epochEntry, len(entries))}
	for i, e := range entries {
		c.entries[i] = epochEntry(e)
	}
	return c.encode()
}

// DecodeEpochs parses what EncodeEpochs wrote, checking the version, the
// entry count, that epochs and start offsets are not negative, that epochs
// increase and that start offsets do not decrease. Malformed input yields
// an error wrapping ErrCorruptRemoteData; it never panics.
func DecodeEpochs(data []byte) ([]EpochEntry, error) {
	entries, err := decodeEpochEntries(data, "leader epochs", ErrCorruptRemoteData)
	if err != nil {
		return nil, err
	}
	out := make([]EpochEntry, len(entries))
	for i, e := range entries {
		out[i] = EpochEntry(e)
	}
	return out, nil
}

// OffsetIndex is a remote segment's .index, decoded and validated once
// (whole 8-byte entries, offsets and positions strictly increasing) by
// DecodeOffsetIndex, so lookups on the fetch path cost a binary search.
type OffsetIndex struct {
	base    int64
	entries []offsetIndexEntry
}

// DecodeOffsetIndex decodes the bytes of the .index of a segment whose base
// offset is base, with the checks the log applies to its own index files;
// malformed bytes yield an error wrapping ErrCorruptRemoteData.
func DecodeOffsetIndex(index []byte, base int64) (OffsetIndex, error) {
	if base < 0 {
		return OffsetIndex{}, fmt.Errorf("%w: negative base offset %d", ErrCorruptRemoteData, base)
	}
	entries, err := decodeOffsetIndex(index, math.MaxInt64)
	if err != nil {
		return OffsetIndex{}, fmt.Errorf("%w: %w", ErrCorruptRemoteData, err)
	}
	return OffsetIndex{base: base, entries: entries}, nil
}

// Lookup returns the position of the batch named by the last entry whose
// offset is <= offset (0 if none), as the log's own lookup does.
func (x OffsetIndex) Lookup(offset int64) int64 { return lookupPosition(x.entries, x.base, offset) }

// TimeIndex is a remote segment's .timeindex, decoded and validated once
// (whole 12-byte entries, timestamps strictly increasing, offsets not
// decreasing) by DecodeTimeIndex.
type TimeIndex struct {
	base    int64
	entries []timeIndexEntry
}

// DecodeTimeIndex decodes the bytes of the .timeindex of a segment whose
// base offset is base; malformed bytes yield an error wrapping
// ErrCorruptRemoteData.
func DecodeTimeIndex(index []byte, base int64) (TimeIndex, error) {
	if base < 0 {
		return TimeIndex{}, fmt.Errorf("%w: negative base offset %d", ErrCorruptRemoteData, base)
	}
	entries, err := decodeTimeIndex(index)
	if err != nil {
		return TimeIndex{}, fmt.Errorf("%w: %w", ErrCorruptRemoteData, err)
	}
	return TimeIndex{base: base, entries: entries}, nil
}

// Lookup has the semantics of the log's own timestamp lookup: the offset of
// the last entry whose timestamp is strictly below ts, so every record up
// to that offset is older than ts and a search for the first record at or
// after ts may start at that offset's batch. ok is false when no entry is
// older than ts (search from the segment start).
func (x TimeIndex) Lookup(ts int64) (offset int64, ok bool) {
	return lookupTimestamp(x.entries, x.base, ts)
}

// OffsetIndexLookup decodes index and looks offset up in it, in one call
// (DecodeOffsetIndex and OffsetIndex.Lookup).
func OffsetIndexLookup(index []byte, base, offset int64) (position int64, err error) {
	x, err := DecodeOffsetIndex(index, base)
	if err != nil {
		return 0, err
	}
	return x.Lookup(offset), nil
}

// TimeIndexLookup decodes index and looks ts up in it, in one call
// (DecodeTimeIndex and TimeIndex.Lookup).
func TimeIndexLookup(index []byte, base, ts int64) (offset int64, ok bool, err error) {
	x, err := DecodeTimeIndex(index, base)
	if err != nil {
		return 0, false, err
	}
	offset, ok = x.Lookup(ts)
	return offset, ok, nil
}

// FindRecordAtOrAfterTimestamp returns the first record of batch whose
// timestamp is >= ts and whose offset is >= minOffset, as the log's
// OffsetForTimestamp does within one batch. batch must start with one whole
// record batch, of any codec (bytes after it are ignored); its lengths and
// CRC are checked and malformed input yields an error wrapping
// ErrCorruptBatch or ErrUnsupportedMagic. A batch whose last offset is below
// minOffset or whose MaxTimestamp is below ts is not decompressed: found is
// false.
func FindRecordAtOrAfterTimestamp(batch []byte, ts, minOffset int64) (offset, timestamp int64, found bool, err error) {
	h, err := checkBatch(batch)
	if err != nil {
		return 0, 0, false, err
	}
	if h.LastOffset() < minOffset || h.MaxTimestamp < ts {
		return 0, 0, false, nil
	}
	rec, found, err := firstRecordMatching(batch[:h.Size()], func(r Record) bool {
		return r.Timestamp >= ts && r.Offset >= minOffset
	})
	if err != nil || !found {
		return 0, 0, false, err
	}
	return rec.Offset, rec.Timestamp, true, nil
}

// CreateAt creates a new, empty log in dir whose first segment starts at
// base, so that LogStartOffset and LogEndOffset are both base, and opens
// it. It is how a partition whose data is all in remote storage gets a
// local log again. dir is created if missing; if it already holds segment
// files (complete or from an interrupted clean) CreateAt fails with
// ErrCorruptLog and changes nothing. A stale recovery-checkpoint or
// cleaner-offset-checkpoint (they describe segments that are gone) is
// removed; a leader-epoch-checkpoint is kept and cut to base by Open. The
// log-start-offset file and the empty segment are made durable before Open
// runs, so reopening with Open yields the same start.
func CreateAt(dir string, base int64, cfg Config, opts Options) (*Log, error) {
	if base < 0 {
		return nil, fmt.Errorf("%w: create log at negative offset %d", ErrOffsetOutOfRange, base)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	for _, e := range entries {
		if isSegmentFile(e.Name()) {
			return nil, fmt.Errorf("%w: create %s at %d: it already holds segment file %s", ErrCorruptLog, dir, base, e.Name())
		}
	}
	for _, name := range []string{recoveryCheckpointFile, cleanerCheckpointFile} {
		if err := removeFileDurably(dir, name); err != nil {
			return nil, fmt.Errorf("storage: create %s: %w", dir, err)
		}
	}
	if err := WriteFileAtomic(dir, logStartOffsetFile, encodeLogStartOffset(base)); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	s, err := createSegment(dir, base)
	if err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	if err := s.file.close(); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	if err := syncPath(dir); err != nil {
		return nil, fmt.Errorf("storage: create %s: fsync dir: %w", dir, err)
	}
	return Open(dir, cfg, opts)
}

// isSegmentFile reports whether name is a segment's log or index file,
// possibly with a clean's .cleaned or .swap suffix.
func isSegmentFile(name string) bool {
	name = strings.TrimSuffix(strings.TrimSuffix(name, cleanedSuffix), swapSuffix)
	for _, suffix := range []string{logFileSuffix, offsetIndexSuffix, timeIndexSuffix, txnIndexSuffix} {
		if _, ok := parseSegmentName(name, suffix); ok {
			return true
		}
	}
	return false
}
