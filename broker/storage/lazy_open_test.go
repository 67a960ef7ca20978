package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// lazyLayout writes a log of several sealed segments and an active one.
func lazyLayout(t *testing.T, cfg Config) (*Log, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "topic-0")
	l := openLog(t, dir, cfg, nil)
	for i := range 40 {
		appendRaw(t, l, 0, valueBatch(t, 2, 900, int64(i)))
	}
	if l.NumSegments() < 4 {
		t.Fatalf("%d segments, want several", l.NumSegments())
	}
	return l, dir
}

func unopenedSegments(l *Log) (unopened, total int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, s := range l.mu.segments {
		if s.file.opened() == nil {
			unopened++
		}
	}
	return unopened, len(l.mu.segments)
}

// TestOpenHoldsNoSegmentFile: after a clean close, after kill -9 with a
// tail past the recovery point (scanned) and without a checkpoint (all
// scanned), Open returns a log that holds no segment file open; the data
// reads back and appends work, opening only what they use.
func TestOpenHoldsNoSegmentFile(t *testing.T) {
	for _, mode := range []string{"clean close", "kill with unflushed tail", "no checkpoint"} {
		t.Run(mode, func(t *testing.T) {
			cfg := testConfig()
			cfg.SegmentBytes = 8 << 10
			l, dir := lazyLayout(t, cfg)
			switch mode {
			case "clean close":
				l.Close()
			case "kill with unflushed tail":
				if err := l.Checkpoint(); err != nil {
					t.Fatal(err)
				}
				appendRaw(t, l, 0, valueBatch(t, 2, 900, 99))
				l.abandon()
			case "no checkpoint":
				l.Close()
				os.Remove(filepath.Join(dir, recoveryCheckpointFile))
			}
			fdsBefore := openFDs()
			l = openLog(t, dir, cfg, nil)
			defer l.Close()
			if fdsBefore > 0 && openFDs() != fdsBefore {
				t.Errorf("Open left %d descriptors open", openFDs()-fdsBefore)
			}
			if unopened, total := unopenedSegments(l); unopened != total {
				t.Fatalf("%d of %d segment files opened by Open (stats %+v)", total-unopened, total, l.RecoveryStats())
			}
			if mode != "clean close" && l.RecoveryStats().BytesScanned == 0 {
				t.Fatalf("nothing scanned: stats %+v", l.RecoveryStats())
			}
			end := l.LogEndOffset()
			// Reading the first segment opens it alone.
			if _, err := l.Read(0, 100, end, true); err != nil {
				t.Fatal(err)
			}
			if unopened, total := unopenedSegments(l); unopened != total-1 || l.mu.segments[0].file.opened() == nil {
				t.Fatalf("after one read: %d of %d unopened", unopened, total)
			}
			if got := readAll(t, l, 0); len(got) == 0 || got[len(got)-1].LastOffset() != end-1 {
				t.Fatalf("read back %d batches to %d, want end %d", len(got), got[len(got)-1].LastOffset(), end)
			}
			appendRaw(t, l, 0, valueBatch(t, 2, 900, 100))
			if err := l.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, l, end); len(got) != 1 {
				t.Fatalf("appended batch: read %d", len(got))
			}
		})
	}
}

// TestLazyOpenConcurrentFirstUse: readers racing to open one unopened
// segment all read it through one descriptor (run with -race).
func TestLazyOpenConcurrentFirstUse(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 8 << 10
	l, dir := lazyLayout(t, cfg)
	l.Close()
	l = openLog(t, dir, cfg, nil)
	defer l.Close()
	fdsBefore := openFDs()
	end := l.LogEndOffset()
	files := make([]*os.File, 16)
	var wg sync.WaitGroup
	for i := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := l.Read(0, 1<<20, end, true)
			if err != nil {
				t.Error(err)
				return
			}
			files[i] = c.File
		}()
	}
	wg.Wait()
	for _, f := range files {
		if f == nil || f != files[0] {
			t.Fatal("readers got different files")
		}
	}
	if fdsBefore > 0 && openFDs() != fdsBefore+1 {
		t.Fatalf("%d descriptors opened, want 1", openFDs()-fdsBefore)
	}
}

// TestLazyOpenViewOutlivesRemoval: a reader holding the view of a segment
// that was never opened keeps reading its bytes after the segment was
// removed and a new segment took its name (a full truncation), because
// removal pins the file first.
func TestLazyOpenViewOutlivesRemoval(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 8 << 10
	cfg.FileDeleteDelayMs = 60_000
	l, dir := lazyLayout(t, cfg)
	l.Close()
	l = openLog(t, dir, cfg, nil)
	defer l.Close()
	l.mu.RLock()
	old := l.mu.segments[0].view()
	l.mu.RUnlock()
	if old.seg.file.opened() != nil {
		t.Fatal("segment opened by Open")
	}
	want, err := os.ReadFile(old.seg.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteRecordsBefore(1); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(0); err != nil { // below the start: every segment replaced by a new 0
		t.Fatal(err)
	}
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	h, err := readHeader(old.seg.file, 0, old.size, BatchHeaderSize)
	if err != nil {
		t.Fatalf("old view: %v", err)
	}
	got, err := old.readBatch(h, 0)
	if err != nil || !bytes.Equal(got, want[:h.Size()]) {
		t.Fatalf("old view read other bytes (err %v)", err)
	}
}

// TestLazyOpenChecksFirstBatch: a sealed segment below the recovery point
// is not read at Open; a file whose first batch lies below its name is
// refused at its first open instead, as ErrCorruptLog.
func TestLazyOpenChecksFirstBatch(t *testing.T) {
	cfg := testConfig()
	dir := filepath.Join(t.TempDir(), "topic-0")
	l := openLog(t, dir, cfg, nil)
	for i := range 6 {
		appendRaw(t, l, 0, valueBatch(t, 1, 10, int64(i)))
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// Segment 2's files take segment 3's place.
	for _, suffix := range []string{logFileSuffix, offsetIndexSuffix, timeIndexSuffix} {
		os.Remove(filepath.Join(dir, segmentName(3)+suffix))
		if err := os.Rename(filepath.Join(dir, segmentName(2)+suffix), filepath.Join(dir, segmentName(3)+suffix)); err != nil {
			t.Fatal(err)
		}
	}
	l = openLog(t, dir, cfg, nil)
	defer l.Close()
	if _, err := l.Read(3, 1<<20, l.LogEndOffset(), true); !errors.Is(err, ErrCorruptLog) || errors.Is(err, ErrStorage) {
		t.Fatalf("read of the misnamed segment: %v, want ErrCorruptLog", err)
	}
	if _, err := l.Read(4, 1<<20, l.LogEndOffset(), true); err != nil {
		t.Fatalf("other segments: %v", err)
	}
}

// TestTooManyOpenFilesIsNotAStorageError: running out of descriptors
// fails the request but does not take the log directory offline.
func TestTooManyOpenFilesIsNotAStorageError(t *testing.T) {
	l := &Log{dir: "d"}
	err := fmt.Errorf("%w: open x: %v", ErrTooManyOpenFiles, &os.PathError{Op: "open", Path: "x", Err: syscall.EMFILE})
	for _, op := range []string{"read", "append", "flush"} {
		if got := l.ioError(op, err); errors.Is(got, ErrStorage) {
			t.Fatalf("%s: %v is a storage error", op, got)
		}
	}
}
