package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// lastSegmentPath is the .log file of the active segment.
func lastSegmentPath(l *Log) string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.activeLocked().logPath
}

func TestRecoveryOfDamagedTail(t *testing.T) {
	damages := []struct {
		name   string
		damage func(t *testing.T, path string, lastBatch int64)
	}{
		{"truncated mid batch", func(t *testing.T, path string, lastBatch int64) {
			st, _ := os.Stat(path)
			if err := os.Truncate(path, st.Size()-7); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated mid header", func(t *testing.T, path string, lastBatch int64) {
			if err := os.Truncate(path, lastBatch+20); err != nil {
				t.Fatal(err)
			}
		}},
		{"flipped byte in last batch", func(t *testing.T, path string, lastBatch int64) {
			f, _ := os.OpenFile(path, os.O_RDWR, 0)
			defer f.Close()
			b := []byte{0}
			f.ReadAt(b, lastBatch+100)
			f.WriteAt([]byte{b[0] ^ 0x40}, lastBatch+100)
		}},
		{"garbage appended", func(t *testing.T, path string, lastBatch int64) {
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			defer f.Close()
			f.Write(bytes.Repeat([]byte{0xAB}, 300))
		}},
		{"zeros appended", func(t *testing.T, path string, lastBatch int64) {
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			defer f.Close()
			f.Write(make([]byte, 4096))
		}},
	}
	shutdowns := []struct {
		name  string
		close func(t *testing.T, l *Log)
	}{
		{"unclean after checkpoint", func(t *testing.T, l *Log) { l.abandon() }},
		{"clean without checkpoint file", func(t *testing.T, l *Log) {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(l.Dir(), recoveryCheckpointFile))
		}},
	}
	for _, d := range damages {
		for _, sd := range shutdowns {
			t.Run(d.name+"/"+sd.name, func(t *testing.T) {
				cfg := testConfig()
				l, dir := newTestLog(t, cfg, nil)
				for i := range 20 {
					appendRaw(t, l, 0, valueBatch(t, 3, 200, int64(i)))
				}
				if err := l.Checkpoint(); err != nil {
					t.Fatal(err)
				}
				for i := range 5 {
					appendRaw(t, l, 0, valueBatch(t, 3, 200, int64(100+i)))
				}
				intact := l.Size() // bytes before damage
				lastBatchPos := l.mu.segments[0].size - int64(len(valueBatch(t, 3, 200, 0)))
				wantEnd := l.LogEndOffset()
				path := lastSegmentPath(l)
				sd.close(t, l)
				d.damage(t, path, lastBatchPos)
				if d.name == "truncated mid batch" || d.name == "truncated mid header" || d.name == "flipped byte in last batch" {
					wantEnd -= 3
					intact = lastBatchPos
				}

				l2 := openLog(t, dir, cfg, nil)
				defer l2.Close()
				if l2.LogEndOffset() != wantEnd {
					t.Fatalf("end offset %d, want %d", l2.LogEndOffset(), wantEnd)
				}
				if st, _ := os.Stat(path); st.Size() != intact || l2.Size() != intact {
					t.Fatalf("file %d bytes, log %d, want %d", st.Size(), l2.Size(), intact)
				}
				stats := l2.RecoveryStats()
				if stats.BytesTruncated == 0 {
					t.Fatalf("nothing truncated: %+v", stats)
				}
				if got := readAll(t, l2, 0); int64(len(got)) != wantEnd/3 {
					t.Fatalf("read %d batches", len(got))
				}
				res := appendRaw(t, l2, 0, valueBatch(t, 1, 10, 1))
				if res.FirstOffset != wantEnd {
					t.Fatalf("next append at %d", res.FirstOffset)
				}
				// The repaired log reopens without scanning.
				l2.Close()
				l3 := openLog(t, dir, cfg, nil)
				defer l3.Close()
				if s := l3.RecoveryStats(); s.BytesScanned != 0 || l3.LogEndOffset() != wantEnd+1 {
					t.Fatalf("second reopen: %+v end %d", s, l3.LogEndOffset())
				}
			})
		}
	}
}

