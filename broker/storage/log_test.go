package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"time"
)

func TestAppendReadRoundTrip(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	b1 := valueBatch(t, 3, 50, 1000)
	b2 := valueBatch(t, 1, 50, 2000)
	b3 := valueBatch(t, 5, 50, 3000)

	res := appendRaw(t, l, 4, b1, b2)
	if res.FirstOffset != 0 || res.LastOffset != 3 || res.LogAppendTime != -1 {
		t.Fatalf("first append %+v", res)
	}
	res = appendRaw(t, l, 4, b3)
	if res.FirstOffset != 4 || res.LastOffset != 8 {
		t.Fatalf("second append %+v", res)
	}
	if l.LogEndOffset() != 9 || l.LogStartOffset() != 0 {
		t.Fatalf("offsets [%d, %d)", l.LogStartOffset(), l.LogEndOffset())
	}

	chunk, err := l.Read(0, 1<<20, l.LogEndOffset(), false)
	if err != nil {
		t.Fatal(err)
	}
	data, err := chunk.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	headers, err := ValidateBatches(data) // CRCs still valid after the rewrite
	if err != nil {
		t.Fatal(err)
	}
	wantBases := []int64{0, 3, 4}
	for i, h := range headers {
		if h.BaseOffset != wantBases[i] || h.PartitionLeaderEpoch != 4 {
			t.Fatalf("batch %d: base %d epoch %d", i, h.BaseOffset, h.PartitionLeaderEpoch)
		}
	}
	records, err := DecodeRecords(data[headers[0].Size()+headers[1].Size():])
	if err != nil {
		t.Fatal(err)
	}
	if records[0].Offset != 4 || records[4].Offset != 8 || !bytes.Equal(records[2].Value, bytes.Repeat([]byte("c"), 50)) {
		t.Fatalf("records %+v", records[0])
	}
	if l.Size() != int64(len(data)) {
		t.Fatalf("Size %d, want %d", l.Size(), len(data))
	}
}

func TestAppendUpdatesHeadersAndLogAppendTime(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	appendRaw(t, l, 0, valueBatch(t, 2, 10, 1))
	buf := append(valueBatch(t, 1, 10, 5), valueBatch(t, 2, 10, 6)...)
	headers, err := ValidateBatches(buf)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Append(buf, headers, AppendOptions{LeaderEpoch: 1, LogAppendTime: 424242})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstOffset != 2 || res.LastOffset != 4 || res.LogAppendTime != 424242 {
		t.Fatalf("result %+v", res)
	}
	if headers[0].BaseOffset != 2 || headers[1].BaseOffset != 3 || headers[1].MaxTimestamp != 424242 || headers[1].TimestampType() != 1 {
		t.Fatalf("headers not updated: %+v", headers)
	}
	again, err := ValidateBatches(buf)
	if err != nil {
		t.Fatalf("stamped bytes invalid: %v", err)
	}
	if again[1] != headers[1] {
		t.Fatalf("headers %+v differ from bytes %+v", headers[1], again[1])
	}
	got := readAll(t, l, 0)
	if len(got) != 3 || got[2].MaxTimestamp != 424242 || got[2].CRC != headers[1].CRC {
		t.Fatalf("read back %+v", got)
	}
}

func TestAppendRejectsMismatchedHeaders(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	b := valueBatch(t, 1, 10, 1)
	headers, _ := ValidateBatches(b)
	if _, err := l.Append(b[:len(b)-1], headers, AppendOptions{}); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("got %v", err)
	}
	if _, err := l.Append(nil, nil, AppendOptions{}); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("got %v", err)
	}
}

// readLayout appends 10 batches of 4 records (offsets 0..39) of ~1 KiB each.
func readLayout(t *testing.T, cfg Config) (*Log, []int) {
	l, _ := newTestLog(t, cfg, nil)
	var sizes []int
	for i := range 10 {
		b := valueBatch(t, 4, 250, int64(i*10))
		sizes = append(sizes, len(b))
		appendRaw(t, l, 0, b)
	}
	return l, sizes
}

