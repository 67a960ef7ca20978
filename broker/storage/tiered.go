package storage

import (
	"encoding/binary"
	"errors"
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
var ErrCorruptRemoteData = errors.New("storage: corrupt remote segment data")

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
// On error no file is left open.
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
		if s.nextOffset > after {
			views = append(views, s.view())
		}
	}
	epochs := slices.Clone(l.mu.epochs.entries)
	l.mu.RUnlock()

	out := make([]SealedSegment, 0, len(views))
	for _, v := range views {
		f, err := dupFile(v.seg.file)
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

// OffsetIndexLookup searches index, the bytes of a segment's .index (see
// "Offset index" in the package documentation) whose base offset is base,
// as the log does in memory: it returns the position of the batch named by
// the last entry whose offset is <= offset, 0 if there is none. Reading
// batch headers forward from there finds the batch holding offset. The
// whole index is validated first (whole 8-byte entries, offsets and
// positions strictly increasing); malformed bytes yield an error wrapping
// ErrCorruptRemoteData.
func OffsetIndexLookup(index []byte, base, offset int64) (position int64, err error) {
	if base < 0 {
		return 0, fmt.Errorf("%w: negative base offset %d", ErrCorruptRemoteData, base)
	}
	if len(index)%offsetIndexEntrySize != 0 {
		return 0, fmt.Errorf("%w: offset index size %d is not a multiple of %d", ErrCorruptRemoteData, len(index), offsetIndexEntrySize)
	}
	n := len(index) / offsetIndexEntrySize
	entry := func(i int) (rel, pos uint32) {
		b := index[i*offsetIndexEntrySize:]
		return binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	}
	for i := 1; i < n; i++ {
		prevRel, prevPos := entry(i - 1)
		rel, pos := entry(i)
		if rel <= prevRel || pos <= prevPos {
			return 0, fmt.Errorf("%w: offset index entry %d not increasing", ErrCorruptRemoteData, i)
		}
	}
	rel := offset - base
	if rel < 0 {
		return 0, nil
	}
	i := sort.Search(n, func(i int) bool {
		r, _ := entry(i)
		return int64(r) > rel
	})
	if i == 0 {
		return 0, nil
	}
	_, pos := entry(i - 1)
	return int64(pos), nil
}

// TimeIndexLookup searches index, the bytes of a segment's .timeindex (see
// "Time index" in the package documentation) whose base offset is base,
// with the semantics of the log's own timestamp lookup (lookupTimestamp):
// it returns the offset of the last entry whose timestamp is strictly below
// ts, so every record up to that offset is older than ts and a search for
// the first record at or after ts may start at that offset's batch
// (OffsetIndexLookup). ok is false when no entry is older than ts (search
// from the segment start). The whole index is validated first (whole
// 12-byte entries, timestamps strictly increasing, offsets not decreasing);
// malformed bytes yield an error wrapping ErrCorruptRemoteData.
func TimeIndexLookup(index []byte, base, ts int64) (offset int64, ok bool, err error) {
	if base < 0 {
		return 0, false, fmt.Errorf("%w: negative base offset %d", ErrCorruptRemoteData, base)
	}
	if len(index)%timeIndexEntrySize != 0 {
		return 0, false, fmt.Errorf("%w: time index size %d is not a multiple of %d", ErrCorruptRemoteData, len(index), timeIndexEntrySize)
	}
	n := len(index) / timeIndexEntrySize
	entry := func(i int) (timestamp int64, rel uint32) {
		b := index[i*timeIndexEntrySize:]
		return int64(binary.BigEndian.Uint64(b)), binary.BigEndian.Uint32(b[8:])
	}
	for i := 1; i < n; i++ {
		prevTs, prevRel := entry(i - 1)
		timestamp, rel := entry(i)
		if timestamp <= prevTs || rel < prevRel {
			return 0, false, fmt.Errorf("%w: time index entry %d not increasing", ErrCorruptRemoteData, i)
		}
	}
	i := sort.Search(n, func(i int) bool {
		timestamp, _ := entry(i)
		return timestamp >= ts
	})
	if i == 0 {
		return 0, false, nil
	}
	_, rel := entry(i - 1)
	return base + int64(rel), true, nil
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
	if err := writeFileAtomic(dir, logStartOffsetFile, encodeLogStartOffset(base)); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	s, err := createSegment(dir, base)
	if err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	if err := s.file.Close(); err != nil {
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
