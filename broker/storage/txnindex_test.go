package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// abortTxn appends a transactional batch of n keyed records for producer
// pid and its ABORT marker, records the aborted transaction with
// LastStableOffset lso (-1: the marker's offset + 1) and returns it.
func abortTxn(t testing.TB, l *Log, pid int64, n int, lso int64) AbortedTxn {
	t.Helper()
	records := make([]testRecord, n)
	for i := range records {
		records[i] = put(fmt.Sprintf("t%d-%d", pid, i), "aborted", 1)
	}
	data := appendRaw(t, l, 0, makeBatch(t, batchSpec{producerID: pid, attributes: attrTransactional, records: records}))
	marker := appendRaw(t, l, 0, EncodeControlBatch(pid, 0, false, 3, 1))
	if lso < 0 {
		lso = marker.LastOffset + 1
	}
	txn := AbortedTxn{ProducerID: pid, FirstOffset: data.FirstOffset, LastOffset: marker.LastOffset, LastStableOffset: lso}
	if err := l.RecordAbortedTxn(txn); err != nil {
		t.Fatalf("RecordAbortedTxn(%+v): %v", txn, err)
	}
	return txn
}

func mustAbortedTxns(t testing.TB, l *Log, from, upTo int64) []AbortedTxn {
	t.Helper()
	got, err := l.AbortedTxns(from, upTo)
	if err != nil {
		t.Fatalf("AbortedTxns(%d, %d): %v", from, upTo, err)
	}
	return got
}

