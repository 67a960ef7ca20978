package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Errors.
var (
	ErrCorrupt = errors.New("wal: corrupt")
	ErrClosed  = errors.New("wal: closed")
)

const (
	kindEntry     byte = 1
	kindHardState byte = 2
	kindLogReset  byte = 3
	kindSnapshot  byte = 4

	headerSize = 9
	// maxFrame bounds a frame's length before anything is allocated.
	maxFrame = 256 << 20

	segmentSuffix  = ".wal"
	snapshotSuffix = ".snap"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Options configures a WAL.
type Options struct {
	// SegmentBytes is the size after which a new segment starts (default 4 MiB).
	SegmentBytes int64
}

// Loaded is what Open recovered: the latest snapshot (empty when none), the
// last hard state (nil when none) and the entries after the snapshot.
type Loaded struct {
	Snapshot  *raftpb.Snapshot
	HardState *raftpb.HardState
	Entries   []*raftpb.Entry
}

type segment struct {
	seq      uint64
	maxIndex uint64 // highest entry or reset index it holds
}

// WAL is an open log. It is not safe for concurrent use: the raft loop owns it.
type WAL struct {
	dir          string
	segmentBytes int64

	file      *os.File
	size      int64
	segments  []segment // in order; the last is the one being written
	hardState *raftpb.HardState
	buf       []byte
	closed    bool
}

// Open opens (creating if needed) the log in dir and recovers its content.
func Open(dir string, opts Options) (*WAL, *Loaded, error) {
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = 4 << 20
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("wal: %w", err)
	}
	w := &WAL{dir: dir, segmentBytes: opts.SegmentBytes}
	snap, err := w.loadSnapshot()
	if err != nil {
		return nil, nil, err
	}
	seqs, err := w.listSegments()
	if err != nil {
		return nil, nil, err
	}
	var (
		ents []*raftpb.Entry
		hs   *raftpb.HardState
	)
	for i, seq := range seqs {
		last := i == len(seqs)-1
		seg := segment{seq: seq}
		validEnd, err := readSegment(w.segmentPath(seq), func(kind byte, payload []byte) error {
			switch kind {
			case kindEntry:
				e := &raftpb.Entry{}
				if err := proto.Unmarshal(payload, e); err != nil {
					return fmt.Errorf("%w: entry: %v", ErrCorrupt, err)
				}
				if ents, err = appendEntry(ents, e); err != nil {
					return err
				}
				seg.maxIndex = max(seg.maxIndex, e.GetIndex())
			case kindHardState:
				h := &raftpb.HardState{}
				if err := proto.Unmarshal(payload, h); err != nil {
					return fmt.Errorf("%w: hard state: %v", ErrCorrupt, err)
				}
				hs = h
			case kindLogReset:
				m := &raftpb.SnapshotMetadata{}
				if err := proto.Unmarshal(payload, m); err != nil {
					return fmt.Errorf("%w: log reset: %v", ErrCorrupt, err)
				}
				ents = nil
				seg.maxIndex = max(seg.maxIndex, m.GetIndex())
			default:
				return fmt.Errorf("%w: frame kind %d", ErrCorrupt, kind)
			}
			return nil
		})
		var torn *tornError
		switch {
		case errors.As(err, &torn) && last:
			if err := truncateFile(w.segmentPath(seq), validEnd); err != nil {
				return nil, nil, err
			}
		case errors.As(err, &torn):
			return nil, nil, fmt.Errorf("%w: segment %d: %v", ErrCorrupt, seq, torn.reason)
		case err != nil:
			return nil, nil, fmt.Errorf("segment %d: %w", seq, err)
		}
		w.segments = append(w.segments, seg)
		if last {
			w.size = validEnd
		}
	}

	snapIndex := snap.GetMetadata().GetIndex()
	for len(ents) > 0 && ents[0].GetIndex() <= snapIndex {
		ents = ents[1:]
	}
	if len(ents) > 0 && ents[0].GetIndex() != snapIndex+1 {
		return nil, nil, fmt.Errorf("%w: entries start at %d, snapshot is at %d", ErrCorrupt, ents[0].GetIndex(), snapIndex)
	}
	if hs != nil {
		lastIndex := snapIndex
		if len(ents) > 0 {
			lastIndex = ents[len(ents)-1].GetIndex()
		}
		if hs.GetCommit() > lastIndex {
			// The commit index is only knowledge; a lower one is safe.
			hs = proto.Clone(hs).(*raftpb.HardState)
			hs.Commit = proto.Uint64(lastIndex)
		}
		if hs.GetCommit() < snapIndex {
			hs = proto.Clone(hs).(*raftpb.HardState)
			hs.Commit = proto.Uint64(snapIndex)
		}
	}
	w.hardState = hs

	if len(w.segments) == 0 {
		if err := w.startSegment(1); err != nil {
			return nil, nil, err
		}
	} else {
		f, err := os.OpenFile(w.segmentPath(w.segments[len(w.segments)-1].seq), os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("wal: %w", err)
		}
		w.file = f
	}
	return w, &Loaded{Snapshot: snap, HardState: hs, Entries: ents}, nil
}

