package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	logFileSuffix      = ".log"
	offsetIndexSuffix  = ".index"
	timeIndexSuffix    = ".timeindex"
	segmentNameDigits  = 20
	maxRelativeOffset  = math.MaxInt32 // Kafka keeps relative offsets within an int32
	maxSegmentPosition = math.MaxInt32 // Kafka keeps positions within an int32
	batchPrefixSize    = offsetFirstTimestamp
	noTimestamp        = -1
	noOffset           = -1
)

// segment is one .log file with its indexes: offset, time and, once a
// transaction aborted in it, aborted-transaction (txnindex.go). The log
// file is opened on first use and then stays open for the segment's
// lifetime (segmentFile); index files are opened only to read or write
// them.
//
// Fields in the first group never change. The read state is written with
// both Log.writeMu and Log.mu held and read with either. The write state is
// guarded by Log.writeMu alone.
type segment struct {
	baseOffset      int64
	file            *segmentFile
	logPath         string
	offsetIndexPath string
	timeIndexPath   string
	txnIndexPath    string

	// Read state.
	size                 int64 // bytes of complete batches in the file
	nextOffset           int64 // offset after the last batch; baseOffset when empty
	offsetIndex          []offsetIndexEntry
	timeIndex            []timeIndexEntry
	maxTimestamp         int64 // largest batch MaxTimestamp, noTimestamp if none
	offsetOfMaxTimestamp int64 // last offset of the first batch reaching maxTimestamp
	txnIndex             []AbortedTxn

	// Write state.
	bytesSinceIndexEntry int64
	offsetIndexOnDisk    int // entries the .index file holds
	timeIndexOnDisk      int // entries the .timeindex file holds
	txnIndexOnDisk       int // entries the .txnindex file holds (it may not exist when 0)
	unsynced             bool
	indexFilesExist      bool      // the .index and .timeindex files were created (or found at open)
	rollBaseTime         time.Time // first append, for segment.ms
}

func segmentName(base int64) string { return fmt.Sprintf("%0*d", segmentNameDigits, base) }

// parseSegmentName returns the base offset of a file named like
// 00000000000000001234.log, and false for any other name.
func parseSegmentName(name, suffix string) (int64, bool) {
	stem, ok := strings.CutSuffix(name, suffix)
	if !ok || len(stem) != segmentNameDigits {
		return 0, false
	}
	base, err := strconv.ParseInt(stem, 10, 64)
	if err != nil || base < 0 {
		return 0, false
	}
	return base, true
}

func newSegment(dir string, base int64, file *os.File) *segment {
	name := filepath.Join(dir, segmentName(base))
	return &segment{
		baseOffset:           base,
		file:                 newSegmentFile(name+logFileSuffix, file),
		logPath:              name + logFileSuffix,
		offsetIndexPath:      name + offsetIndexSuffix,
		timeIndexPath:        name + timeIndexSuffix,
		txnIndexPath:         name + txnIndexSuffix,
		nextOffset:           base,
		maxTimestamp:         noTimestamp,
		offsetOfMaxTimestamp: noOffset,
	}
}

// createSegment creates the files of a new, empty segment. An existing empty
// log file of that name is reused; a non-empty one is an error.
func createSegment(dir string, base int64) (*segment, error) {
	path := filepath.Join(dir, segmentName(base)+logFileSuffix)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: create segment: %w", err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != 0 {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%w: segment file %s already exists with %d bytes", ErrCorruptLog, path, st.Size())
		}
		return nil, err
	}
	s := newSegment(dir, base, f)
	// The index files are created lazily: by the first flush that has an
	// entry to write, or at the latest when the segment is sealed (roll),
	// so a partition that is never written creates only its .log file. A
	// stale index of an earlier segment of that name must not be taken for
	// this one's.
	for _, p := range []string{s.offsetIndexPath, s.timeIndexPath, s.txnIndexPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			f.Close()
			return nil, fmt.Errorf("storage: create segment: %w", err)
		}
	}
	return s, nil
}

// freshSegment is the first segment of a log in a directory that has just
// been made: no earlier file of that name can exist, so there are no stale
// indexes to remove, and its .log file is created by its first use
// (segmentFile.unborn).
func freshSegment(dir string, base int64) *segment {
	s := newSegment(dir, base, nil)
	s.file.unborn = true
	return s
}