func TestRecoveryCleanCloseScansNothing(t *testing.T) {
	cfg := testConfig()
	l, dir := newTestLog(t, cfg, nil)
	for i := range 200 {
		appendRaw(t, l, int32(i/50), valueBatch(t, 2, 500, int64(i)))
	}
	before := readAll(t, l, 0)
	maxOffset, maxTs, _, _ := l.MaxTimestamp()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, dir, cfg, nil)
	defer l2.Close()
	stats := l2.RecoveryStats()
	if stats.BytesScanned != 0 || !stats.UsedCheckpoint || stats.IndexesRebuilt != 0 {
		t.Fatalf("stats %+v", stats)
	}
	after := readAll(t, l2, 0)
	if len(after) != len(before) || after[len(after)-1] != before[len(before)-1] {
		t.Fatal("log differs after reopen")
	}
	if o, ts, ok, err := l2.MaxTimestamp(); o != maxOffset || ts != maxTs || !ok || err != nil {
		t.Fatalf("max timestamp (%d, %d) want (%d, %d)", o, ts, maxOffset, maxTs)
	}
	if l2.LatestEpoch() != 3 {
		t.Fatalf("latest epoch %d", l2.LatestEpoch())
	}
}

// TestRecoveryResumesInCheckpointedSegment checks that an unclean restart
// scans only the bytes after the checkpoint position, even mid-segment, and
// that the indexes come out as if nothing had happened.
func TestRecoveryResumesInCheckpointedSegment(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.IndexIntervalBytes = 700
	l, dir := newTestLog(t, cfg, nil)
	for i := range 100 {
		appendRaw(t, l, 0, valueBatch(t, 2, 300, int64(i*3)))
	}
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	checkpointed := l.Size()
	for i := range 50 {
		appendRaw(t, l, 1, valueBatch(t, 2, 300, int64(1000+i)))
	}
	if err := l.Flush(); err != nil { // index files now hold entries past the checkpoint
		t.Fatal(err)
	}
	for i := range 10 {
		appendRaw(t, l, 2, valueBatch(t, 2, 300, int64(2000+i)))
	}
	want := l.mu.segments[0].view()
	l.abandon()

	l2 := openLog(t, dir, cfg, nil)
	defer l2.Close()
	stats := l2.RecoveryStats()
	if stats.BytesScanned != want.size-checkpointed || stats.SegmentsScanned != 1 {
		t.Fatalf("scanned %d bytes in %d segments, want %d in 1", stats.BytesScanned, stats.SegmentsScanned, want.size-checkpointed)
	}
	got := l2.mu.segments[0].view()
	if !equalIndexes(got, want) {
		t.Fatalf("indexes differ after recovery:\n got %v %v\nwant %v %v", got.offsetIndex, got.timeIndex, want.offsetIndex, want.timeIndex)
	}
	if got.maxTimestamp != want.maxTimestamp || got.offsetOfMaxTimestamp != want.offsetOfMaxTimestamp || got.nextOffset != want.nextOffset {
		t.Fatalf("state %+v, want %+v", got, want)
	}
	if l2.LatestEpoch() != 2 {
		t.Fatalf("epoch %d, want 2 (rebuilt from the scanned tail)", l2.LatestEpoch())
	}
	if e, o := l2.EndOffsetForEpoch(1); e != 1 || o != 300 {
		t.Fatalf("epoch 1 ends at (%d, %d)", e, o)
	}
}

func equalIndexes(a, b segmentView) bool {
	if len(a.offsetIndex) != len(b.offsetIndex) || len(a.timeIndex) != len(b.timeIndex) {
		return false
	}
	for i := range a.offsetIndex {
		if a.offsetIndex[i] != b.offsetIndex[i] {
			return false
		}
	}
	for i := range a.timeIndex {
		if a.timeIndex[i] != b.timeIndex[i] {
			return false
		}
	}
	return true
}