// appendEntry adds e to the replayed log with raft's overwrite rule.
func appendEntry(ents []*raftpb.Entry, e *raftpb.Entry) ([]*raftpb.Entry, error) {
	if len(ents) == 0 {
		return append(ents, e), nil
	}
	first, last := ents[0].GetIndex(), ents[len(ents)-1].GetIndex()
	switch {
	case e.GetIndex() == last+1:
		return append(ents, e), nil
	case e.GetIndex() <= first:
		return []*raftpb.Entry{e}, nil
	case e.GetIndex() <= last:
		ents = ents[:e.GetIndex()-first]
		return append(ents, e), nil
	default:
		return nil, fmt.Errorf("%w: entry %d after %d", ErrCorrupt, e.GetIndex(), last)
	}
}

// Save appends entries and then the hard state (when not empty) and fsyncs.
func (w *WAL) Save(hs *raftpb.HardState, ents []*raftpb.Entry) error {
	return w.save(hs, ents, true)
}

// SaveMaybeSync is Save that skips the fsync when mustSync is false (raft's
// Ready.MustSync: only the commit index changed, which is safe to lose).
func (w *WAL) SaveMaybeSync(hs *raftpb.HardState, ents []*raftpb.Entry, mustSync bool) error {
	return w.save(hs, ents, mustSync || len(ents) > 0)
}

func (w *WAL) save(hs *raftpb.HardState, ents []*raftpb.Entry, sync bool) error {
	if w.closed {
		return ErrClosed
	}
	w.buf = w.buf[:0]
	var maxIndex uint64
	for _, e := range ents {
		var err error
		if w.buf, err = appendFrame(w.buf, kindEntry, e); err != nil {
			return err
		}
		maxIndex = max(maxIndex, e.GetIndex())
	}
	if hs != nil && (hs.GetTerm() != 0 || hs.GetVote() != 0 || hs.GetCommit() != 0) {
		var err error
		if w.buf, err = appendFrame(w.buf, kindHardState, hs); err != nil {
			return err
		}
		w.hardState = proto.Clone(hs).(*raftpb.HardState)
	}
	if len(w.buf) == 0 {
		return nil
	}
	if err := w.write(w.buf, maxIndex, sync); err != nil {
		return err
	}
	if w.size >= w.segmentBytes {
		return w.startSegment(w.segments[len(w.segments)-1].seq + 1)
	}
	return nil
}

func (w *WAL) write(b []byte, maxIndex uint64, sync bool) error {
	if _, err := w.file.Write(b); err != nil {
		return fmt.Errorf("wal: write: %w", err)
	}
	if sync {
		if err := w.file.Sync(); err != nil {
			return fmt.Errorf("wal: fsync: %w", err)
		}
	}
	w.size += int64(len(b))
	seg := &w.segments[len(w.segments)-1]
	seg.maxIndex = max(seg.maxIndex, maxIndex)
	return nil
}

// startSegment closes the current segment and starts segment seq with the
// current hard state.
func (w *WAL) startSegment(seq uint64) error {
	if w.file != nil {
		// Only the last segment may have a torn tail: sync before leaving it.
		if err := w.file.Sync(); err != nil {
			return fmt.Errorf("wal: fsync: %w", err)
		}
		if err := w.file.Close(); err != nil {
			return fmt.Errorf("wal: %w", err)
		}
		w.file = nil
	}
	f, err := os.OpenFile(w.segmentPath(seq), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	w.file, w.size = f, 0
	w.segments = append(w.segments, segment{seq: seq})
	if w.hardState != nil {
		buf, err := appendFrame(nil, kindHardState, w.hardState)
		if err != nil {
			return err
		}
		if err := w.write(buf, 0, true); err != nil {
			return err
		}
	}
	return syncDir(w.dir)
}

// SaveSnapshot stores snap durably. resetLog says the snapshot came from
// the leader and replaces the log: entries written before it are void.
// Older snapshot files are removed.
func (w *WAL) SaveSnapshot(snap *raftpb.Snapshot, resetLog bool) error {
	if w.closed {
		return ErrClosed
	}
	md := snap.GetMetadata()
	frame, err := appendFrame(nil, kindSnapshot, snap)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%016x-%016x%s", md.GetTerm(), md.GetIndex(), snapshotSuffix)
	if err := WriteFileAtomic(filepath.Join(w.dir, name), frame); err != nil {
		return fmt.Errorf("wal: snapshot: %w", err)
	}
	if resetLog {
		buf, err := appendFrame(nil, kindLogReset, md)
		if err != nil {
			return err
		}
		if err := w.write(buf, md.GetIndex(), true); err != nil {
			return err
		}
	}
	names, err := w.snapshotNames()
	if err != nil {
		return err
	}
	for _, old := range names {
		if old != name {
			if err := os.Remove(filepath.Join(w.dir, old)); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("wal: %w", err)
			}
		}
	}
	return nil
}

