package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestLocalRetentionConfig(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.Remote || cfg.LocalRetentionMs != -2 || cfg.LocalRetentionBytes != -2 {
		t.Fatalf("defaults: remote %v, local.retention.ms %d, local.retention.bytes %d", cfg.Remote, cfg.LocalRetentionMs, cfg.LocalRetentionBytes)
	}
	for _, tc := range []struct {
		localMs, localBytes, ms, bytes int64
		wantMs, wantBytes              int64
	}{
		{-2, -2, 1000, 5000, 1000, 5000},
		{-2, -2, -1, -1, -1, -1},
		{60, 70, 1000, 5000, 60, 70},
		{-1, 0, 1000, 5000, -1, 0},
		{-2, 7, -1, 5000, -1, 7},
	} {
		cfg.LocalRetentionMs, cfg.LocalRetentionBytes = tc.localMs, tc.localBytes
		cfg.RetentionMs, cfg.RetentionBytes = tc.ms, tc.bytes
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if ms, b := cfg.EffectiveLocalRetention(); ms != tc.wantMs || b != tc.wantBytes {
			t.Errorf("%+v: effective (%d, %d)", tc, ms, b)
		}
	}
	for _, bad := range []Config{
		func() Config { c := DefaultConfig(); c.LocalRetentionMs = -3; return c }(),
		func() Config { c := DefaultConfig(); c.LocalRetentionBytes = -3; return c }(),
	} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("local retention (%d, %d) accepted: %v", bad.LocalRetentionMs, bad.LocalRetentionBytes, err)
		}
	}
}

func TestRemoteOffsetIsMonotonic(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	if got := l.RemoteOffset(); got != -1 {
		t.Fatalf("initial remote offset %d", got)
	}
	for _, step := range []struct{ set, want int64 }{{10, 10}, {5, 10}, {10, 10}, {42, 42}, {-1, 42}} {
		l.SetRemoteOffset(step.set)
		if got := l.RemoteOffset(); got != step.want {
			t.Fatalf("after SetRemoteOffset(%d): %d, want %d", step.set, got, step.want)
		}
	}
}

// TestRemoteRetentionWaitsForUpload: with remote storage, local retention
// deletes only uploaded segments, by local.retention.ms, whatever the
// cleanup policy; retention.ms no longer applies locally.
func TestRemoteRetentionWaitsForUpload(t *testing.T) {
	for _, policy := range []struct{ compact, delete bool }{{false, true}, {true, false}, {true, true}} {
		t.Run(fmt.Sprintf("compact=%v,delete=%v", policy.compact, policy.delete), func(t *testing.T) {
			clock := newFakeClock()
			cfg := testConfig()
			cfg.Compact, cfg.Delete = policy.compact, policy.delete
			cfg.Remote = true
			cfg.RetentionMs = time.Hour.Milliseconds() // would delete 9 segments without Remote
			cfg.LocalRetentionMs = (5*time.Hour + 30*time.Minute).Milliseconds()
			l, _ := retentionLayout(t, cfg, clock) // segments of 8 offsets aged 10h..1h, then the active one

			if n, err := l.ApplyRetention(); err != nil || n != 0 || l.LogStartOffset() != 0 {
				t.Fatalf("nothing uploaded: deleted %d (%v), start %d", n, err, l.LogStartOffset())
			}
			l.SetRemoteOffset(15) // the second segment is not wholly uploaded
			if n, _ := l.ApplyRetention(); n != 1 || l.LogStartOffset() != 8 {
				t.Fatalf("first segment uploaded: deleted %d, start %d", n, l.LogStartOffset())
			}
			l.SetRemoteOffset(24)
			if n, _ := l.ApplyRetention(); n != 2 || l.LogStartOffset() != 24 {
				t.Fatalf("three uploaded: deleted %d, start %d", n, l.LogStartOffset())
			}
			l.SetRemoteOffset(l.LogEndOffset())
			// Segments aged 7h and 6h go by local.retention.ms; 5h..1h stay.
			if n, _ := l.ApplyRetention(); n != 2 || l.LogStartOffset() != 40 || l.NumSegments() != 6 {
				t.Fatalf("all uploaded: deleted %d, start %d, %d segments", n, l.LogStartOffset(), l.NumSegments())
			}
			// The active segment stays, however old and uploaded.
			clock.Advance(1000 * time.Hour)
			if n, _ := l.ApplyRetention(); n != 5 || l.NumSegments() != 1 || l.LogStartOffset() != 80 {
				t.Fatalf("all old: deleted %d, %d segments, start %d", n, l.NumSegments(), l.LogStartOffset())
			}
		})
	}
}