func TestReadSemantics(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 1500 // sparse index: reads must scan past entries
	l, sizes := readLayout(t, cfg)
	size := int64(sizes[0])
	end := l.LogEndOffset()

	tests := []struct {
		name        string
		offset      int64
		maxBytes    int
		maxOffset   int64
		minOneBatch bool
		wantPos     int64
		wantLen     int64
	}{
		{"start", 0, 1 << 20, end, false, 0, 10 * size},
		{"mid batch starts at batch", 6, 1 << 20, end, false, 1 * size, 9 * size},
		{"last offset of batch", 7, 1 << 20, end, false, 1 * size, 9 * size},
		{"max bytes cuts the last batch", 8, int(2*size + 10), end, false, 2 * size, 2*size + 10},
		{"max bytes below one batch", 8, 10, end, false, 2 * size, 10},
		{"min one batch", 8, 10, end, true, 2 * size, size},
		{"max offset stops at boundary", 4, 1 << 20, 20, false, 1 * size, 4 * size},
		{"max offset with min one batch", 4, 10, 20, true, 1 * size, size},
		{"at max offset", 20, 1 << 20, 20, false, 0, 0},
		{"at log end", end, 1 << 20, end, true, 0, 0},
		{"zero max bytes", 4, 0, end, false, 0, 0},
		{"last batch", 39, 1 << 20, end, false, 9 * size, size},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := l.Read(tt.offset, tt.maxBytes, tt.maxOffset, tt.minOneBatch)
			if err != nil {
				t.Fatal(err)
			}
			if c.Len != tt.wantLen || (tt.wantLen > 0 && c.Pos != tt.wantPos) {
				t.Fatalf("chunk pos %d len %d, want pos %d len %d", c.Pos, c.Len, tt.wantPos, tt.wantLen)
			}
		})
	}

	for _, offset := range []int64{-1, end + 1} {
		if _, err := l.Read(offset, 100, end, true); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("Read(%d): got %v, want ErrOffsetOutOfRange", offset, err)
		}
	}
}

