package storage

import (
	"errors"
	"os"
	"testing"
	"time"
)

// retentionLayout appends 10 segments of 2 batches (4 records each), whose
// record timestamps are now-10h, now-9h, ... by segment.
func retentionLayout(t *testing.T, cfg Config, clock *fakeClock) (*Log, int64) {
	l, _ := newTestLog(t, cfg, clock)
	for s := range 10 {
		ts := clock.Millis() - int64(10-s)*time.Hour.Milliseconds()
		appendRaw(t, l, 0, valueBatch(t, 4, 100, ts))
		appendRaw(t, l, 0, valueBatch(t, 4, 100, ts))
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	appendRaw(t, l, 0, valueBatch(t, 4, 100, clock.Millis()))
	return l, l.mu.segments[0].size
}

func TestRetentionByTime(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.RetentionMs = (5*time.Hour + 30*time.Minute).Milliseconds()
	l, _ := retentionLayout(t, cfg, clock)
	n, err := l.ApplyRetention()
	if err != nil {
		t.Fatal(err)
	}
	// Segments aged 10h..6h go; 5h..1h and the active one stay.
	if n != 5 || l.NumSegments() != 6 || l.LogStartOffset() != 40 {
		t.Fatalf("deleted %d, %d segments left, start %d", n, l.NumSegments(), l.LogStartOffset())
	}
	if _, err := l.Read(39, 100, l.LogEndOffset(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	if _, err := l.Read(40, 100, l.LogEndOffset(), true); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if n, _ := l.ApplyRetention(); n != 1 || l.LogStartOffset() != 48 {
		t.Fatalf("an hour later deleted %d, start %d", n, l.LogStartOffset())
	}
	// The active segment is never deleted, however old.
	clock.Advance(1000 * time.Hour)
	l.ApplyRetention()
	if l.NumSegments() != 1 || l.LogStartOffset() != 80 || l.LogEndOffset() != 84 {
		t.Fatalf("%d segments, [%d, %d)", l.NumSegments(), l.LogStartOffset(), l.LogEndOffset())
	}

	// Reopen: the start offset follows from the first segment.
	l.Close()
	l2 := openLog(t, l.Dir(), cfg, clock)
	defer l2.Close()
	if l2.LogStartOffset() != 80 {
		t.Fatalf("start after reopen %d", l2.LogStartOffset())
	}
}

func TestRetentionByBytes(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.RetentionMs = -1
	l, segSize := retentionLayout(t, cfg, clock)
	cfg.RetentionBytes = 3*segSize + segSize/2
	l.UpdateConfig(cfg)
	n, err := l.ApplyRetention()
	if err != nil {
		t.Fatal(err)
	}
	// 10 full segments + a half one; keep total >= retention.bytes after each deletion.
	if n != 7 || l.LogStartOffset() != 56 || l.Size() < cfg.RetentionBytes {
		t.Fatalf("deleted %d, start %d, size %d", n, l.LogStartOffset(), l.Size())
	}
	if n, _ := l.ApplyRetention(); n != 0 {
		t.Fatalf("second pass deleted %d", n)
	}
}

func TestDeletedSegmentStaysReadableUntilDelay(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.RetentionMs = time.Hour.Milliseconds()
	cfg.FileDeleteDelayMs = 60000
	l, _ := retentionLayout(t, cfg, clock)
	chunk, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := l.ApplyRetention(); n != 9 { // the 1h old segment is just inside retention
		t.Fatalf("deleted %d", n)
	}
	if fileExists(l.Dir(), segmentName(0)+logFileSuffix) {
		t.Fatal("deleted segment still linked")
	}
	if _, err := chunk.ReadAll(); err != nil {
		t.Fatalf("in-flight read failed before the delay: %v", err)
	}
	clock.Advance(59 * time.Second)
	l.FlushIfDue()
	if _, err := chunk.ReadAll(); err != nil {
		t.Fatalf("in-flight read failed before the delay: %v", err)
	}
	clock.Advance(time.Second)
	l.FlushIfDue()
	if _, err := chunk.ReadAll(); err == nil {
		t.Fatal("file still open after the delay")
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	l, _ := retentionLayout(t, cfg, clock)
	if err := l.DeleteRecordsBefore(l.LogEndOffset() + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("past the end: %v", err)
	}
	if err := l.DeleteRecordsBefore(19); err != nil { // inside segment 16..23
		t.Fatal(err)
	}
	if l.LogStartOffset() != 19 || l.NumSegments() != 9 {
		t.Fatalf("start %d, %d segments", l.LogStartOffset(), l.NumSegments())
	}
	if _, err := l.Read(18, 100, l.LogEndOffset(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	c, err := l.Read(19, 100, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := c.ReadAll()
	if h, _ := ParseBatchHeader(data); h.BaseOffset != 16 {
		t.Fatalf("read at the start returned batch %d, want 16 (the batch holding 19)", h.BaseOffset)
	}
	if err := l.DeleteRecordsBefore(5); err != nil || l.LogStartOffset() != 19 {
		t.Fatalf("moving backwards: %v, start %d", err, l.LogStartOffset())
	}
	if o, _, ok, _ := l.OffsetForTimestamp(0); !ok || o != 19 {
		t.Fatalf("OffsetForTimestamp ignores the start offset: %d %v", o, ok)
	}

	// Persisted across reopen, clean or not.
	dir := l.Dir()
	l.abandon()
	l2 := openLog(t, dir, cfg, clock)
	if l2.LogStartOffset() != 19 {
		t.Fatalf("start after reopen %d", l2.LogStartOffset())
	}
	// Up to the log end: every inactive segment goes.
	if err := l2.DeleteRecordsBefore(l2.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if l2.NumSegments() != 1 || l2.LogStartOffset() != l2.LogEndOffset() {
		t.Fatalf("%d segments [%d, %d)", l2.NumSegments(), l2.LogStartOffset(), l2.LogEndOffset())
	}
	l2.Close()
	l3 := openLog(t, dir, cfg, clock)
	defer l3.Close()
	if l3.LogStartOffset() != 84 {
		t.Fatalf("start after reopen %d", l3.LogStartOffset())
	}
}

func TestSegmentAgeSurvivesReopen(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.SegmentMs = time.Hour.Milliseconds()
	l, dir := newTestLog(t, cfg, clock)
	appendRaw(t, l, 0, valueBatch(t, 1, 10, clock.Millis()))
	clock.Advance(50 * time.Minute)
	l.Close()
	// The reopened segment's age comes from its first batch's timestamp.
	l2 := openLog(t, dir, cfg, clock)
	defer l2.Close()
	clock.Advance(9 * time.Minute)
	if err := l2.MaybeRoll(); err != nil || l2.NumSegments() != 1 {
		t.Fatalf("rolled early: %v %d", err, l2.NumSegments())
	}
	clock.Advance(time.Minute)
	if err := l2.MaybeRoll(); err != nil || l2.NumSegments() != 2 {
		t.Fatalf("not rolled after segment.ms: %v %d", err, l2.NumSegments())
	}
}

// TestClosingDeletedSegmentsDoesNotBlockAppends: closing the last
// descriptor of a deleted segment is where the filesystem frees its blocks
// and cached pages, a disk wait while the disk is busy; appends must not
// queue behind it, whether retention closes the files at once (no delay)
// or FlushIfDue closes them once file.delete.delay.ms passed.
func TestClosingDeletedSegmentsDoesNotBlockAppends(t *testing.T) {
	for _, tc := range []struct {
		name    string
		delayMs int64
	}{{"retention without delay", 0}, {"flush after the delay", 60000}} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			cfg := testConfig()
			cfg.RetentionMs = time.Hour.Milliseconds()
			cfg.FileDeleteDelayMs = tc.delayMs
			l, _ := retentionLayout(t, cfg, clock)
			if tc.delayMs > 0 {
				if n, err := l.ApplyRetention(); n != 9 || err != nil {
					t.Fatalf("deleted %d: %v", n, err)
				}
				clock.Advance(time.Duration(tc.delayMs) * time.Millisecond)
			}

			entered := make(chan struct{}, 64)
			release := make(chan struct{})
			closeOSFile = func(f *os.File) error {
				entered <- struct{}{}
				<-release
				return f.Close()
			}
			t.Cleanup(func() { closeOSFile = (*os.File).Close })
			released := false
			defer func() {
				if !released {
					close(release)
				}
			}()

			done := make(chan error, 1)
			go func() {
				if tc.delayMs > 0 {
					done <- l.FlushIfDue()
					return
				}
				_, err := l.ApplyRetention()
				done <- err
			}()
			select {
			case <-entered:
			case <-time.After(10 * time.Second):
				t.Fatal("no deleted segment was closed")
			}

			batch := valueBatch(t, 4, 100, clock.Millis())
			appended := make(chan error, 1)
			go func() {
				_, err := appendWith(l, AppendOptions{}, batch)
				appended <- err
			}()
			select {
			case err := <-appended:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("an append waited for the close of a deleted segment")
			}
			close(release)
			released = true
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if fileExists(l.Dir(), segmentName(0)+logFileSuffix) {
				t.Fatal("deleted segment still linked")
			}
		})
	}
}