func TestRemoteRetentionResolvesSameAsRetention(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	cfg.Remote = true
	cfg.RetentionMs = (5*time.Hour + 30*time.Minute).Milliseconds()
	cfg.LocalRetentionMs = -2
	l, segSize := retentionLayout(t, cfg, clock)
	l.SetRemoteOffset(l.LogEndOffset())
	if n, _ := l.ApplyRetention(); n != 5 || l.LogStartOffset() != 40 {
		t.Fatalf("local.retention.ms=-2: deleted %d, start %d", n, l.LogStartOffset())
	}

	// Bytes: local.retention.bytes=-2 follows retention.bytes; an explicit
	// value overrides it.
	cfg.RetentionMs, cfg.LocalRetentionMs = -1, -2
	cfg.RetentionBytes, cfg.LocalRetentionBytes = 3*segSize+segSize/2, -2
	l.UpdateConfig(cfg)
	if n, _ := l.ApplyRetention(); n != 2 || l.LogStartOffset() != 56 || l.Size() < cfg.RetentionBytes {
		t.Fatalf("local.retention.bytes=-2: deleted %d, start %d, size %d", n, l.LogStartOffset(), l.Size())
	}
	cfg.LocalRetentionBytes = segSize + segSize/2
	l.UpdateConfig(cfg)
	if n, _ := l.ApplyRetention(); n != 2 || l.LogStartOffset() != 72 {
		t.Fatalf("local.retention.bytes explicit: deleted %d, start %d", n, l.LogStartOffset())
	}
	cfg.LocalRetentionBytes = -1 // unlimited
	l.UpdateConfig(cfg)
	clock.Advance(1000 * time.Hour)
	if n, _ := l.ApplyRetention(); n != 0 {
		t.Fatalf("unlimited local retention deleted %d", n)
	}
}

// closeAll closes the duplicated files of segments.
func closeAll(t *testing.T, segments []SealedSegment) {
	t.Helper()
	for _, s := range segments {
		if err := s.File.Close(); err != nil {
			t.Error(err)
		}
	}
}

func readSealed(t *testing.T, s SealedSegment) []byte {
	t.Helper()
	buf := make([]byte, s.Size)
	if _, err := s.File.ReadAt(buf, 0); err != nil {
		t.Fatalf("read segment %d: %v", s.BaseOffset, err)
	}
	return buf
}