func TestReadAcrossSegments(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 3000 // two ~1 KiB batches per segment
	l, _ := readLayout(t, cfg)
	if n := l.NumSegments(); n != 5 {
		t.Fatalf("%d segments, want 5", n)
	}
	// A read never spans segments: from offset 0 it ends after 2 batches.
	c, err := l.Read(0, 1<<20, l.LogEndOffset(), false)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := c.ReadAll()
	if hs := completeBatches(t, data); len(hs) != 2 || hs[1].LastOffset() != 7 {
		t.Fatalf("first chunk holds %d batches", len(hs))
	}
	got := readAll(t, l, 0)
	for i, h := range got {
		if h.BaseOffset != int64(i*4) {
			t.Fatalf("batch %d has base %d", i, h.BaseOffset)
		}
	}
	if len(got) != 10 {
		t.Fatalf("read %d batches", len(got))
	}
	// Mid-batch offsets in later segments.
	for _, offset := range []int64{9, 17, 35, 39} {
		c, err := l.Read(offset, 1, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := c.ReadAll()
		h, _ := ParseBatchHeader(data)
		if h.BaseOffset != offset/4*4 {
			t.Fatalf("Read(%d) starts at batch %d", offset, h.BaseOffset)
		}
	}
}

func TestReadContinuesPastSegmentEnd(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	appendRaw(t, l, 0, valueBatch(t, 2, 10, 1))
	// A gap in offsets, as a truncation-and-refetch or compaction could leave.
	l.writeMu.Lock()
	l.mu.Lock()
	l.mu.logEndOffset = 10
	l.activeLocked().nextOffset = 10
	l.mu.Unlock()
	l.writeMu.Unlock()
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	c, err := l.Read(5, 100, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := c.ReadAll()
	if h, _ := ParseBatchHeader(data); h.BaseOffset != 10 {
		t.Fatalf("read in the gap returned batch %d, want 10", h.BaseOffset)
	}
}

func TestRollBySize(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 10 << 10
	l, dir := newTestLog(t, cfg, nil)
	b := valueBatch(t, 1, 4000, 1) // ~4 KiB: two fit per segment
	for range 7 {
		appendRaw(t, l, 0, b)
	}
	if n := l.NumSegments(); n != 4 {
		t.Fatalf("%d segments, want 4", n)
	}
	for _, name := range []string{"00000000000000000000.log", "00000000000000000002.log", "00000000000000000004.index", "00000000000000000004.timeindex", "00000000000000000006.log"} {
		if !fileExists(dir, name) {
			t.Fatalf("missing %s", name)
		}
	}
	// The active segment's index files come with its first flush.
	if fileExists(dir, "00000000000000000006.index") || fileExists(dir, "00000000000000000006.timeindex") {
		t.Fatal("the active segment's index files exist before any flush")
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if !fileExists(dir, "00000000000000000006.index") || !fileExists(dir, "00000000000000000006.timeindex") {
		t.Fatal("the active segment's index files are missing after a flush")
	}
	// An append bigger than segment.bytes still goes in, alone.
	big := valueBatch(t, 1, 20<<10, 1)
	appendRaw(t, l, 0, big)
	if n := l.NumSegments(); n != 5 {
		t.Fatalf("%d segments after a big append, want 5", n)
	}
}

func TestRollByTime(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.SegmentMs = 1000
	l, _ := newTestLog(t, cfg, clock)
	if err := l.MaybeRoll(); err != nil || l.NumSegments() != 1 {
		t.Fatalf("empty segment rolled: %v %d", err, l.NumSegments())
	}
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	clock.Advance(999 * time.Millisecond)
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	if l.NumSegments() != 1 {
		t.Fatal("rolled before segment.ms")
	}
	clock.Advance(time.Millisecond)
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1)) // rolls at append time
	if l.NumSegments() != 2 {
		t.Fatalf("%d segments, want 2", l.NumSegments())
	}
	clock.Advance(time.Second)
	if err := l.MaybeRoll(); err != nil || l.NumSegments() != 3 {
		t.Fatalf("MaybeRoll: %v, %d segments", err, l.NumSegments())
	}
	if err := l.MaybeRoll(); err != nil || l.NumSegments() != 3 {
		t.Fatalf("MaybeRoll rolled an empty segment: %v, %d segments", err, l.NumSegments())
	}
	if err := l.Roll(); err != nil || l.NumSegments() != 3 {
		t.Fatalf("Roll of an empty segment: %v, %d", err, l.NumSegments())
	}
}

func TestRollWhenIndexFull(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 0     // an entry for every batch after the first
	cfg.SegmentIndexBytes = 4 * 12 // room for 4 time entries / 6 offset entries
	l, _ := newTestLog(t, cfg, nil)
	for i := range 20 {
		appendRaw(t, l, 0, valueBatch(t, 1, 10, int64(i)))
	}
	if l.NumSegments() < 4 {
		t.Fatalf("%d segments, index size limit ignored", l.NumSegments())
	}
	for _, s := range l.mu.segments {
		if len(s.offsetIndex)*8 > cfg.SegmentIndexBytes || len(s.timeIndex)*12 > cfg.SegmentIndexBytes {
			t.Fatalf("segment %d has %d/%d index entries", s.baseOffset, len(s.offsetIndex), len(s.timeIndex))
		}
	}
	if got := readAll(t, l, 0); len(got) != 20 {
		t.Fatalf("read %d batches", len(got))
	}
}

func TestFlushPolicy(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.FlushMessages = 5
	l, _ := newTestLog(t, cfg, clock)
	appendRaw(t, l, 0, valueBatch(t, 4, 10, 1))
	if l.unflushedRecords != 4 {
		t.Fatalf("unflushed %d", l.unflushedRecords)
	}
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	if l.unflushedRecords != 0 {
		t.Fatalf("flush.messages ignored: unflushed %d", l.unflushedRecords)
	}

	cfg.FlushMessages = math.MaxInt64
	cfg.FlushMs = 1000
	l.UpdateConfig(cfg)
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	if err := l.FlushIfDue(); err != nil || l.unflushedRecords != 1 {
		t.Fatalf("flushed early: %v %d", err, l.unflushedRecords)
	}
	clock.Advance(time.Second)
	if err := l.FlushIfDue(); err != nil || l.unflushedRecords != 0 {
		t.Fatalf("flush.ms ignored: %v %d", err, l.unflushedRecords)
	}
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1))
	clock.Advance(time.Second)
	appendRaw(t, l, 0, valueBatch(t, 1, 10, 1)) // flush.ms checked at append
	if l.unflushedRecords != 0 {
		t.Fatalf("flush.ms not checked on append: %d", l.unflushedRecords)
	}
}