// relative returns offset relative to the segment base for index entries.
func (s *segment) relative(offset int64) uint32 { return uint32(offset - s.baseOffset) }

// trackBatch updates the read state and the indexes for a batch written at
// pos. Kafka's rule: an index entry for a batch once more than
// indexIntervalBytes were written since the previous entry, and a time index
// entry at those moments only when the segment's max timestamp grew.
func (s *segment) trackBatch(h BatchHeader, pos int64, indexIntervalBytes int) {
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp = h.MaxTimestamp
		s.offsetOfMaxTimestamp = h.LastOffset()
	}
	if s.bytesSinceIndexEntry > int64(indexIntervalBytes) {
		s.offsetIndex = append(s.offsetIndex, offsetIndexEntry{relativeOffset: s.relative(h.LastOffset()), position: uint32(pos)})
		s.maybeAppendTimeEntry()
		s.bytesSinceIndexEntry = 0
	}
	s.bytesSinceIndexEntry += int64(h.Size())
	s.size = pos + int64(h.Size())
	s.nextOffset = h.LastOffset() + 1
}

// maybeAppendTimeEntry appends (maxTimestamp, offsetOfMaxTimestamp) to the
// time index when it is larger than the last entry.
func (s *segment) maybeAppendTimeEntry() {
	last := int64(noTimestamp)
	if n := len(s.timeIndex); n > 0 {
		last = s.timeIndex[n-1].timestamp
	}
	if s.maxTimestamp > last && s.offsetOfMaxTimestamp >= s.baseOffset {
		s.timeIndex = append(s.timeIndex, timeIndexEntry{timestamp: s.maxTimestamp, relativeOffset: s.relative(s.offsetOfMaxTimestamp)})
	}
}

// writeIndexes writes index entries not yet in the index files (no fsync).
// Both files are created (empty if need be) by the first flush of a
// non-empty segment, or by seal (a roll): a segment's index files are
// absent only while it was empty at every flush, which Open relies on
// (loadCheckpointed). created reports that the files were created: the
// directory then needs an fsync.
func (s *segment) writeIndexes(seal bool) (created bool, err error) {
	create := !s.indexFilesExist && (seal || s.size > 0)
	if s.offsetIndexOnDisk != len(s.offsetIndex) || create {
		from := min(s.offsetIndexOnDisk, len(s.offsetIndex))
		tail := encodeOffsetIndex(s.offsetIndex[from:])
		if err := writeIndexTail(s.offsetIndexPath, tail, int64(from*offsetIndexEntrySize), int64(len(s.offsetIndex)*offsetIndexEntrySize)); err != nil {
			return false, fmt.Errorf("storage: write %s: %w", s.offsetIndexPath, err)
		}
		s.offsetIndexOnDisk = len(s.offsetIndex)
	}
	if s.timeIndexOnDisk != len(s.timeIndex) || create {
		from := min(s.timeIndexOnDisk, len(s.timeIndex))
		tail := encodeTimeIndex(s.timeIndex[from:])
		if err := writeIndexTail(s.timeIndexPath, tail, int64(from*timeIndexEntrySize), int64(len(s.timeIndex)*timeIndexEntrySize)); err != nil {
			return false, fmt.Errorf("storage: write %s: %w", s.timeIndexPath, err)
		}
		s.timeIndexOnDisk = len(s.timeIndex)
	}
	if create {
		s.indexFilesExist = true
	}
	return create, nil
}

// sync fsyncs the log file and the index files.
func (s *segment) sync() error {
	if err := s.file.sync(); err != nil {
		return fmt.Errorf("storage: fsync %s: %w", s.logPath, err)
	}
	for _, p := range []string{s.offsetIndexPath, s.timeIndexPath, s.txnIndexPath} {
		if err := syncPath(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("storage: fsync %s: %w", p, err)
		}
	}
	return nil
}