func TestSealedSegments(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 100 // several index entries per segment
	l, dir := newTestLog(t, cfg, nil)
	appendRaw(t, l, 1, valueBatch(t, 4, 50, 1000)) // [0, 4)
	l.Roll()
	appendRaw(t, l, 1, valueBatch(t, 4, 50, 2000)) // [4, 16)
	appendRaw(t, l, 3, valueBatch(t, 4, 50, 2100))
	appendRaw(t, l, 4, valueBatch(t, 4, 50, 2050))
	l.Roll()
	appendRaw(t, l, 4, valueBatch(t, 4, 50, 3000)) // [16, 20)
	l.Roll()
	appendRaw(t, l, 5, valueBatch(t, 4, 50, 4000)) // active
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}

	all, err := l.SealedSegments(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, all)
	want := []struct {
		base, next int64
		maxTs      int64
		epochs     []EpochEntry
	}{
		{0, 4, 1003, []EpochEntry{{1, 0}}},
		{4, 16, 2103, []EpochEntry{{1, 4}, {3, 8}, {4, 12}}},
		{16, 20, 3003, []EpochEntry{{4, 16}}},
	}
	if len(all) != len(want) {
		t.Fatalf("%d sealed segments, want %d", len(all), len(want))
	}
	for i, s := range all {
		w := want[i]
		if s.BaseOffset != w.base || s.NextOffset != w.next || s.MaxTimestamp != w.maxTs || !reflect.DeepEqual(s.Epochs, w.epochs) {
			t.Errorf("segment %d: [%d, %d) max ts %d epochs %v, want [%d, %d) %d %v",
				i, s.BaseOffset, s.NextOffset, s.MaxTimestamp, s.Epochs, w.base, w.next, w.maxTs, w.epochs)
		}
		name := filepath.Join(dir, segmentName(s.BaseOffset))
		for _, f := range []struct {
			suffix string
			got    []byte
		}{{logFileSuffix, readSealed(t, s)}, {offsetIndexSuffix, s.OffsetIndex}, {timeIndexSuffix, s.TimeIndex}} {
			onDisk, err := os.ReadFile(name + f.suffix)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.got, onDisk) {
				t.Errorf("segment %d %s: %d bytes differ from the %d on disk", s.BaseOffset, f.suffix, len(f.got), len(onDisk))
			}
		}
		decoded, err := DecodeEpochs(EncodeEpochs(s.Epochs))
		if err != nil || !reflect.DeepEqual(decoded, s.Epochs) {
			t.Errorf("epochs round trip: %v, %v", decoded, err)
		}
	}
	if len(all[1].OffsetIndex) == 0 || len(all[1].TimeIndex) == 0 {
		t.Fatal("test needs index entries")
	}
	if all[1].OffsetOfMaxTimestamp != 11 {
		t.Errorf("offset of max timestamp %d", all[1].OffsetOfMaxTimestamp)
	}

	later, err := l.SealedSegments(15)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, later)
	if len(later) != 2 || later[0].BaseOffset != 4 || later[1].BaseOffset != 16 {
		t.Fatalf("after 15: %d segments", len(later))
	}
	if none, err := l.SealedSegments(20); err != nil || len(none) != 0 {
		t.Fatalf("after 20: %d segments, %v", len(none), err)
	}
	l.Close()
	if _, err := l.SealedSegments(-1); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed log: %v", err)
	}
}

// TestSealedSegmentsOfCompactedLog: only cleaned segments are offered, so
// what is uploaded is compacted, and not the first one, which compaction
// emptied (an empty range would make the broker's manifest invalid, and
// every later upload of the partition fail).
func TestSealedSegmentsOfCompactedLog(t *testing.T) {
	cfg := compactConfig()
	cfg.SegmentBytes = 100 // one batch per segment, none merged
	clock := newFakeClock()
	l, _ := newTestLog(t, cfg, clock)
	appendRaw(t, l, 0, keyed(t, put("a", "1", 1), put("b", "1", 1)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("c", "1", 1)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("a", "2", 1), put("b", "2", 1)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("d", "1", 1)))

	before, err := l.SealedSegments(-1)
	if err != nil || len(before) != 0 {
		t.Fatalf("before clean: %d segments, %v", len(before), err)
	}
	if res := mustClean(t, l, clock); !res.Cleaned {
		t.Fatalf("clean %+v", res)
	}
	after, err := l.SealedSegments(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, after)
	if len(after) == 0 || after[len(after)-1].NextOffset > l.cleaner.firstDirtyOffset || after[len(after)-1].NextOffset != 5 {
		t.Fatalf("after clean: %d segments, first dirty %d", len(after), l.cleaner.firstDirtyOffset)
	}
	if first := l.mu.segments[0]; first.nextOffset != first.baseOffset || after[0].BaseOffset != 2 {
		t.Fatalf("first segment [%d, %d), first offered %d: want the emptied one kept and not offered", first.baseOffset, first.nextOffset, after[0].BaseOffset)
	}
	var keys []string
	for _, s := range after {
		data := readSealed(t, s)
		for _, h := range completeBatches(t, data) {
			records, err := DecodeRecords(data[:h.Size()])
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range records {
				keys = append(keys, fmt.Sprintf("%d:%s=%s", r.Offset, r.Key, r.Value))
			}
			data = data[h.Size():]
		}
	}
	if got := fmt.Sprint(keys); got != "[2:c=1 3:a=2 4:b=2]" {
		t.Fatalf("uploaded records %s", got)
	}
	// Without compaction the same log offers every sealed segment but the
	// emptied one.
	cfg.Compact, cfg.Delete = false, true
	l.UpdateConfig(cfg)
	plain, err := l.SealedSegments(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, plain)
	if len(plain) != l.NumSegments()-2 {
		t.Fatalf("delete policy: %d sealed of %d segments", len(plain), l.NumSegments())
	}
}