// TestFlushDeferred: with DeferFlush an fsync the policy makes due is left
// to the caller (FlushDue), who flushes once it holds no lock.
func TestFlushDeferred(t *testing.T) {
	cfg := testConfig()
	cfg.FlushMessages = 2
	l, _ := newTestLog(t, cfg, newFakeClock())
	res, err := appendWith(l, AppendOptions{DeferFlush: true}, valueBatch(t, 1, 10, 1))
	if err != nil || res.FlushDue || l.UnflushedRecords() != 1 {
		t.Fatalf("below flush.messages: %+v, %v, unflushed %d", res, err, l.UnflushedRecords())
	}
	res, err = appendWith(l, AppendOptions{DeferFlush: true}, valueBatch(t, 1, 10, 1))
	if err != nil || !res.FlushDue || l.UnflushedRecords() != 2 {
		t.Fatalf("at flush.messages: %+v, %v, unflushed %d: want FlushDue and nothing flushed", res, err, l.UnflushedRecords())
	}
	if err := l.Flush(); err != nil || l.UnflushedRecords() != 0 {
		t.Fatalf("caller's flush: %v, unflushed %d", err, l.UnflushedRecords())
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Config{}).Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("zero config: %v", err)
	}
	if _, err := Open(t.TempDir(), Config{}, Options{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Open with zero config: %v", err)
	}
}

func TestLeaderEpochs(t *testing.T) {
	l, dir := newTestLog(t, testConfig(), nil)
	if l.LatestEpoch() != -1 {
		t.Fatal("epoch on an empty log")
	}
	if e, o := l.EndOffsetForEpoch(0); e != -1 || o != -1 {
		t.Fatalf("empty cache: %d %d", e, o)
	}
	appendRaw(t, l, 1, valueBatch(t, 5, 10, 1)) // epoch 1: 0..4
	appendRaw(t, l, 1, valueBatch(t, 5, 10, 1)) // 5..9
	appendRaw(t, l, 3, valueBatch(t, 5, 10, 1)) // epoch 3: 10..14
	appendRaw(t, l, 2, valueBatch(t, 5, 10, 1)) // older epoch: no entry
	appendRaw(t, l, 5, valueBatch(t, 5, 10, 1)) // epoch 5: 20..24
	if l.LatestEpoch() != 5 {
		t.Fatalf("latest %d", l.LatestEpoch())
	}
	check := func(l *Log) {
		t.Helper()
		for _, tt := range []struct {
			req       int32
			wantEpoch int32
			wantEnd   int64
		}{{0, -1, -1}, {1, 1, 10}, {2, 1, 10}, {3, 3, 20}, {4, 3, 20}, {5, 5, 25}, {9, 5, 25}} {
			if e, o := l.EndOffsetForEpoch(tt.req); e != tt.wantEpoch || o != tt.wantEnd {
				t.Fatalf("EndOffsetForEpoch(%d) = (%d, %d), want (%d, %d)", tt.req, e, o, tt.wantEpoch, tt.wantEnd)
			}
		}
	}
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !fileExists(dir, leaderEpochFile) {
		t.Fatal("no leader-epoch-checkpoint")
	}
	l = openLog(t, dir, testConfig(), nil)
	defer l.Close()
	check(l)

	if err := l.TruncateTo(17); err != nil { // cut to 15
		t.Fatal(err)
	}
	if e, o := l.EndOffsetForEpoch(5); e != 3 || o != 15 {
		t.Fatalf("after truncation: (%d, %d)", e, o)
	}
	if err := l.TruncateTo(12); err != nil { // cut to 10: epoch 3 is gone
		t.Fatal(err)
	}
	if e, o := l.EndOffsetForEpoch(3); e != 1 || o != 10 || l.LatestEpoch() != 1 {
		t.Fatalf("after truncation: (%d, %d)", e, o)
	}
}