func txnIndexFileSize(t testing.TB, dir string, base int64) int64 {
	t.Helper()
	st, err := os.Stat(filepath.Join(dir, segmentName(base)+txnIndexSuffix))
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestTxnIndexCodec(t *testing.T) {
	entries := []AbortedTxn{
		{ProducerID: 7, FirstOffset: 0, LastOffset: 4, LastStableOffset: 5},
		{ProducerID: -1, FirstOffset: 3, LastOffset: 1 << 40, LastStableOffset: 0},
	}
	b := EncodeTxnIndex(entries)
	if len(b) != 2*34 || b[0] != 0 || b[1] != 0 {
		t.Fatalf("encoded %d bytes: % x", len(b), b)
	}
	// Kafka's layout: version int16, producerId, firstOffset, lastOffset,
	// lastStableOffset int64, big-endian.
	if b[9] != 7 || b[25] != 4 || b[33] != 5 {
		t.Fatalf("layout: % x", b[:34])
	}
	got, err := DecodeTxnIndex(b)
	if err != nil || !slices.Equal(got, entries) {
		t.Fatalf("DecodeTxnIndex: %v, %v", got, err)
	}
	if got, err := DecodeTxnIndex(nil); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v, %v", got, err)
	}

	bad := func(mutate func(b []byte) []byte) []byte { return mutate(EncodeTxnIndex(entries)) }
	for name, data := range map[string][]byte{
		"torn":          bad(func(b []byte) []byte { return b[:len(b)-1] }),
		"version":       bad(func(b []byte) []byte { b[1] = 1; return b }),
		"first > last":  EncodeTxnIndex([]AbortedTxn{{FirstOffset: 5, LastOffset: 4}}),
		"negative":      EncodeTxnIndex([]AbortedTxn{{FirstOffset: -1, LastOffset: 4}}),
		"not ascending": EncodeTxnIndex([]AbortedTxn{entries[1], entries[0]}),
	} {
		if _, err := DecodeTxnIndex(data); !errors.Is(err, ErrCorruptRemoteData) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

// TestAbortedTxnsSurviveReopen: entries are on disk as soon as
// RecordAbortedTxn returns, so they survive a clean close and a kill -9.
func TestAbortedTxnsSurviveReopen(t *testing.T) {
	cfg := testConfig()
	l, dir := newTestLog(t, cfg, nil)
	appendRaw(t, l, 0, valueBatch(t, 3, 10, 1))
	want := []AbortedTxn{abortTxn(t, l, 1, 2, -1)}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	want = append(want, abortTxn(t, l, 2, 3, -1))
	if txnIndexFileSize(t, dir, 0) != 34 {
		t.Fatalf("first segment's .txnindex has %d bytes", txnIndexFileSize(t, dir, 0))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, cfg, nil)
	if got := mustAbortedTxns(t, l, 0, l.LogEndOffset()); !slices.Equal(got, want) {
		t.Fatalf("after reopen %v, want %v", got, want)
	}
	want = append(want, abortTxn(t, l, 3, 1, -1))
	l.abandon() // no flush, no checkpoint
	l = openLog(t, dir, cfg, nil)
	defer l.Close()
	if got := mustAbortedTxns(t, l, 0, l.LogEndOffset()); !slices.Equal(got, want) {
		t.Fatalf("after kill %v, want %v", got, want)
	}
	// A segment without aborted transactions has no file.
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if n := txnIndexFileSize(t, dir, l.LogEndOffset()); n != -1 {
		t.Fatalf("new segment has a .txnindex of %d bytes", n)
	}
}

func TestRecordAbortedTxnValidation(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	txn := abortTxn(t, l, 1, 2, -1) // offsets 0..2
	for name, c := range map[string]struct {
		txn  AbortedTxn
		want error
	}{
		"past log end":        {AbortedTxn{FirstOffset: 0, LastOffset: 3}, ErrOffsetOutOfRange},
		"first after last":    {AbortedTxn{FirstOffset: 2, LastOffset: 1}, ErrInvalidAbortedTxn},
		"negative first":      {AbortedTxn{FirstOffset: -1, LastOffset: 1}, ErrInvalidAbortedTxn},
		"same last offset":    {txn, ErrInvalidAbortedTxn},
		"before the last one": {AbortedTxn{FirstOffset: 0, LastOffset: 1}, ErrInvalidAbortedTxn},
	} {
		if err := l.RecordAbortedTxn(c.txn); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if err := l.DeleteRecordsBefore(3); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, 0, EncodeControlBatch(1, 0, false, 0, 1))
	if err := l.RecordAbortedTxn(AbortedTxn{FirstOffset: 1, LastOffset: 2}); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Errorf("below log start: %v", err)
	}
	l.Close()
	if err := l.RecordAbortedTxn(AbortedTxn{FirstOffset: 3, LastOffset: 3}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
	if _, err := l.AbortedTxns(0, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

// TestAbortedTxnsRange: Kafka's collectAbortedTransactions over several
// segments, including a transaction that starts in one segment and aborts
// two segments later, and the early stop at an entry whose last stable
// offset reaches the upper bound.
func TestAbortedTxnsRange(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	roll := func() {
		t.Helper()
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	// Segment 0: offsets 0-2 data of producer 9 (open until offset 13),
	// then txn A [3, 5] (marker at 5), LSO 3 because 9 is still open.
	long := appendRaw(t, l, 0, makeBatch(t, batchSpec{producerID: 9, attributes: attrTransactional, records: []testRecord{put("a", "1", 1), put("b", "1", 1), put("c", "1", 1)}}))
	a := abortTxn(t, l, 1, 2, long.FirstOffset)
	roll()
	// Segment 6: plain data 6-7, txn B [8, 9] with LSO 0 (still 9 open).
	appendRaw(t, l, 0, valueBatch(t, 2, 10, 1))
	b := abortTxn(t, l, 2, 1, long.FirstOffset)
	roll()
	// Segment 10: plain data 10-12, then producer 9's abort at 13: C [0, 13], LSO 14.
	appendRaw(t, l, 0, valueBatch(t, 3, 10, 1))
	marker := appendRaw(t, l, 0, EncodeControlBatch(9, 0, false, 3, 1))
	c := AbortedTxn{ProducerID: 9, FirstOffset: 0, LastOffset: marker.LastOffset, LastStableOffset: marker.LastOffset + 1}
	if err := l.RecordAbortedTxn(c); err != nil {
		t.Fatal(err)
	}
	roll()
	// Segment 14: txn D [14, 16], LSO 17.
	d := abortTxn(t, l, 4, 2, -1)
	if a.LastOffset != 5 || b.LastOffset != 9 || c.LastOffset != 13 || d.FirstOffset != 14 {
		t.Fatalf("layout %+v %+v %+v %+v", a, b, c, d)
	}

	for _, tc := range []struct {
		from, upTo int64
		want       []AbortedTxn
	}{
		{0, 3, []AbortedTxn{c}},            // C began at 0; its entry is two segments on
		{0, 6, []AbortedTxn{a, c}},         // segment 0 whole
		{4, 6, []AbortedTxn{a, c}},         // inside A
		{5, 6, []AbortedTxn{a, c}},         // A's marker
		{6, 8, []AbortedTxn{c}},            // between A and B only C is open
		{6, 14, []AbortedTxn{b, c}},        // C's LSO 14 >= 14 ends the search
		{6, 15, []AbortedTxn{b, c, d}},     // not ended by C: D is found
		{9, 10, []AbortedTxn{b, c}},        // B's marker
		{10, 11, []AbortedTxn{c}},          // B ended at 9; search starts at segment 10
		{10, 13, []AbortedTxn{c}},          // C's marker (13) excluded from the range, C not
		{13, 14, []AbortedTxn{c}},          // C's marker
		{14, 17, []AbortedTxn{d}},          // segment 14 whole
		{14, 14, nil},                      // empty range: D starts at 14, its LSO ends the search
		{16, 16, []AbortedTxn{d}},          // empty range inside D (Kafka's rule)
		{17, 18, nil},                      // past every entry
		{100, 200, nil},                    // beyond the log
		{-5, 1, []AbortedTxn{c}},           // below the log start: from the first segment
		{0, 100, []AbortedTxn{a, b, c, d}}, // everything
	} {
		if got := mustAbortedTxns(t, l, tc.from, tc.upTo); !slices.Equal(got, tc.want) {
			t.Errorf("AbortedTxns(%d, %d) = %v, want %v", tc.from, tc.upTo, got, tc.want)
		}
	}
}

// TestTruncateDropsAbortedTxns: truncation drops the entries whose marker
// it removes, from memory and file, and removes later segments' files.
func TestTruncateDropsAbortedTxns(t *testing.T) {
	cfg := testConfig()
	l, dir := newTestLog(t, cfg, nil)
	a := abortTxn(t, l, 1, 2, -1) // 0-2
	b := abortTxn(t, l, 2, 2, -1) // 3-5
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	abortTxn(t, l, 3, 2, -1) // 6-8, segment 6
	if err := l.TruncateTo(5); err != nil {
		t.Fatal(err)
	}
	if got := mustAbortedTxns(t, l, 0, 100); !slices.Equal(got, []AbortedTxn{a}) {
		t.Fatalf("after truncation %v, want %v", got, []AbortedTxn{a})
	}
	if n := txnIndexFileSize(t, dir, 0); n != 34 {
		t.Fatalf(".txnindex of segment 0 has %d bytes", n)
	}
	if n := txnIndexFileSize(t, dir, 6); n != -1 {
		t.Fatalf(".txnindex of removed segment 6 has %d bytes", n)
	}
	// b's offsets are free again; a new abort there is accepted.
	appendRaw(t, l, 0, EncodeControlBatch(2, 0, false, 0, 1)) // offset 5
	b2 := AbortedTxn{ProducerID: 2, FirstOffset: b.FirstOffset, LastOffset: 5, LastStableOffset: 6}
	if err := l.RecordAbortedTxn(b2); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openLog(t, dir, cfg, nil)
	defer l.Close()
	if got := mustAbortedTxns(t, l, 0, 100); !slices.Equal(got, []AbortedTxn{a, b2}) {
		t.Fatalf("after reopen %v", got)
	}
	if err := l.TruncateTo(0); err != nil {
		t.Fatal(err)
	}
	if got := mustAbortedTxns(t, l, 0, 100); got != nil || txnIndexFileSize(t, dir, 0) > 0 {
		t.Fatalf("after truncation to 0: %v, file %d bytes", got, txnIndexFileSize(t, dir, 0))
	}
}

// TestRetentionDeletesTxnIndex: a deleted segment takes its entries along.
func TestRetentionDeletesTxnIndex(t *testing.T) {
	cfg := testConfig()
	l, dir := newTestLog(t, cfg, nil)
	abortTxn(t, l, 1, 2, -1)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	b := abortTxn(t, l, 2, 2, -1)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteRecordsBefore(b.FirstOffset); err != nil {
		t.Fatal(err)
	}
	if fileExists(dir, segmentName(0)+txnIndexSuffix) {
		t.Fatal("deleted segment's .txnindex remains")
	}
	if got := mustAbortedTxns(t, l, 0, 100); !slices.Equal(got, []AbortedTxn{b}) {
		t.Fatalf("after DeleteRecordsBefore %v", got)
	}
	cfg.RetentionBytes = 0
	l.UpdateConfig(cfg)
	if n, err := l.ApplyRetention(); err != nil || n != 1 {
		t.Fatalf("ApplyRetention: %d, %v", n, err)
	}
	if fileExists(dir, segmentName(b.FirstOffset)+txnIndexSuffix) {
		t.Fatal("deleted segment's .txnindex remains")
	}
	if got := mustAbortedTxns(t, l, 0, 100); got != nil {
		t.Fatalf("after retention %v", got)
	}
}

// TestRecoveryOfDamagedTxnIndex: a torn or invalid file is dropped with a
// warning (the index is empty and new entries work); entries past the
// recovered log end are dropped.
func TestRecoveryOfDamagedTxnIndex(t *testing.T) {
	cfg := testConfig()
	for name, damage := range map[string]func(b []byte) []byte{
		"torn":        func(b []byte) []byte { return b[:len(b)-5] },
		"bad version": func(b []byte) []byte { b[34] = 0xff; return b },
		"garbage":     func(b []byte) []byte { return append(b, make([]byte, 34)...) },
	} {
		t.Run(name, func(t *testing.T) {
			l, dir := newTestLog(t, cfg, nil)
			abortTxn(t, l, 1, 1, -1)
			abortTxn(t, l, 2, 1, -1)
			l.Close()
			path := filepath.Join(dir, segmentName(0)+txnIndexSuffix)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, dir, cfg, nil)
			defer l.Close()
			if got := mustAbortedTxns(t, l, 0, 100); got != nil {
				t.Fatalf("damaged index gave %v", got)
			}
			c := abortTxn(t, l, 3, 1, -1)
			l.Close()
			l = openLog(t, dir, cfg, nil)
			if got := mustAbortedTxns(t, l, 0, 100); !slices.Equal(got, []AbortedTxn{c}) {
				t.Fatalf("after a new entry %v", got)
			}
		})
	}

	t.Run("past log end", func(t *testing.T) {
		l, dir := newTestLog(t, cfg, nil)
		a := abortTxn(t, l, 1, 1, -1) // 0-1
		abortTxn(t, l, 2, 1, -1)      // 2-3
		l.abandon()
		// The tail is torn: the second marker is lost.
		logPath := filepath.Join(dir, segmentName(0)+logFileSuffix)
		st, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(logPath, st.Size()-3); err != nil {
			t.Fatal(err)
		}
		l = openLog(t, dir, cfg, nil)
		defer l.Close()
		if l.LogEndOffset() != 3 {
			t.Fatalf("log end %d", l.LogEndOffset())
		}
		if got := mustAbortedTxns(t, l, 0, 100); !slices.Equal(got, []AbortedTxn{a}) {
			t.Fatalf("recovered %v, want %v", got, []AbortedTxn{a})
		}
		if n := txnIndexFileSize(t, dir, 0); n != 34 {
			t.Fatalf("file has %d bytes", n)
		}
	})
}

func TestSealedSegmentTxnIndex(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	a := abortTxn(t, l, 1, 2, -1)
	b := abortTxn(t, l, 2, 2, -1)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, 0, valueBatch(t, 2, 10, 1))
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	abortTxn(t, l, 3, 1, -1) // active: not offered
	sealed, err := l.SealedSegments(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, s := range sealed {
			s.File.Close()
		}
	}()
	if len(sealed) != 2 {
		t.Fatalf("%d sealed segments", len(sealed))
	}
	got, err := DecodeTxnIndex(sealed[0].TxnIndex)
	if err != nil || !slices.Equal(got, []AbortedTxn{a, b}) {
		t.Fatalf("segment 0: %v, %v", got, err)
	}
	if got, err := DecodeTxnIndex(sealed[1].TxnIndex); err != nil || len(got) != 0 {
		t.Fatalf("segment 1: %v, %v", got, err)
	}
}