// TestSealedSegmentFileOutlivesDeletion: the duplicated descriptor stays
// readable after retention deleted the segment and its file was closed.
func TestSealedSegmentFileOutlivesDeletion(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig() // file.delete.delay.ms = 0
	cfg.RetentionMs = time.Hour.Milliseconds()
	l, _ := retentionLayout(t, cfg, clock)
	segments, err := l.SealedSegments(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, segments)
	first := l.mu.segments[0].file.opened() // opened by SealedSegments
	want, err := os.ReadFile(first.Name())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := l.ApplyRetention(); n != 9 {
		t.Fatalf("deleted %d", n)
	}
	if err := l.FlushIfDue(); err != nil {
		t.Fatal(err)
	}
	if _, err := first.ReadAt(make([]byte, 1), 0); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("log's own file not closed: %v", err)
	}
	if _, err := os.Stat(first.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("segment file still linked: %v", err)
	}
	if got := readSealed(t, segments[0]); !bytes.Equal(got, want) {
		t.Fatal("duplicate descriptor reads different bytes")
	}
}

// TestRemoteIndexLookupsMatchLog: the byte-level lookups give the in-memory
// answers, and with FindRecordAtOrAfterTimestamp they answer
// OffsetForTimestamp from the sealed copies alone.
func TestRemoteIndexLookupsMatchLog(t *testing.T) {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 150
	cfg.SegmentBytes = 2000
	l, _ := newTestLog(t, cfg, nil)
	ts := int64(10_000)
	for i := range 60 {
		// Timestamps go up and down a little, and batches use every codec.
		recs := []testRecord{{value: []byte("x"), timestamp: ts + int64(i%3)*7}, {value: bytes.Repeat([]byte("y"), 80), timestamp: ts - 5}}
		appendRaw(t, l, 0, makeBatch(t, batchSpec{codec: int8(i % 5), records: recs}))
		ts += 10
	}
	l.Roll()
	segments, err := l.SealedSegments(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(t, segments)
	if len(segments) < 3 {
		t.Fatalf("only %d segments", len(segments))
	}
	l.mu.RLock()
	views := make([]segmentView, len(segments))
	for i := range segments {
		views[i] = l.mu.segments[i].view()
	}
	l.mu.RUnlock()

	indexed := 0
	for i, s := range segments {
		v := views[i]
		indexed += len(v.offsetIndex)
		for o := s.BaseOffset - 2; o <= s.NextOffset+2; o++ {
			got, err := OffsetIndexLookup(s.OffsetIndex, s.BaseOffset, o)
			if want := lookupPosition(v.offsetIndex, s.BaseOffset, o); err != nil || got != want {
				t.Fatalf("segment %d offset %d: position %d (%v), want %d", s.BaseOffset, o, got, err, want)
			}
		}
		for q := int64(9_000); q <= ts+100; q += 3 {
			got, gotOK, err := TimeIndexLookup(s.TimeIndex, s.BaseOffset, q)
			want, wantOK := lookupTimestamp(v.timeIndex, s.BaseOffset, q)
			if err != nil || got != want || gotOK != wantOK {
				t.Fatalf("segment %d ts %d: (%d, %v, %v), want (%d, %v)", s.BaseOffset, q, got, gotOK, err, want, wantOK)
			}
		}
	}
	if indexed < 10 {
		t.Fatalf("only %d index entries", indexed)
	}

	for q := int64(9_990); q <= ts+10; q += 4 {
		wantOff, wantTs, wantOK, err := l.OffsetForTimestamp(q)
		if err != nil {
			t.Fatal(err)
		}
		gotOff, gotTs, gotOK := remoteOffsetForTimestamp(t, segments, q)
		if gotOff != wantOff || gotTs != wantTs || gotOK != wantOK {
			t.Fatalf("ts %d: remote (%d, %d, %v), log (%d, %d, %v)", q, gotOff, gotTs, gotOK, wantOff, wantTs, wantOK)
		}
	}
}

// remoteOffsetForTimestamp answers ListOffsets by timestamp as the broker
// would from remote copies: time index, offset index, ranged reads.
func remoteOffsetForTimestamp(t *testing.T, segments []SealedSegment, ts int64) (int64, int64, bool) {
	t.Helper()
	for _, s := range segments {
		if s.MaxTimestamp < ts {
			continue
		}
		pos := int64(0)
		if older, ok, err := TimeIndexLookup(s.TimeIndex, s.BaseOffset, ts); err != nil {
			t.Fatal(err)
		} else if ok {
			if pos, err = OffsetIndexLookup(s.OffsetIndex, s.BaseOffset, older); err != nil {
				t.Fatal(err)
			}
		}
		for pos < s.Size {
			header := make([]byte, BatchHeaderSize)
			if _, err := s.File.ReadAt(header, pos); err != nil {
				t.Fatal(err)
			}
			h, err := ParseBatchHeader(header)
			if err != nil {
				t.Fatal(err)
			}
			batch := make([]byte, h.Size())
			if _, err := s.File.ReadAt(batch, pos); err != nil {
				t.Fatal(err)
			}
			offset, timestamp, found, err := FindRecordAtOrAfterTimestamp(batch, ts, 0)
			if err != nil {
				t.Fatal(err)
			}
			if found {
				return offset, timestamp, true
			}
			pos += int64(h.Size())
		}
	}
	return 0, 0, false
}

func TestRemoteIndexLookupsRejectMalformed(t *testing.T) {
	offsetIndex := encodeOffsetIndex([]offsetIndexEntry{{5, 100}, {9, 300}})
	timeIndex := encodeTimeIndex([]timeIndexEntry{{1000, 5}, {2000, 9}})
	for name, index := range map[string][]byte{
		"partial entry":        offsetIndex[:7],
		"offsets not rising":   encodeOffsetIndex([]offsetIndexEntry{{5, 100}, {5, 300}}),
		"positions not rising": encodeOffsetIndex([]offsetIndexEntry{{5, 300}, {9, 100}}),
	} {
		if _, err := OffsetIndexLookup(index, 0, 7); !errors.Is(err, ErrCorruptRemoteData) {
			t.Errorf("offset index %s: %v", name, err)
		}
	}
	for name, index := range map[string][]byte{
		"partial entry":         timeIndex[:13],
		"timestamps not rising": encodeTimeIndex([]timeIndexEntry{{1000, 5}, {1000, 9}}),
		"offsets falling":       encodeTimeIndex([]timeIndexEntry{{1000, 9}, {2000, 5}}),
	} {
		if _, _, err := TimeIndexLookup(index, 0, 1500); !errors.Is(err, ErrCorruptRemoteData) {
			t.Errorf("time index %s: %v", name, err)
		}
	}
	if _, err := OffsetIndexLookup(offsetIndex, -1, 7); err == nil {
		t.Error("negative base accepted")
	}
	// Well-formed: the answers follow the entries.
	for _, tc := range []struct{ offset, want int64 }{{104, 0}, {105, 100}, {108, 100}, {109, 300}, {1 << 40, 300}} {
		if got, err := OffsetIndexLookup(offsetIndex, 100, tc.offset); err != nil || got != tc.want {
			t.Errorf("offset %d: %d, %v; want %d", tc.offset, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		ts, want int64
		ok       bool
	}{{1000, 0, false}, {1001, 105, true}, {2000, 105, true}, {2001, 109, true}} {
		if got, ok, err := TimeIndexLookup(timeIndex, 100, tc.ts); err != nil || got != tc.want || ok != tc.ok {
			t.Errorf("ts %d: (%d, %v, %v), want (%d, %v)", tc.ts, got, ok, err, tc.want, tc.ok)
		}
	}
}

func TestFindRecordAtOrAfterTimestamp(t *testing.T) {
	records := []testRecord{
		{key: []byte("a"), value: []byte("1"), timestamp: 10},
		{key: []byte("b"), value: []byte("2"), timestamp: 30},
		{key: []byte("c"), value: []byte("3"), timestamp: 20},
		{key: []byte("d"), value: []byte("4"), timestamp: 40},
	}
	specs := map[string]batchSpec{"xerial snappy": {codec: 2, xerialSnappy: true, records: records}}
	for codec, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		specs[name] = batchSpec{codec: int8(codec), records: records}
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			batch := makeBatch(t, spec)
			stampBatch(batch, 100, 0, 0) // base offset 100
			for _, tc := range []struct {
				ts, minOffset     int64
				offset, timestamp int64
				found             bool
			}{
				{0, 0, 100, 10, true},
				{25, 0, 101, 30, true},
				{25, 102, 103, 40, true},
				{20, 102, 102, 20, true},
				{40, 0, 103, 40, true},
				{41, 0, 0, 0, false},
				{0, 104, 0, 0, false},
			} {
				offset, timestamp, found, err := FindRecordAtOrAfterTimestamp(append(batch, 0xff), tc.ts, tc.minOffset)
				if err != nil || offset != tc.offset || timestamp != tc.timestamp || found != tc.found {
					t.Errorf("ts %d min %d: (%d, %d, %v, %v), want (%d, %d, %v)", tc.ts, tc.minOffset,
						offset, timestamp, found, err, tc.offset, tc.timestamp, tc.found)
				}
			}
			corrupt := bytes.Clone(batch)
			corrupt[len(corrupt)-1] ^= 1
			if _, _, _, err := FindRecordAtOrAfterTimestamp(corrupt, 0, 0); !errors.Is(err, ErrCorruptBatch) {
				t.Errorf("corrupt batch: %v", err)
			}
			if _, _, _, err := FindRecordAtOrAfterTimestamp(batch[:len(batch)-1], 0, 0); !errors.Is(err, ErrCorruptBatch) {
				t.Errorf("truncated batch: %v", err)
			}
		})
	}
	// LogAppendTime: every record has the batch's max timestamp.
	batch := makeBatch(t, batchSpec{codec: 3, logAppendTime: 500, records: records})
	if offset, timestamp, found, err := FindRecordAtOrAfterTimestamp(batch, 100, 1); err != nil || !found || offset != 1 || timestamp != 500 {
		t.Errorf("log append time: (%d, %d, %v, %v)", offset, timestamp, found, err)
	}
}