func TestEpochCacheTruncateFromStart(t *testing.T) {
	c := epochCache{entries: []epochEntry{{1, 0}, {2, 10}, {4, 20}}}
	c.truncateFromStart(15)
	if fmt.Sprint(c.entries) != "[{2 15} {4 20}]" {
		t.Fatalf("entries %v", c.entries)
	}
	c.truncateFromStart(25)
	if fmt.Sprint(c.entries) != "[{4 25}]" {
		t.Fatalf("entries %v", c.entries)
	}
	if got, err := decodeEpochCache(c.encode()); err != nil || fmt.Sprint(got.entries) != fmt.Sprint(c.entries) {
		t.Fatalf("round trip %v %v", got.entries, err)
	}
}

func TestTruncateTo(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 3000
	l, _ := readLayout(t, cfg)
	if err := l.TruncateTo(40); err != nil || l.LogEndOffset() != 40 {
		t.Fatalf("no-op truncate: %v %d", err, l.LogEndOffset())
	}
	if err := l.TruncateTo(30); err != nil { // inside the 4th segment
		t.Fatal(err)
	}
	if l.LogEndOffset() != 28 { // batch 28..31 holds 30
		t.Fatalf("end %d, want 28", l.LogEndOffset())
	}
	if err := l.TruncateTo(22); err != nil { // mid batch 20..23: cut to 20
		t.Fatal(err)
	}
	if l.LogEndOffset() != 20 {
		t.Fatalf("end %d, want 20", l.LogEndOffset())
	}
	if got := readAll(t, l, 0); len(got) != 5 {
		t.Fatalf("%d batches after truncation", len(got))
	}
	if _, err := l.Read(21, 100, 100, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past new end: %v", err)
	}
	// Appends continue from the new end; max timestamp reflects what is left.
	res := appendRaw(t, l, 0, valueBatch(t, 1, 10, 5))
	if res.FirstOffset != 20 {
		t.Fatalf("append after truncation at %d", res.FirstOffset)
	}
	if _, ts, ok, err := l.MaxTimestamp(); err != nil || !ok || ts != 43 {
		t.Fatalf("max timestamp %d %v %v", ts, ok, err)
	}
	// Below the log start the log is emptied and restarts there.
	if err := l.DeleteRecordsBefore(8); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(3); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 3 || l.LogEndOffset() != 3 || l.NumSegments() != 1 || l.Size() != 0 {
		t.Fatalf("after full truncation: [%d, %d) %d segments %d bytes", l.LogStartOffset(), l.LogEndOffset(), l.NumSegments(), l.Size())
	}
	appendRaw(t, l, 0, valueBatch(t, 2, 10, 5))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, l.Dir(), cfg, nil)
	defer l2.Close()
	if l2.LogStartOffset() != 3 || l2.LogEndOffset() != 5 || l2.RecoveryStats().BytesScanned != 0 {
		t.Fatalf("reopened [%d, %d) stats %+v", l2.LogStartOffset(), l2.LogEndOffset(), l2.RecoveryStats())
	}
}

func TestTruncateThenReopenUnclean(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 3000
	l, _ := readLayout(t, cfg)
	dir := l.Dir()
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateTo(14); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, 0, valueBatch(t, 3, 10, 5))
	l.abandon()
	l2 := openLog(t, dir, cfg, nil)
	defer l2.Close()
	got := readAll(t, l2, 0)
	if l2.LogEndOffset() != 15 || len(got) != 4 || got[3].BaseOffset != 12 {
		t.Fatalf("end %d, %d batches", l2.LogEndOffset(), len(got))
	}
}