// Compact removes leading segments (never the current one) whose entries
// are all at or below index. index must be covered by a saved snapshot.
func (w *WAL) Compact(index uint64) error {
	if w.closed {
		return ErrClosed
	}
	removed := 0
	for removed < len(w.segments)-1 && w.segments[removed].maxIndex <= index {
		if err := os.Remove(w.segmentPath(w.segments[removed].seq)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("wal: %w", err)
		}
		removed++
	}
	w.segments = slices.Delete(w.segments, 0, removed)
	return nil
}

// Segments returns how many segment files the log has (for tests and metrics).
func (w *WAL) Segments() int { return len(w.segments) }

// Close closes the current segment. Everything Save returned for is durable.
func (w *WAL) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.file == nil {
		return nil
	}
	return w.file.Close()
}

func (w *WAL) segmentPath(seq uint64) string {
	return filepath.Join(w.dir, fmt.Sprintf("%016x%s", seq, segmentSuffix))
}

func (w *WAL) listSegments() ([]uint64, error) {
	des, err := os.ReadDir(w.dir)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	var seqs []uint64
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, segmentSuffix) {
			continue
		}
		seq, err := strconv.ParseUint(strings.TrimSuffix(name, segmentSuffix), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: unexpected file %s", ErrCorrupt, name)
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	return seqs, nil
}

// snapshotNames lists snapshot files, newest (highest term, index) first.
func (w *WAL) snapshotNames() ([]string, error) {
	des, err := os.ReadDir(w.dir)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	var names []string
	for _, de := range des {
		switch name := de.Name(); {
		case strings.HasSuffix(name, snapshotSuffix):
			names = append(names, name)
		case strings.HasSuffix(name, ".tmp"):
			_ = os.Remove(filepath.Join(w.dir, name)) // an interrupted snapshot write
		}
	}
	slices.Sort(names) // fixed-width hex: lexical order is (term, index) order
	slices.Reverse(names)
	return names, nil
}

// loadSnapshot reads the newest snapshot file; an empty snapshot when none.
func (w *WAL) loadSnapshot() (*raftpb.Snapshot, error) {
	names, err := w.snapshotNames()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return raftpb.EnsureSnapshot(nil), nil
	}
	path := filepath.Join(w.dir, names[0])
	var snap *raftpb.Snapshot
	_, err = readSegment(path, func(kind byte, payload []byte) error {
		if kind != kindSnapshot || snap != nil {
			return fmt.Errorf("%w: %s: unexpected frame kind %d", ErrCorrupt, path, kind)
		}
		snap = &raftpb.Snapshot{}
		if err := proto.Unmarshal(payload, snap); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
		}
		return nil
	})
	if err != nil || snap == nil {
		return nil, fmt.Errorf("%w: snapshot %s: %v", ErrCorrupt, path, err)
	}
	return raftpb.EnsureSnapshot(snap), nil
}

func appendFrame(buf []byte, kind byte, m proto.Message) ([]byte, error) {
	payload, err := proto.Marshal(m)
	if err != nil {
		return buf, fmt.Errorf("wal: encode: %w", err)
	}
	if len(payload)+1 > maxFrame {
		return buf, fmt.Errorf("wal: frame of %d bytes over the limit", len(payload)+1)
	}
	var hdr [headerSize]byte
	binary.BigEndian.PutUint32(hdr[0:4], uint32(len(payload)+1))
	crc := crc32.Update(0, castagnoli, []byte{kind})
	crc = crc32.Update(crc, castagnoli, payload)
	binary.BigEndian.PutUint32(hdr[4:8], crc)
	hdr[8] = kind
	buf = append(buf, hdr[:]...)
	return append(buf, payload...), nil
}

// tornError marks the end of the valid frames of a file.
type tornError struct{ reason string }

func (e *tornError) Error() string { return "torn frame: " + e.reason }

// readSegment calls fn for each valid frame of the file at path and returns
// the offset after the last valid frame. It stops with a *tornError at the
// first short, oversized or CRC-failing frame.
func readSegment(path string, fn func(kind byte, payload []byte) error) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var off int64
	var hdr [headerSize]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if err == io.EOF {
				return off, nil
			}
			return off, &tornError{reason: "short header"}
		}
		length := binary.BigEndian.Uint32(hdr[0:4])
		if length < 1 || length > maxFrame {
			return off, &tornError{reason: fmt.Sprintf("frame length %d", length)}
		}
		payload := make([]byte, length-1)
		if _, err := io.ReadFull(r, payload); err != nil {
			return off, &tornError{reason: "short payload"}
		}
		crc := crc32.Update(0, castagnoli, hdr[8:9])
		crc = crc32.Update(crc, castagnoli, payload)
		if crc != binary.BigEndian.Uint32(hdr[4:8]) {
			return off, &tornError{reason: "crc mismatch"}
		}
		if err := fn(hdr[8], payload); err != nil {
			return off, err
		}
		off += headerSize + int64(length) - 1
	}
}

func truncateFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("wal: truncate torn tail: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	return nil
}

// WriteFileAtomic replaces path with data durably: temp file, fsync,
// rename, fsync of the directory. A reader after any crash sees the old or
// the new content, never a mix. The raft log's snapshots use it;
// the broker's twin is storage.WriteFileAtomic (metadata may not
// import broker).
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("wal: fsync dir: %w", err)
	}
	return nil
}