func TestDecodeEpochsRejectsMalformed(t *testing.T) {
	for _, data := range []string{
		"", "0\n", "1\n0\n", "0\n2\n1 0\n", "0\n1\n1\n", "0\n1\n-1 0\n", "0\n1\n1 -5\n",
		"0\n2\n3 10\n2 20\n", "0\n2\n2 10\n3 5\n", "0\n1\n99999999999 0\n", "0\nx\n",
	} {
		if got, err := DecodeEpochs([]byte(data)); !errors.Is(err, ErrCorruptRemoteData) {
			t.Errorf("%q: %v, %v", data, got, err)
		}
	}
	if got, err := DecodeEpochs(EncodeEpochs(nil)); err != nil || len(got) != 0 {
		t.Errorf("empty: %v, %v", got, err)
	}
}

func TestCreateAt(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig()
	dir := filepath.Join(t.TempDir(), "topic-0")
	l, err := CreateAt(dir, 1000, cfg, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 1000 || l.LogEndOffset() != 1000 || l.NumSegments() != 1 {
		t.Fatalf("new log [%d, %d) with %d segments", l.LogStartOffset(), l.LogEndOffset(), l.NumSegments())
	}
	if !fileExists(dir, segmentName(1000)+logFileSuffix) || !fileExists(dir, logStartOffsetFile) {
		t.Fatal("segment or log-start-offset file missing")
	}
	if _, err := l.Read(999, 100, l.LogEndOffset(), true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	// Reopen empty: same start.
	l.Close()
	l = openLog(t, dir, cfg, clock)
	if l.LogStartOffset() != 1000 || l.LogEndOffset() != 1000 {
		t.Fatalf("reopened empty log [%d, %d)", l.LogStartOffset(), l.LogEndOffset())
	}
	res := appendRaw(t, l, 7, valueBatch(t, 4, 10, clock.Millis()))
	if res.FirstOffset != 1000 || res.LastOffset != 1003 {
		t.Fatalf("append got [%d, %d]", res.FirstOffset, res.LastOffset)
	}
	l.Roll()
	appendRaw(t, l, 7, valueBatch(t, 2, 10, clock.Millis()))
	l.Close()

	l = openLog(t, dir, cfg, clock)
	defer l.Close()
	if l.LogStartOffset() != 1000 || l.LogEndOffset() != 1006 || l.LatestEpoch() != 7 {
		t.Fatalf("reopened log [%d, %d) epoch %d", l.LogStartOffset(), l.LogEndOffset(), l.LatestEpoch())
	}
	if headers := readAll(t, l, 1000); len(headers) != 2 || headers[0].BaseOffset != 1000 {
		t.Fatalf("read back %+v", headers)
	}

	// A directory that holds a log is refused and left alone.
	if _, err := CreateAt(dir, 5000, cfg, Options{}); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("CreateAt over a log: %v", err)
	}
	if fileExists(dir, segmentName(5000)+logFileSuffix) {
		t.Fatal("CreateAt over a log created a segment")
	}
	if _, err := CreateAt(filepath.Join(t.TempDir(), "x"), -1, cfg, Options{}); err == nil {
		t.Fatal("negative base accepted")
	}
}

// TestCreateAtDropsStaleCheckpoints: metadata of segments that are gone
// does not leak into the new log.
func TestCreateAtDropsStaleCheckpoints(t *testing.T) {
	cfg := compactConfig()
	dir := t.TempDir()
	stale := cleanerCheckpoint{firstDirtyOffset: 9000, tombstoneDeadline: noTimestamp}
	if err := os.WriteFile(filepath.Join(dir, cleanerCheckpointFile), stale.encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := CreateAt(dir, 1000, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendRaw(t, l, 0, keyed(t, put("a", "1", 1)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("a", "2", 1)))
	// The segment was never cleaned, so it is not offered for upload.
	if segments, err := l.SealedSegments(-1); err != nil || len(segments) != 0 {
		closeAll(t, segments)
		t.Fatalf("dirty segment offered: %d, %v", len(segments), err)
	}
}
