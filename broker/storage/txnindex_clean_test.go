package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// buildTxnCleanLog fills a compacted log with overwritten keys and aborted
// transactions over many small segments (the clean merges them), and
// returns the entries recorded.
func buildTxnCleanLog(t *testing.T, l *Log, clock *fakeClock) []AbortedTxn {
	t.Helper()
	var want []AbortedTxn
	for i := range 12 {
		appendRaw(t, l, 0, keyed(t, put(fmt.Sprintf("k%d", i%3), fmt.Sprint(i), clock.Millis())))
		if i%2 == 0 {
			want = append(want, abortTxn(t, l, int64(i+1), 2, -1))
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// TestCleanKeepsAbortedTxns: a clean carries each entry into the output
// segment covering its last offset, on disk too.
func TestCleanKeepsAbortedTxns(t *testing.T) {
	cfg := compactConfig()
	cfg.SegmentBytes = 1024 // merges a few segments per output
	clock := newFakeClock()
	l, dir := newTestLog(t, cfg, clock)
	want := buildTxnCleanLog(t, l, clock)
	before := l.NumSegments()
	res := mustClean(t, l, clock)
	if !res.Cleaned || res.SegmentsAfter >= res.SegmentsBefore || res.RecordsRemoved == 0 {
		t.Fatalf("clean %+v; want merged segments", res)
	}
	t.Logf("%d segments before, %d after", before, l.NumSegments())
	if got := mustAbortedTxns(t, l, 0, l.LogEndOffset()); !slices.Equal(got, want) {
		t.Fatalf("after clean %v\nwant %v", got, want)
	}
	l.mu.RLock()
	for _, s := range l.mu.segments {
		for _, e := range s.txnIndex {
			if e.LastOffset < s.baseOffset || e.LastOffset >= s.nextOffset {
				t.Errorf("entry %+v in segment [%d, %d)", e, s.baseOffset, s.nextOffset)
			}
		}
	}
	l.mu.RUnlock()
	if files := cleanerFiles(t, dir); len(files) != 0 {
		t.Fatalf("left %v", files)
	}
	l.Close()
	l = openLog(t, dir, cfg, clock)
	defer l.Close()
	if got := mustAbortedTxns(t, l, 0, l.LogEndOffset()); !slices.Equal(got, want) {
		t.Fatalf("after reopen %v\nwant %v", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if base, ok := parseSegmentName(e.Name(), txnIndexSuffix); ok && !fileExists(dir, segmentName(base)+logFileSuffix) {
			t.Errorf("orphaned %s", e.Name())
		}
	}
}

// TestCleanCrashKeepsAbortedTxns: whatever step of the swap a crash
// interrupts, the reopened log has every entry.
func TestCleanCrashKeepsAbortedTxns(t *testing.T) {
	cfg := compactConfig()
	cfg.SegmentBytes = 1024
	clock := newFakeClock()
	root := t.TempDir()
	template := filepath.Join(root, "template")
	l := openLog(t, template, cfg, clock)
	want := buildTxnCleanLog(t, l, clock)
	l.Close()

	reference := filepath.Join(root, "reference")
	copyDir(t, template, reference)
	l = openLog(t, reference, cfg, clock)
	steps := 0
	l.cleanHook = func(cleanStep) error { steps++; return nil }
	mustClean(t, l, clock)
	l.Close()

	for crashAt := range steps {
		dir := filepath.Join(root, fmt.Sprint("crash", crashAt))
		copyDir(t, template, dir)
		l := openLog(t, dir, cfg, clock)
		calls := 0
		l.cleanHook = func(cleanStep) error {
			calls++
			if calls > crashAt {
				return errSimulatedCrash
			}
			return nil
		}
		if _, err := l.Clean(clock.Now()); !errors.Is(err, errSimulatedCrash) {
			t.Fatalf("crash after step %d: Clean returned %v", crashAt, err)
		}
		l.abandon()
		l = openLog(t, dir, cfg, clock)
		if got := mustAbortedTxns(t, l, 0, l.LogEndOffset()); !slices.Equal(got, want) {
			t.Fatalf("crash after step %d: %v\nwant %v", crashAt, got, want)
		}
		if files := cleanerFiles(t, dir); len(files) != 0 {
			t.Fatalf("crash after step %d: left %v", crashAt, files)
		}
		l.Close()
	}
}

// TestCleanAbortsOnNewAbortedTxn: an entry recorded in a sealed segment
// while a clean rewrites it makes the clean give up rather than lose it.
func TestCleanAbortsOnNewAbortedTxn(t *testing.T) {
	cfg := compactConfig()
	clock := newFakeClock()
	l, _ := newTestLog(t, cfg, clock)
	for i := range 3 {
		appendRaw(t, l, 0, keyed(t, put("a", fmt.Sprint(i), 1)))
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	appendRaw(t, l, 0, EncodeControlBatch(7, 0, false, 0, 1)) // offset 3
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	late := AbortedTxn{ProducerID: 7, FirstOffset: 3, LastOffset: 3, LastStableOffset: 4}
	l.cleanHook = func(step cleanStep) error {
		if step == stepCleanedWritten {
			return l.RecordAbortedTxn(late)
		}
		return nil
	}
	res, err := l.Clean(clock.Now())
	if err != nil || !res.Aborted || res.Cleaned {
		t.Fatalf("Clean: %+v, %v", res, err)
	}
	l.cleanHook = nil
	if res := mustClean(t, l, clock); !res.Cleaned {
		t.Fatalf("retry: %+v", res)
	}
	if got := mustAbortedTxns(t, l, 0, 100); !slices.Equal(got, []AbortedTxn{late}) {
		t.Fatalf("entries %v", got)
	}
}
