package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func entry(term, index uint64) *raftpb.Entry {
	return &raftpb.Entry{Term: proto.Uint64(term), Index: proto.Uint64(index), Type: raftpb.EntryType_EntryNormal.Enum(),
		Data: []byte(fmt.Sprintf("data-%d-%d", term, index))}
}

func hardState(term, commit uint64) *raftpb.HardState {
	return &raftpb.HardState{Term: proto.Uint64(term), Vote: proto.Uint64(1), Commit: proto.Uint64(commit)}
}

func open(t *testing.T, dir string, segBytes int64) (*WAL, *Loaded) {
	t.Helper()
	w, l, err := Open(dir, Options{SegmentBytes: segBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, l
}

// checkEntries asserts ents are indexes from..to of term-1 entries written by entry().
func checkEntries(t *testing.T, ents []*raftpb.Entry, from, to uint64) {
	t.Helper()
	if uint64(len(ents)) != to-from+1 && !(to < from && len(ents) == 0) {
		t.Fatalf("got %d entries, want %d..%d", len(ents), from, to)
	}
	for i, e := range ents {
		want := entry(e.GetTerm(), from+uint64(i))
		if e.GetIndex() != want.GetIndex() || string(e.GetData()) != string(want.GetData()) {
			t.Fatalf("entry %d: index %d data %q", i, e.GetIndex(), e.GetData())
		}
	}
}

func TestSaveAndReopenAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	w, l := open(t, dir, 256)
	if len(l.Entries) != 0 || l.HardState != nil || l.Snapshot.GetMetadata().GetIndex() != 0 {
		t.Fatalf("fresh log not empty: %+v", l)
	}
	for i := uint64(1); i <= 40; i++ {
		if err := w.Save(hardState(1, i-1), []*raftpb.Entry{entry(1, i)}); err != nil {
			t.Fatal(err)
		}
	}
	if w.Segments() < 3 {
		t.Fatalf("only %d segments", w.Segments())
	}
	w.Close()
	if err := w.Save(nil, []*raftpb.Entry{entry(1, 41)}); !errors.Is(err, ErrClosed) {
		t.Fatalf("save after close: %v", err)
	}
	_, l = open(t, dir, 256)
	checkEntries(t, l.Entries, 1, 40)
	if l.HardState.GetCommit() != 39 || l.HardState.GetTerm() != 1 {
		t.Fatalf("hard state %v", l.HardState)
	}
}

func TestLaterEntriesOverwrite(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, dir, 1<<20)
	var ents []*raftpb.Entry
	for i := uint64(1); i <= 5; i++ {
		ents = append(ents, entry(1, i))
	}
	if err := w.Save(hardState(1, 2), ents); err != nil {
		t.Fatal(err)
	}
	if err := w.Save(hardState(2, 2), []*raftpb.Entry{entry(2, 3), entry(2, 4)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, l := open(t, dir, 1<<20)
	if len(l.Entries) != 4 || l.Entries[2].GetTerm() != 2 || l.Entries[3].GetTerm() != 2 || l.Entries[3].GetIndex() != 4 {
		t.Fatalf("entries %v", l.Entries)
	}
}

// TestTornTailAtEveryOffset simulates a crash at every byte of the last
// segment: reopening must give every batch completed before that byte, a
// prefix of what was written, and a log that accepts appends again.
func TestTornTailAtEveryOffset(t *testing.T) {
	src := t.TempDir()
	w, _ := open(t, src, 1<<20)
	var ends []int64 // file size after each batch of two entries
	for b := uint64(0); b < 15; b++ {
		if err := w.Save(hardState(1, 2*b), []*raftpb.Entry{entry(1, 2*b+1), entry(1, 2*b+2)}); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, w.size)
	}
	w.Close()
	seg := w.segmentPath(1)
	full, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut <= len(full); cut++ {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(seg)), full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		w2, l, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		complete := 0
		for _, e := range ends {
			if e <= int64(cut) {
				complete++
			}
		}
		if len(l.Entries) < 2*complete {
			t.Fatalf("cut at %d: %d entries, %d batches were complete", cut, len(l.Entries), complete)
		}
		checkEntries(t, l.Entries, 1, uint64(len(l.Entries)))
		if l.HardState.GetCommit() > uint64(len(l.Entries)) {
			t.Fatalf("cut at %d: commit %d beyond %d entries", cut, l.HardState.GetCommit(), len(l.Entries))
		}
		next := uint64(len(l.Entries)) + 1
		if err := w2.Save(hardState(1, next-1), []*raftpb.Entry{entry(1, next)}); err != nil {
			t.Fatal(err)
		}
		w2.Close()
		w3, l, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("cut at %d, reopen after append: %v", cut, err)
		}
		checkEntries(t, l.Entries, 1, next)
		w3.Close()
	}
}

