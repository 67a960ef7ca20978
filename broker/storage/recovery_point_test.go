package storage

import (
	"os"
	"path/filepath"
	"testing"
)

func activeSegment(l *Log) *segment {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.segments[len(l.mu.segments)-1]
}

func checkpointOnDiskOf(t *testing.T, dir string) recoveryCheckpoint {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, recoveryCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := decodeRecoveryCheckpoint(data)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// TestRecoveryPointFollowsRolledSegments: once a segment is rolled, the
// background flusher's round (RecoveryPointBehind, then Checkpoint: what
// replica.RollAndFlush does) moves the recovery point into the active
// segment, so a kill -9 afterwards rescans only the active segment's
// unflushed bytes, and a torn tail there is still cut.
func TestRecoveryPointFollowsRolledSegments(t *testing.T) {
	cfg := testConfig() // 64 KiB segments
	l, dir := newTestLog(t, cfg, nil)
	if l.RecoveryPointBehind() {
		t.Fatal("a log of one empty segment reports its recovery point behind")
	}
	batch := valueBatch(t, 4, 1000, 1_700_000_000_000) // about 4 KiB
	for l.NumSegments() < 4 {
		appendRaw(t, l, 0, batch)
	}
	if !l.RecoveryPointBehind() {
		t.Fatal("after rolls without a checkpoint, RecoveryPointBehind = false")
	}
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if l.RecoveryPointBehind() {
		t.Fatal("after the checkpoint, RecoveryPointBehind = true")
	}
	active := activeSegment(l)
	if cp := checkpointOnDiskOf(t, dir); cp.segmentBase != active.baseOffset {
		t.Fatalf("recovery point in segment %d, want the active segment %d", cp.segmentBase, active.baseOffset)
	}

	// Another roll: the recovery point is behind until the next round.
	for activeSegment(l) == active {
		appendRaw(t, l, 0, batch)
	}
	if !l.RecoveryPointBehind() {
		t.Fatal("after another roll, RecoveryPointBehind = false")
	}
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	active = activeSegment(l)
	cp := checkpointOnDiskOf(t, dir)
	if cp.segmentBase != active.baseOffset {
		t.Fatalf("recovery point in segment %d, want the active segment %d", cp.segmentBase, active.baseOffset)
	}

	// Unflushed appends to the active segment, then a torn write and kill -9.
	appendRaw(t, l, 0, batch)
	appendRaw(t, l, 0, batch)
	wantEnd := l.LogEndOffset()
	unflushed := activeSegment(l).size - cp.position
	segments := l.NumSegments()
	l.abandon()
	torn := batch[:len(batch)/2]
	f, err := os.OpenFile(active.logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()

	l2 := openLog(t, dir, cfg, nil)
	defer l2.Close()
	st := l2.RecoveryStats()
	if !st.UsedCheckpoint || st.SegmentsScanned != 1 {
		t.Fatalf("recovery used checkpoint %v and scanned %d segments, want the checkpoint and only the active segment", st.UsedCheckpoint, st.SegmentsScanned)
	}
	if want := unflushed + int64(len(torn)); st.BytesScanned != want {
		t.Fatalf("recovery scanned %d bytes, want the %d unflushed bytes after the recovery point", st.BytesScanned, want)
	}
	if st.BytesTruncated != int64(len(torn)) {
		t.Fatalf("recovery cut %d bytes, want the torn %d", st.BytesTruncated, len(torn))
	}
	if l2.LogEndOffset() != wantEnd || l2.NumSegments() != segments {
		t.Fatalf("recovered log end %d in %d segments, want %d in %d", l2.LogEndOffset(), l2.NumSegments(), wantEnd, segments)
	}
	if got := readAll(t, l2, 0); got[len(got)-1].LastOffset() != wantEnd-1 {
		t.Fatalf("last readable offset %d, want %d", got[len(got)-1].LastOffset(), wantEnd-1)
	}
	// The cut was a repair: it is checkpointed at once.
	if cp := checkpointOnDiskOf(t, dir); cp.nextOffset != wantEnd {
		t.Fatalf("checkpoint after the cut at offset %d, want %d", cp.nextOffset, wantEnd)
	}
}

// TestRecoveryPointFollowsActiveSegmentGrowth: more than the scan budget
// appended to the active segment after the recovery point also makes the
// background flusher move it, so a large segment.bytes does not make a
// restart rescan up to a whole segment.
func TestRecoveryPointFollowsActiveSegmentGrowth(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 30
	l, dir := newTestLog(t, cfg, nil)
	l.scanBudget = 16 << 10
	batch := valueBatch(t, 4, 1000, 1_700_000_000_000)
	for activeSegment(l).size <= l.scanBudget {
		if l.RecoveryPointBehind() {
			t.Fatalf("behind with %d bytes in the only segment, budget %d", activeSegment(l).size, l.scanBudget)
		}
		appendRaw(t, l, 0, batch)
	}
	if !l.RecoveryPointBehind() {
		t.Fatalf("not behind with %d unflushed bytes, budget %d", activeSegment(l).size, l.scanBudget)
	}
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	cp := checkpointOnDiskOf(t, dir)
	if l.RecoveryPointBehind() || cp.position != activeSegment(l).size {
		t.Fatalf("after the checkpoint: behind %v, recovery point at %d of %d bytes", l.RecoveryPointBehind(), cp.position, activeSegment(l).size)
	}
	appendRaw(t, l, 0, batch)
	if l.RecoveryPointBehind() {
		t.Fatal("one batch past the recovery point reports it behind")
	}
}

// TestRecoveryOfUnflushedTailWritesNothing: a restart whose only work was
// scanning an intact unflushed tail leaves the recovery checkpoint where it
// was (no fsync of every log at open), and the next restart scans the same
// bytes again, never more.
func TestRecoveryOfUnflushedTailWritesNothing(t *testing.T) {
	cfg := testConfig()
	l, dir := newTestLog(t, cfg, nil)
	batch := valueBatch(t, 4, 1000, 1_700_000_000_000)
	appendRaw(t, l, 0, batch)
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, recoveryCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, 0, batch)
	appendRaw(t, l, 0, batch)
	wantEnd := l.LogEndOffset()
	l.abandon()

	for round := range 2 {
		l2 := openLog(t, dir, cfg, nil)
		st := l2.RecoveryStats()
		if st.BytesScanned != int64(2*len(batch)) || st.BytesTruncated != 0 {
			t.Fatalf("round %d: scanned %d bytes, cut %d, want %d and 0", round, st.BytesScanned, st.BytesTruncated, 2*len(batch))
		}
		if l2.LogEndOffset() != wantEnd {
			t.Fatalf("round %d: log end %d, want %d", round, l2.LogEndOffset(), wantEnd)
		}
		after, err := os.ReadFile(filepath.Join(dir, recoveryCheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		if string(after) != string(before) {
			t.Fatalf("round %d: Open rewrote the recovery checkpoint after scanning an intact tail", round)
		}
		l2.abandon()
	}
}

// BenchmarkOpenAfterKill is the per-partition cost of a restart after
// kill -9: Open of a log with sealed segments below the recovery point
// and a few unflushed batches in the active segment (checkpointed: the
// sealed segments were flushed when they rolled), then the files closed
// as a crash would. Open writes nothing here, so every iteration recovers
// the same state.
func BenchmarkOpenAfterKill(b *testing.B) {
	for _, shape := range []struct {
		name       string
		checkpoint bool
	}{
		{"tail-after-checkpoint", true},
		{"no-checkpoint-one-segment", false},
	} {
		b.Run(shape.name, func(b *testing.B) {
			cfg := testConfig()
			dir := filepath.Join(b.TempDir(), "topic-0")
			l := openLog(b, dir, cfg, nil)
			batch := valueBatch(b, 4, 100, 1_700_000_000_000)
			if shape.checkpoint {
				for l.NumSegments() < 4 {
					appendRaw(b, l, 0, batch)
				}
				if err := l.Checkpoint(); err != nil {
					b.Fatal(err)
				}
			}
			for range 3 {
				appendRaw(b, l, 0, batch)
			}
			l.abandon()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				l, err := Open(dir, cfg, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if l.RecoveryStats().BytesScanned == 0 {
					b.Fatal("nothing scanned: the benchmark lost its unflushed tail")
				}
				l.abandon()
			}
		})
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestFreshLogCreatesOnlyItsLogFile: a new partition's log creates no
// file until it is used, then one, its .log (issue 18: creating 10,000
// partitions cost ~6 file creations each). The index files come with the
// first flush of a non-empty segment, the recovery checkpoint with the
// first checkpoint of a non-empty log; Open reads the absent files as
// empty, rebuilds nothing, and a crash after the first append recovers it.
func TestFreshLogCreatesOnlyItsLogFile(t *testing.T) {
	cfg := testConfig()
	dir := filepath.Join(t.TempDir(), "topic-0")
	l := openLog(t, dir, cfg, nil)
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Fatalf("files of a fresh log never used: %v, want none", got)
	}
	l = openLog(t, dir, cfg, nil)
	if st := l.RecoveryStats(); st.BytesScanned != 0 || st.IndexesRebuilt != 0 {
		t.Fatalf("reopening a fresh log: %+v", st)
	}
	appendRaw(t, l, 0, valueBatch(t, 1, 100, 1_000))
	if got := dirNames(t, dir); len(got) != 1 || got[0] != "00000000000000000000.log" {
		t.Fatalf("files of a fresh log after its first append: %v, want only its .log", got)
	}

	// One small batch (no index entry yet), checkpointed: the index files
	// now exist, empty, and a reopen trusts them.
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"00000000000000000000.index", "00000000000000000000.timeindex", recoveryCheckpointFile} {
		if !fileExists(dir, name) {
			t.Fatalf("%s missing after the first checkpoint of a non-empty log", name)
		}
	}
	// More appends, then a crash (the log is abandoned, not closed).
	for i := range 20 {
		appendRaw(t, l, 0, valueBatch(t, 1, 200, int64(2_000+i)))
	}
	want := l.LogEndOffset()
	l2 := openLog(t, dir, cfg, nil)
	defer l2.Close()
	if got := l2.LogEndOffset(); got != want {
		t.Fatalf("log end after the crash: %d, want %d", got, want)
	}
	if st := l2.RecoveryStats(); !st.UsedCheckpoint || st.IndexesRebuilt != 0 {
		t.Fatalf("recovery after the crash: %+v, want the checkpoint used and nothing rebuilt", st)
	}
	if o, ts, ok, err := l2.OffsetForTimestamp(2_010); err != nil || !ok || ts != 2_010 || o != 11 {
		t.Fatalf("OffsetForTimestamp(2010) = %d %d %v %v", o, ts, ok, err)
	}
	l.Close()
}