// removeFiles unlinks the segment's files, the log file first so that a
// crash leaves at worst orphaned index files, which Open removes.
func (s *segment) removeFiles() error {
	var first error
	for _, p := range []string{s.logPath, s.offsetIndexPath, s.timeIndexPath, s.txnIndexPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

// largestTimestamp is the segment's age for time retention: its largest
// record timestamp, or the file's modification time when it has none.
func (s *segment) largestTimestamp() int64 {
	if s.maxTimestamp >= 0 {
		return s.maxTimestamp
	}
	if mtime, err := s.file.modTime(); err == nil {
		return mtime
	}
	return noTimestamp
}

// segmentView is a snapshot of a segment's read state, taken under Log.mu,
// so that file reads can proceed without the lock.
type segmentView struct {
	seg                  *segment
	size                 int64
	nextOffset           int64
	offsetIndex          []offsetIndexEntry
	timeIndex            []timeIndexEntry
	maxTimestamp         int64
	offsetOfMaxTimestamp int64
	txnIndex             []AbortedTxn
}

func (s *segment) view() segmentView {
	return segmentView{
		seg: s, size: s.size, nextOffset: s.nextOffset,
		offsetIndex: s.offsetIndex, timeIndex: s.timeIndex,
		maxTimestamp: s.maxTimestamp, offsetOfMaxTimestamp: s.offsetOfMaxTimestamp,
		txnIndex: s.txnIndex,
	}
}

// readHeader reads the first n bytes (batchPrefixSize or BatchHeaderSize) of
// the batch at pos, which must lie below limit, and decodes them.
func readHeader(sf *segmentFile, pos, limit int64, n int) (BatchHeader, error) {
	var buf [BatchHeaderSize]byte
	if pos+int64(n) > limit {
		return BatchHeader{}, fmt.Errorf("%w: batch header at %d overruns segment end %d", ErrCorruptBatch, pos, limit)
	}
	f, err := sf.get()
	if err != nil {
		return BatchHeader{}, err
	}
	if _, err := f.ReadAt(buf[:n], pos); err != nil {
		if errors.Is(err, io.EOF) {
			return BatchHeader{}, fmt.Errorf("%w: batch header at %d past end of file", ErrCorruptBatch, pos)
		}
		return BatchHeader{}, fmt.Errorf("storage: read %s: %w", f.Name(), err)
	}
	h := decodeHeader(buf[:])
	if h.Length < minBatchLength || pos+int64(h.Size()) > limit {
		return h, fmt.Errorf("%w: batch at %d has length %d (segment end %d)", ErrCorruptBatch, pos, h.Length, limit)
	}
	return h, nil
}

// findBatch scans batch headers from pos (a batch boundary) for the first
// batch whose last offset is >= offset. found is false when the segment ends
// first.
func (v segmentView) findBatch(offset, pos int64) (h BatchHeader, at int64, found bool, err error) {
	for pos < v.size {
		h, err := readHeader(v.seg.file, pos, v.size, batchPrefixSize)
		if err != nil {
			return h, pos, false, err
		}
		if h.LastOffset() >= offset {
			return h, pos, true, nil
		}
		pos += int64(h.Size())
	}
	return BatchHeader{}, pos, false, nil
}

// positionOf returns the position of the first batch whose base offset is >=
// offset, scanning from pos (a batch boundary); v.size if there is none.
func (v segmentView) positionOf(offset, pos int64) (int64, error) {
	if offset >= v.nextOffset {
		return v.size, nil
	}
	pos = max(pos, lookupPosition(v.offsetIndex, v.seg.baseOffset, offset))
	for pos < v.size {
		h, err := readHeader(v.seg.file, pos, v.size, batchPrefixSize)
		if err != nil {
			return pos, err
		}
		if h.BaseOffset >= offset {
			return pos, nil
		}
		pos += int64(h.Size())
	}
	return v.size, nil
}

// readBatch reads the whole batch whose header h starts at pos.
func (v segmentView) readBatch(h BatchHeader, pos int64) ([]byte, error) {
	f, err := v.seg.file.get()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, h.Size())
	if _, err := f.ReadAt(buf, pos); err != nil {
		return nil, fmt.Errorf("storage: read batch at %d of %s: %w", pos, v.seg.logPath, err)
	}
	return buf, nil
}

// firstBatchOffset reads the base offset of the batch at position 0.
func firstBatchOffset(f *os.File) (int64, error) {
	var buf [8]byte
	if _, err := f.ReadAt(buf[:], 0); err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(buf[:])), nil
}