func TestCorruptionInsideLastSegmentTruncates(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, dir, 1<<20)
	for i := uint64(1); i <= 10; i++ {
		if err := w.Save(nil, []*raftpb.Entry{entry(1, i)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	path := w.segmentPath(1)
	raw, _ := os.ReadFile(path)
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, l := open(t, dir, 1<<20)
	if len(l.Entries) == 0 || len(l.Entries) >= 10 {
		t.Fatalf("%d entries after a flipped byte mid-file", len(l.Entries))
	}
	checkEntries(t, l.Entries, 1, uint64(len(l.Entries)))
	if st, _ := os.Stat(path); st.Size() >= int64(len(raw)) {
		t.Fatal("torn tail not truncated")
	}
}

func TestCorruptionInEarlierSegmentIsAnError(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, dir, 100)
	for i := uint64(1); i <= 20; i++ {
		if err := w.Save(nil, []*raftpb.Entry{entry(1, i)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	path := w.segmentPath(1)
	raw, _ := os.ReadFile(path)
	raw[len(raw)-3] ^= 0xff
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(dir, Options{SegmentBytes: 100}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open: %v", err)
	}
}

func TestSnapshotAndCompaction(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, dir, 200)
	for i := uint64(1); i <= 100; i++ {
		if err := w.Save(hardState(3, i), []*raftpb.Entry{entry(3, i)}); err != nil {
			t.Fatal(err)
		}
	}
	before := w.Segments()
	snap := &raftpb.Snapshot{Data: []byte("state at 60"), Metadata: &raftpb.SnapshotMetadata{
		Index: proto.Uint64(60), Term: proto.Uint64(3), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}}
	if err := w.SaveSnapshot(snap, false); err != nil {
		t.Fatal(err)
	}
	if err := w.Compact(60); err != nil {
		t.Fatal(err)
	}
	if w.Segments() >= before {
		t.Fatalf("compaction kept %d of %d segments", w.Segments(), before)
	}
	// A second snapshot replaces the first file.
	snap2 := proto.Clone(snap).(*raftpb.Snapshot)
	snap2.Metadata.Index = proto.Uint64(70)
	snap2.Data = []byte("state at 70")
	if err := w.SaveSnapshot(snap2, false); err != nil {
		t.Fatal(err)
	}
	if err := w.Compact(70); err != nil {
		t.Fatal(err)
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "*.snap"))
	if len(names) != 1 {
		t.Fatalf("snapshot files %v", names)
	}
	_, l := open(t, dir, 200)
	if l.Snapshot.GetMetadata().GetIndex() != 70 || string(l.Snapshot.GetData()) != "state at 70" ||
		len(l.Snapshot.GetMetadata().GetConfState().GetVoters()) != 3 {
		t.Fatalf("snapshot %v", l.Snapshot)
	}
	checkEntries(t, l.Entries, 71, 100)
	if l.HardState.GetCommit() != 100 || l.HardState.GetTerm() != 3 {
		t.Fatalf("hard state lost by compaction: %v", l.HardState)
	}
}

func TestSnapshotFromLeaderResetsLog(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, dir, 1<<20)
	var ents []*raftpb.Entry
	for i := uint64(1); i <= 30; i++ {
		ents = append(ents, entry(1, i))
	}
	if err := w.Save(hardState(1, 5), ents); err != nil {
		t.Fatal(err)
	}
	snap := &raftpb.Snapshot{Data: []byte("x"), Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(20), Term: proto.Uint64(2)}}
	if err := w.SaveSnapshot(snap, true); err != nil {
		t.Fatal(err)
	}
	if err := w.Save(hardState(2, 20), nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w, l := open(t, dir, 1<<20)
	if len(l.Entries) != 0 || l.Snapshot.GetMetadata().GetIndex() != 20 {
		t.Fatalf("stale entries survived the reset: %d entries, snapshot %d", len(l.Entries), l.Snapshot.GetMetadata().GetIndex())
	}
	if err := w.Save(hardState(2, 21), []*raftpb.Entry{entry(2, 21)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, l = open(t, dir, 1<<20)
	if len(l.Entries) != 1 || l.Entries[0].GetIndex() != 21 || l.HardState.GetCommit() != 21 {
		t.Fatalf("after reset: %v %v", l.Entries, l.HardState)
	}
}

func TestMissingSnapshotLeavesGap(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, dir, 100)
	for i := uint64(1); i <= 30; i++ {
		if err := w.Save(nil, []*raftpb.Entry{entry(1, i)}); err != nil {
			t.Fatal(err)
		}
	}
	snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(20), Term: proto.Uint64(1)}}
	if err := w.SaveSnapshot(snap, false); err != nil {
		t.Fatal(err)
	}
	if err := w.Compact(20); err != nil {
		t.Fatal(err)
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "*.snap"))
	for _, n := range names {
		os.Remove(n)
	}
	if _, _, err := Open(dir, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("log with a gap opened: %v", err)
	}
}