func TestConcurrentAppendAndRead(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 20 << 10
	cfg.RetentionBytes = 200 << 10
	cfg.FlushMessages = 50
	cfg.FileDeleteDelayMs = 60000 // in-flight reads of deleted segments stay valid
	l, _ := newTestLog(t, cfg, nil)
	const appends = 400
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Add(2)
	go func() { // a second appender: appends serialize inside the Log
		defer wg.Done()
		for i := range appends / 4 {
			if _, err := appendWith(l, AppendOptions{}, valueBatch(t, 1, 100, int64(i))); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := range appends {
			if _, err := appendWith(l, AppendOptions{LeaderEpoch: int32(i / 100)}, valueBatch(t, 2, 500, int64(i))); err != nil {
				errs <- err
				return
			}
			if i%50 == 0 {
				if _, err := l.ApplyRetention(); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := int64(0)
			for next < 2*appends {
				start := l.LogStartOffset()
				if next < start {
					next = start
				}
				c, err := l.Read(next, 4096, l.LogEndOffset(), true)
				if errors.Is(err, ErrOffsetOutOfRange) {
					continue // retention moved the start under us
				}
				if err != nil {
					errs <- err
					return
				}
				if c.Len == 0 {
					continue
				}
				data, err := c.ReadAll()
				if err != nil {
					errs <- err
					return
				}
				h, err := ParseBatchHeader(data)
				if err != nil || h.LastOffset() < next || h.BaseOffset > next {
					errs <- fmt.Errorf("reader %d: read at %d got batch %d: %v", r, next, h.BaseOffset, err)
					return
				}
				next = h.LastOffset() + 1
				if r == 0 {
					if _, _, _, err := l.MaxTimestamp(); err != nil {
						errs <- err
						return
					}
				}
				if r == 1 {
					l.ForEachBatch(next, func(BatchHeader) error { return nil })
					l.OffsetForTimestamp(next / 2)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			if err := l.Checkpoint(); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestClosedLog(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := appendWith(l, AppendOptions{}, valueBatch(t, 1, 1, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if _, err := l.Read(0, 1, 1, true); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
}

func TestDelete(t *testing.T) {
	l, dir := newTestLog(t, testConfig(), nil)
	appendRaw(t, l, 0, valueBatch(t, 1, 1, 1))
	if err := l.Delete(); err != nil {
		t.Fatal(err)
	}
	if fileExists(dir, "") {
		t.Fatal("directory still exists")
	}
}

func TestReadReportsCorruptTrustedSegment(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 1 << 20 // no index entries: reads scan headers from 0
	l, dir := newTestLog(t, cfg, nil)
	for range 5 {
		appendRaw(t, l, 0, valueBatch(t, 2, 100, 1))
	}
	size := int64(len(valueBatch(t, 2, 100, 1)))
	path := lastSegmentPath(l)
	l.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0, 0, 0, 0}, 2*size+offsetLength) // batch 3's length: 0
	f.Close()
	l2 := openLog(t, dir, cfg, nil) // trusted by the checkpoint: not scanned
	defer l2.Close()
	if _, err := l2.Read(7, 100, l2.LogEndOffset(), true); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("got %v, want ErrCorruptBatch", err)
	}
	if err := l2.ForEachBatch(0, func(BatchHeader) error { return nil }); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("ForEachBatch: got %v", err)
	}
	if _, err := l2.Read(2, 100, l2.LogEndOffset(), true); err != nil {
		t.Fatalf("read before the damage: %v", err)
	}
}

func TestForEachBatch(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 3000
	l, _ := readLayout(t, cfg)
	var bases []int64
	collect := func(h BatchHeader) error { bases = append(bases, h.BaseOffset); return nil }
	if err := l.ForEachBatch(10, collect); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(bases) != "[8 12 16 20 24 28 32 36]" {
		t.Fatalf("bases %v", bases)
	}
	stop := errors.New("stop")
	n := 0
	err := l.ForEachBatch(0, func(BatchHeader) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("early stop: %v after %d", err, n)
	}
}