func TestRecoveryRebuildsMissingIndexes(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 8 << 10
	cfg.IndexIntervalBytes = 500
	l, dir := newTestLog(t, cfg, nil)
	for i := range 60 {
		appendRaw(t, l, 0, valueBatch(t, 2, 200, int64(i*2)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	originals := map[string][]byte{}
	matches, _ := filepath.Glob(filepath.Join(dir, "*index"))
	for _, m := range matches {
		originals[m], _ = os.ReadFile(m)
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
	if len(matches) < 6 {
		t.Fatalf("only %d index files", len(matches))
	}
	l2 := openLog(t, dir, cfg, nil)
	stats := l2.RecoveryStats()
	if stats.IndexesRebuilt != l2.NumSegments() {
		t.Fatalf("stats %+v for %d segments", stats, l2.NumSegments())
	}
	if o, ts, ok, err := l2.OffsetForTimestamp(51); err != nil || !ok || o != 51 || ts != 51 {
		t.Fatalf("OffsetForTimestamp: %d %d %v %v", o, ts, ok, err)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		if got, _ := os.ReadFile(m); !bytes.Equal(got, originals[m]) {
			t.Fatalf("%s rebuilt differently: %x vs %x", filepath.Base(m), got, originals[m])
		}
	}
}

func TestRecoveryRebuildsCorruptIndex(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 8 << 10
	cfg.IndexIntervalBytes = 500
	l, dir := newTestLog(t, cfg, nil)
	for i := range 60 {
		appendRaw(t, l, 0, valueBatch(t, 2, 200, int64(i*2)))
	}
	l.Close()
	first := filepath.Join(dir, segmentName(0)+offsetIndexSuffix)
	os.WriteFile(first, []byte{0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 2}, 0o644) // offsets go backwards
	second := filepath.Join(dir, segmentName(l.mu.segments[1].baseOffset)+timeIndexSuffix)
	os.WriteFile(second, []byte{1, 2, 3}, 0o644) // not a whole entry
	l2 := openLog(t, dir, cfg, nil)
	defer l2.Close()
	if s := l2.RecoveryStats(); s.IndexesRebuilt != 2 {
		t.Fatalf("stats %+v", s)
	}
	if got := readAll(t, l2, 0); len(got) != 60 {
		t.Fatalf("read %d batches", len(got))
	}
}

func TestRecoveryEmptyTrailingSegment(t *testing.T) {
	for _, unclean := range []bool{false, true} {
		cfg := testConfig()
		l, dir := newTestLog(t, cfg, nil)
		appendRaw(t, l, 0, valueBatch(t, 4, 10, 1))
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
		if unclean {
			l.abandon()
		} else {
			l.Close()
		}
		l2 := openLog(t, dir, cfg, nil)
		if l2.NumSegments() != 2 || l2.LogEndOffset() != 4 {
			t.Fatalf("unclean=%v: %d segments, end %d", unclean, l2.NumSegments(), l2.LogEndOffset())
		}
		appendRaw(t, l2, 0, valueBatch(t, 1, 10, 1))
		if l2.NumSegments() != 2 || readAll(t, l2, 0)[1].BaseOffset != 4 {
			t.Fatal("append did not go to the empty segment")
		}
		l2.Close()
	}
}

func TestRecoveryRemovesSegmentsAfterCutOne(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 4 << 10
	l, dir := newTestLog(t, cfg, nil)
	for i := range 10 {
		appendRaw(t, l, 0, valueBatch(t, 1, 1500, int64(i)))
	}
	segs := l.NumSegments()
	second := l.mu.segments[1]
	l.Close()
	os.Remove(filepath.Join(dir, recoveryCheckpointFile))
	// Corrupt the second segment's last batch: everything after it must go.
	st, _ := os.Stat(second.logPath)
	os.Truncate(second.logPath, st.Size()-1)
	l2 := openLog(t, dir, cfg, nil)
	defer l2.Close()
	if l2.NumSegments() != 2 || l2.RecoveryStats().SegmentsRemoved != segs-2 {
		t.Fatalf("%d segments, stats %+v", l2.NumSegments(), l2.RecoveryStats())
	}
	if l2.LogEndOffset() != second.nextOffset-1 {
		t.Fatalf("end %d, want %d", l2.LogEndOffset(), second.nextOffset-1)
	}
}

func TestRecoveryMisnamedSegment(t *testing.T) {
	for _, withCheckpoint := range []bool{false, true} {
		cfg := testConfig()
		cfg.SegmentBytes = 4 << 10
		l, dir := newTestLog(t, cfg, nil)
		for i := range 6 {
			appendRaw(t, l, 0, valueBatch(t, 1, 1500, int64(i)))
		}
		l.Close()
		if !withCheckpoint {
			os.Remove(filepath.Join(dir, recoveryCheckpointFile))
		}
		// Segment 0's file claims to start at offset 1; give segment 0 a name of its own.
		os.Rename(filepath.Join(dir, segmentName(2)+logFileSuffix), filepath.Join(dir, segmentName(3)+logFileSuffix))
		_, err := Open(dir, cfg, Options{})
		if !errors.Is(err, ErrCorruptLog) {
			t.Fatalf("checkpoint=%v: got %v, want ErrCorruptLog", withCheckpoint, err)
		}
	}
}

func TestRecoveryRemovesStrayFiles(t *testing.T) {
	cfg := testConfig()
	l, dir := newTestLog(t, cfg, nil)
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	l.Close()
	stray := []string{"recovery-checkpoint.tmp", segmentName(0) + ".log.deleted", segmentName(77) + offsetIndexSuffix, segmentName(77) + timeIndexSuffix}
	for _, name := range stray {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	l2 := openLog(t, dir, cfg, nil)
	defer l2.Close()
	for _, name := range stray {
		if fileExists(dir, name) {
			t.Fatalf("%s not removed", name)
		}
	}
	if l2.LogEndOffset() != 1 {
		t.Fatal("log damaged")
	}
}

func TestRecoveryDamagedMetadata(t *testing.T) {
	setup := func(t *testing.T) (string, Config, int64) {
		cfg := testConfig()
		l, dir := newTestLog(t, cfg, nil)
		for i := range 30 {
			appendRaw(t, l, int32(i/10), valueBatch(t, 1, 1000, int64(i)))
		}
		size := l.Size()
		l.Close()
		return dir, cfg, size
	}
	t.Run("checkpoint", func(t *testing.T) {
		dir, cfg, size := setup(t)
		path := filepath.Join(dir, recoveryCheckpointFile)
		data, _ := os.ReadFile(path)
		data[len(data)/2] ^= 1
		os.WriteFile(path, data, 0o644)
		l := openLog(t, dir, cfg, nil)
		defer l.Close()
		if s := l.RecoveryStats(); s.UsedCheckpoint || s.BytesScanned != size || l.LogEndOffset() != 30 {
			t.Fatalf("stats %+v end %d", s, l.LogEndOffset())
		}
	})
	t.Run("epoch file lost", func(t *testing.T) {
		dir, cfg, size := setup(t)
		os.Remove(filepath.Join(dir, leaderEpochFile))
		l := openLog(t, dir, cfg, nil)
		defer l.Close()
		if s := l.RecoveryStats(); s.UsedCheckpoint || s.BytesScanned != size {
			t.Fatalf("stats %+v", s)
		}
		if e, o := l.EndOffsetForEpoch(1); e != 1 || o != 20 {
			t.Fatalf("epochs not rebuilt: (%d, %d)", e, o)
		}
	})
	t.Run("log start offset", func(t *testing.T) {
		dir, cfg, _ := setup(t)
		os.WriteFile(filepath.Join(dir, logStartOffsetFile), []byte("0\nbanana\n"), 0o644)
		if _, err := Open(dir, cfg, Options{}); !errors.Is(err, ErrCorruptLog) {
			t.Fatalf("got %v", err)
		}
	})
}

// TestFastRecovery appends a lot of data over several segments and checks
// that restart work does not grow with it: nothing is scanned after a clean
// close, and only the tail after the checkpoint after an unclean one.
func TestFastRecovery(t *testing.T) {
	total := int64(200 << 20)
	if testing.Short() {
		total = 24 << 20
	}
	cfg := DefaultConfig()
	cfg.SegmentBytes = total / 6
	l, dir := newTestLog(t, cfg, nil)
	batch := valueBatch(t, 16, 1000, 1) // ~16 KiB
	headers, err := ValidateBatches(batch)
	if err != nil {
		t.Fatal(err)
	}
	for l.Size() < total {
		if _, err := l.Append(batch, headers, AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	end := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	l2 := openLog(t, dir, cfg, nil)
	cleanTook := time.Since(start)
	if s := l2.RecoveryStats(); s.BytesScanned != 0 || s.SegmentsScanned != 0 || l2.LogEndOffset() != end || l2.NumSegments() < 6 {
		t.Fatalf("clean reopen: %+v end %d segments %d", s, l2.LogEndOffset(), l2.NumSegments())
	}
	t.Logf("clean reopen of %d MiB in %d segments: %v", total>>20, l2.NumSegments(), cleanTook)

	// Unclean: a checkpoint, ~1 MiB more, then the process dies.
	if err := l2.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	var tail int64
	for tail < 1<<20 {
		if _, err := l2.Append(batch, headers, AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		tail += int64(len(batch))
	}
	end = l2.LogEndOffset()
	l2.abandon()

	start = time.Now()
	l3 := openLog(t, dir, cfg, nil)
	defer l3.Close()
	uncleanTook := time.Since(start)
	if s := l3.RecoveryStats(); s.BytesScanned != tail || l3.LogEndOffset() != end {
		t.Fatalf("unclean reopen: %+v, tail %d, end %d want %d", s, tail, l3.LogEndOffset(), end)
	}
	t.Logf("unclean reopen scanning a %d KiB tail: %v", tail>>10, uncleanTook)
	if got := readAll(t, l3, end-160); len(got) != 10 {
		t.Fatalf("tail reads %d batches", len(got))
	}
}