func TestInterruptedSnapshotWriteIsIgnored(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, dir, 1<<20)
	if err := w.Save(hardState(1, 1), []*raftpb.Entry{entry(1, 1)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	tmp := filepath.Join(dir, "0000000000000001-0000000000000001.snap.tmp")
	if err := os.WriteFile(tmp, []byte("half a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, l := open(t, dir, 1<<20)
	if len(l.Entries) != 1 || l.Snapshot.GetMetadata().GetIndex() != 0 {
		t.Fatalf("loaded %v", l)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatal("leftover temporary snapshot not removed")
	}
	// A damaged snapshot file is corruption, not silently skipped.
	if err := os.WriteFile(filepath.Join(dir, "0000000000000001-0000000000000001.snap"), []byte{0, 0, 0, 9, 1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(dir, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged snapshot: %v", err)
	}
}

// FuzzOpen feeds arbitrary bytes as a segment: Open returns a log or an
// error, never panics, and what it returns is contiguous.
func FuzzOpen(f *testing.F) {
	buf, _ := appendFrame(nil, kindEntry, entry(1, 1))
	buf, _ = appendFrame(buf, kindHardState, hardState(1, 1))
	buf, _ = appendFrame(buf, kindEntry, entry(1, 2))
	f.Add(buf)
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "0000000000000001.wal"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		w, l, err := Open(dir, Options{})
		if err != nil {
			return
		}
		defer w.Close()
		for i := 1; i < len(l.Entries); i++ {
			if l.Entries[i].GetIndex() != l.Entries[i-1].GetIndex()+1 {
				t.Fatalf("gap in loaded entries at %d", i)
			}
		}
	})
}

func TestCommitOnlyChangesNeedNoSyncButSurviveRoll(t *testing.T) {
	dir := t.TempDir()
	w, _ := open(t, dir, 150)
	for i := uint64(1); i <= 10; i++ {
		if err := w.SaveMaybeSync(hardState(1, i-1), []*raftpb.Entry{entry(1, i)}, true); err != nil {
			t.Fatal(err)
		}
		if err := w.SaveMaybeSync(hardState(1, i), nil, false); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	_, l := open(t, dir, 150)
	checkEntries(t, l.Entries, 1, 10)
	if l.HardState.GetCommit() != 10 {
		t.Fatalf("commit %d", l.HardState.GetCommit())
	}
}
