package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

var errSimulatedCrash = errors.New("simulated crash")

// buildCleanTemplate writes a closed log of 13 small segments (three
// batches each) and an active one, with overwritten keys and tombstones, so
// that a clean merges segments, empties whole runs of them (the first
// among them) and rewrites batches. With keepMiddle, segment 5 holds keys
// of its own, so a run in the middle survives; with keylessLast, the last
// cleanable segment holds only keyless records, so the last run empties.
func buildCleanTemplate(t *testing.T, dir string, cfg Config, clock *fakeClock, keepMiddle, keylessLast bool) {
	t.Helper()
	l := openLog(t, dir, cfg, clock)
	for i := range 40 {
		var records []testRecord
		for j := range 5 {
			n := i*5 + j
			key := fmt.Sprintf("k%d", n%7)
			switch {
			case keylessLast && i >= 36 && i <= 38:
				records = append(records, testRecord{value: []byte("keyless"), timestamp: clock.Millis()})
			case n%11 == 0:
				records = append(records, del(key, clock.Millis()))
			default:
				records = append(records, put(key, fmt.Sprintf("v%d", n), clock.Millis()))
			}
		}
		if keepMiddle && i >= 15 && i <= 17 {
			records = append(records, put(fmt.Sprintf("mid%d", i), "x", clock.Millis()))
		}
		if !keylessLast && i >= 36 {
			records = append(records, put(fmt.Sprintf("late%d", i), "x", clock.Millis()))
		}
		appendRaw(t, l, 0, keyed(t, records...))
		if i%3 == 2 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func readDir(t *testing.T, dir string, cfg Config, clock *fakeClock) ([]logRecord, int64, int64) {
	t.Helper()
	l := openLog(t, dir, cfg, clock)
	defer l.Close()
	return mustReadRecords(t, l), l.LogStartOffset(), l.LogEndOffset()
}

// TestCleanCrashAtEveryStep simulates a crash (the process dies; what it
// wrote stays) after each file operation of a clean: after the .cleaned
// files are written, after each rename to .swap, after each old segment's
// removal and after each final rename. Reopening must give exactly the
// records of before the clean (crash before the first .swap rename) or of
// after it (any later crash), with no cleaner files left, the same log
// start and end offsets, and a log that cleans and appends normally. Every
// other reopen has no recovery checkpoint, so it scans the segments.
func TestCleanCrashAtEveryStep(t *testing.T) {
	for _, variant := range []struct {
		name                    string
		keepMiddle, keylessLast bool
	}{{"empty-middle", false, false}, {"kept-middle", true, false}, {"emptied-last", true, true}} {
		t.Run(variant.name, func(t *testing.T) {
			testCleanCrashAtEveryStep(t, variant.keepMiddle, variant.keylessLast)
		})
	}
}

func testCleanCrashAtEveryStep(t *testing.T, keepMiddle, keylessLast bool) {
	cfg := compactConfig()
	cfg.SegmentBytes = 2 << 10 // merges about five of the template's segments
	clock := newFakeClock()
	root := t.TempDir()
	template := filepath.Join(root, "template")
	buildCleanTemplate(t, template, cfg, clock, keepMiddle, keylessLast)
	pre, start, end := readDir(t, template, cfg, clock)

	// A clean without a crash, recording its steps.
	reference := filepath.Join(root, "reference")
	copyDir(t, template, reference)
	l := openLog(t, reference, cfg, clock)
	var steps []cleanStep
	l.cleanHook = func(step cleanStep) error {
		steps = append(steps, step)
		return nil
	}
	res := mustClean(t, l, clock)
	if !res.Cleaned || res.SegmentsAfter >= res.SegmentsBefore || l.mu.segments[0].size != 0 {
		t.Fatalf("reference clean %+v; want merged segments and an emptied first one", res)
	}
	var bases []int64
	for _, s := range l.mu.segments {
		bases = append(bases, s.baseOffset)
	}
	l.Close()
	post, _, _ := readDir(t, reference, cfg, clock)
	if slices.Equal(pre, post) {
		t.Fatal("the clean changed nothing")
	}
	for _, want := range []cleanStep{stepCleanedWritten, stepSwapRenamed, stepOldDeleted, stepFinalRenamed} {
		if !slices.Contains(steps, want) {
			t.Fatalf("steps %v lack %s", steps, want)
		}
	}
	t.Logf("%d steps; %d records before, %d after; segments %v; %+v", len(steps), len(pre), len(post), bases, res)

	for crashAt, step := range steps {
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
			t.Fatalf("crash after step %d (%s): Clean returned %v", crashAt, step, err)
		}
		l.abandon()
		if crashAt%2 == 1 {
			// Without a recovery checkpoint every segment is scanned, not trusted.
			if err := os.Remove(filepath.Join(dir, recoveryCheckpointFile)); err != nil {
				t.Fatal(err)
			}
		}

		want, state := post, "after"
		if crashAt < slices.Index(steps, stepSwapRenamed) {
			want, state = pre, "before"
		}
		l = openLog(t, dir, cfg, clock)
		got := mustReadRecords(t, l)
		if !slices.Equal(got, want) {
			t.Fatalf("crash after step %d (%s): reopened log differs from the log %s the clean:\ngot  %v\nwant %v", crashAt, step, state, got, want)
		}
		if files := cleanerFiles(t, dir); len(files) != 0 {
			t.Fatalf("crash after step %d (%s): left %v", crashAt, step, files)
		}
		if l.LogStartOffset() != start || l.LogEndOffset() != end {
			t.Fatalf("crash after step %d (%s): log [%d, %d), want [%d, %d)", crashAt, step, l.LogStartOffset(), l.LogEndOffset(), start, end)
		}
		if _, err := l.Clean(clock.Now()); err != nil {
			t.Fatalf("crash after step %d (%s): clean after reopen: %v", crashAt, step, err)
		}
		if got := mustReadRecords(t, l); !slices.Equal(got, post) {
			t.Fatalf("crash after step %d (%s): clean after reopen gives\n%v\nwant %v", crashAt, step, got, post)
		}
		appendRaw(t, l, 0, keyed(t, put("after", "crash", clock.Millis())))
		l.Close()
		l = openLog(t, dir, cfg, clock)
		if l.LogEndOffset() != end+1 {
			t.Fatalf("crash after step %d (%s): end %d after an append", crashAt, step, l.LogEndOffset())
		}
		l.Close()
	}
}

// TestCleanConcurrentReads reads the log in other goroutines while it is
// appended to and cleaned: every read returns whole, CRC-valid, decodable
// batches whose records are the ones written at those offsets (old segment
// files stay open for file.delete.delay.ms).
func TestCleanConcurrentReads(t *testing.T) {
	cfg := compactConfig()
	cfg.SegmentBytes = 8 << 10
	cfg.FileDeleteDelayMs = 60_000
	clock := newFakeClock()
	l, _ := newTestLog(t, cfg, clock)

	verify := func() error {
		batches, err := readBatches(l)
		if err != nil {
			return err
		}
		last := int64(-1)
		for _, r := range recordsOf(batches) {
			if r.Offset <= last {
				return fmt.Errorf("offset %d after %d", r.Offset, last)
			}
			last = r.Offset
			if got := int64(binary.BigEndian.Uint64([]byte(r.Value))); got != r.Offset {
				return fmt.Errorf("record at %d holds the value written at %d", r.Offset, got)
			}
		}
		return nil
	}
	stop := make(chan struct{})
	errs := make(chan error, 2)
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := verify(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}

	cleans := 0
	for i := range 400 {
		next := l.LogEndOffset()
		records := make([]testRecord, 10)
		for j := range records {
			records[j] = testRecord{key: fmt.Appendf(nil, "k%d", (i*10+j)%37), value: binary.BigEndian.AppendUint64(nil, uint64(next+int64(j))), timestamp: clock.Millis()}
		}
		appendRaw(t, l, 0, keyed(t, records...))
		if i%25 == 24 {
			res := mustClean(t, l, clock)
			if res.Cleaned {
				cleans++
			}
		}
	}
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if cleans < 5 {
		t.Fatalf("only %d cleans ran", cleans)
	}
	if err := verify(); err != nil {
		t.Fatal(err)
	}
}
