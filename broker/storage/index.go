package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
)

const (
	offsetIndexEntrySize = 8  // relative offset uint32, position uint32
	timeIndexEntrySize   = 12 // timestamp int64, relative offset uint32
)

// errBadIndex marks an index file that fails validation; the segment's index
// is then rebuilt by scanning its log file.
var errBadIndex = CorruptionErrorf("storage: invalid index file")

// offsetIndexEntry maps the last offset of a batch (relative to the segment's
// base offset) to the file position where that batch starts.
type offsetIndexEntry struct {
	relativeOffset uint32
	position       uint32
}

// timeIndexEntry records that the largest timestamp of the segment, up to
// and including the batch whose last offset is relativeOffset, is timestamp.
type timeIndexEntry struct {
	timestamp      int64
	relativeOffset uint32
}

// lookupPosition returns the position of the batch named by the last index
// entry whose offset is <= offset: a batch at or before the one holding offset.
func lookupPosition(entries []offsetIndexEntry, base, offset int64) int64 {
	rel := offset - base
	if rel < 0 || len(entries) == 0 {
		return 0
	}
	i := sort.Search(len(entries), func(i int) bool { return int64(entries[i].relativeOffset) > rel })
	if i == 0 {
		return 0
	}
	return int64(entries[i-1].position)
}

// lookupTimestamp returns the offset of the last time index entry whose
// timestamp is strictly below ts. Every record up to that offset has a
// timestamp below ts.
func lookupTimestamp(entries []timeIndexEntry, base, ts int64) (offset int64, ok bool) {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].timestamp >= ts })
	if i == 0 {
		return 0, false
	}
	return base + int64(entries[i-1].relativeOffset), true
}

func encodeOffsetIndex(entries []offsetIndexEntry) []byte {
	b := make([]byte, len(entries)*offsetIndexEntrySize)
	for i, e := range entries {
		binary.BigEndian.PutUint32(b[i*offsetIndexEntrySize:], e.relativeOffset)
		binary.BigEndian.PutUint32(b[i*offsetIndexEntrySize+4:], e.position)
	}
	return b
}

func encodeTimeIndex(entries []timeIndexEntry) []byte {
	b := make([]byte, len(entries)*timeIndexEntrySize)
	for i, e := range entries {
		binary.BigEndian.PutUint64(b[i*timeIndexEntrySize:], uint64(e.timestamp))
		binary.BigEndian.PutUint32(b[i*timeIndexEntrySize+8:], e.relativeOffset)
	}
	return b
}

// decodeOffsetIndex parses an .index file and checks that offsets and
// positions strictly increase and that positions lie inside the log file.
func decodeOffsetIndex(b []byte, logSize int64) ([]offsetIndexEntry, error) {
	if len(b)%offsetIndexEntrySize != 0 {
		return nil, fmt.Errorf("%w: offset index size %d is not a multiple of %d", errBadIndex, len(b), offsetIndexEntrySize)
	}
	entries := make([]offsetIndexEntry, len(b)/offsetIndexEntrySize)
	for i := range entries {
		e := offsetIndexEntry{
			relativeOffset: binary.BigEndian.Uint32(b[i*offsetIndexEntrySize:]),
			position:       binary.BigEndian.Uint32(b[i*offsetIndexEntrySize+4:]),
		}
		if i > 0 && (e.relativeOffset <= entries[i-1].relativeOffset || e.position <= entries[i-1].position) {
			return nil, fmt.Errorf("%w: offset index entry %d not increasing", errBadIndex, i)
		}
		if int64(e.position) >= logSize {
			return nil, fmt.Errorf("%w: offset index entry %d points past the log (%d >= %d)", errBadIndex, i, e.position, logSize)
		}
		entries[i] = e
	}
	return entries, nil
}

// decodeTimeIndex parses a .timeindex file and checks that timestamps
// strictly increase and offsets do not decrease.
func decodeTimeIndex(b []byte) ([]timeIndexEntry, error) {
	if len(b)%timeIndexEntrySize != 0 {
		return nil, fmt.Errorf("%w: time index size %d is not a multiple of %d", errBadIndex, len(b), timeIndexEntrySize)
	}
	entries := make([]timeIndexEntry, len(b)/timeIndexEntrySize)
	for i := range entries {
		e := timeIndexEntry{
			timestamp:      int64(binary.BigEndian.Uint64(b[i*timeIndexEntrySize:])),
			relativeOffset: binary.BigEndian.Uint32(b[i*timeIndexEntrySize+8:]),
		}
		if i > 0 && (e.timestamp <= entries[i-1].timestamp || e.relativeOffset < entries[i-1].relativeOffset) {
			return nil, fmt.Errorf("%w: time index entry %d not increasing", errBadIndex, i)
		}
		entries[i] = e
	}
	return entries, nil
}

// writeIndexTail makes the index file at path hold total bytes, of which
// tail is written at position at; the bytes before at are already there.
func writeIndexTail(path string, tail []byte, at, total int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if len(tail) > 0 {
		if _, err := f.WriteAt(tail, at); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Truncate(total); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// truncateIndexFile cuts the file at path to size, if it exists.
func truncateIndexFile(path string, size int64) error {
	err := os.Truncate(path, size)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// syncHook, if set (tests), sees every path syncPath fsyncs.
var syncHook func(path string)

// syncPath fsyncs the file or directory at path.
func syncPath(path string) error {
	if syncHook != nil {
		syncHook(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
