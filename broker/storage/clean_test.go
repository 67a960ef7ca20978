package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestCleanMillionUpdates: a million small updates over a thousand keys
// compact to one record per key (plus the active segment), each the latest
// value, at its original offset.
func TestCleanMillionUpdates(t *testing.T) {
	const (
		updates  = 1_000_000
		keys     = 1000
		perBatch = 1000
	)
	cfg := compactConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.IndexIntervalBytes = 4096
	clock := newFakeClock()
	l, dir := newTestLog(t, cfg, clock)

	rng := rand.New(rand.NewPCG(1, 2))
	keyOf := make([]string, updates) // by offset
	records := make([]testRecord, perBatch)
	for b := range updates / perBatch {
		for i := range records {
			offset := b*perBatch + i
			keyOf[offset] = fmt.Sprintf("k%03d", rng.IntN(keys))
			records[i] = testRecord{key: []byte(keyOf[offset]), value: binary.BigEndian.AppendUint64(nil, uint64(offset)), timestamp: clock.Millis()}
		}
		appendRaw(t, l, 0, makeBatch(t, batchSpec{records: records}))
	}
	activeBase := l.mu.segments[len(l.mu.segments)-1].baseOffset
	latest := map[string]int64{}          // key → offset of its last update
	latestCleanable := map[string]int64{} // the same below the active segment
	for offset, key := range keyOf {
		latest[key] = int64(offset)
		if int64(offset) < activeBase {
			latestCleanable[key] = int64(offset)
		}
	}
	segmentsBefore := l.NumSegments()

	res := mustClean(t, l, clock)
	if !res.Cleaned || res.Reason != "dirty ratio" || res.FirstOffset != 0 || res.EndOffset != activeBase {
		t.Fatalf("result %+v, active segment at %d", res, activeBase)
	}
	t.Logf("%d segments before, %d after; %+v", segmentsBefore, l.NumSegments(), res)

	check := func(l *Log) {
		t.Helper()
		cleanedSection := 0
		for _, r := range mustReadRecords(t, l) {
			if got := int64(binary.BigEndian.Uint64([]byte(r.Value))); got != r.Offset {
				t.Fatalf("record at offset %d holds the value of offset %d", r.Offset, got)
			}
			if r.Offset < activeBase {
				cleanedSection++
				if latestCleanable[r.Key] != r.Offset {
					t.Fatalf("cleaned section kept %v; the latest of %s there is at %d", r, r.Key, latestCleanable[r.Key])
				}
			}
		}
		if cleanedSection > keys {
			t.Fatalf("%d records left below the active segment, want at most %d", cleanedSection, keys)
		}
		values := latestValues(mustReadRecords(t, l))
		if len(values) != keys {
			t.Fatalf("%d keys, want %d", len(values), keys)
		}
		for k, off := range latest {
			if values[k].Offset != off {
				t.Fatalf("key %s reads offset %d, want %d", k, values[k].Offset, off)
			}
		}
		if l.LogStartOffset() != 0 || l.LogEndOffset() != updates {
			t.Fatalf("log [%d, %d)", l.LogStartOffset(), l.LogEndOffset())
		}
	}
	check(l)
	if res.RecordsRemoved < activeBase-keys || res.BytesAfter*10 > res.BytesBefore {
		t.Fatalf("cleaned too little: %+v", res)
	}

	// Reopened, the cleaner checkpoint says nothing is dirty.
	l.Close()
	l2 := openLog(t, dir, cfg, clock)
	defer l2.Close()
	check(l2)
	if l2.NeedsClean(clock.Now()) {
		t.Fatal("clean due right after a clean")
	}
}

// TestCleanTombstones: a tombstone that is the latest record of its key
// survives the pass that first sees it, stamped with a delete horizon of
// now + delete.retention.ms, and is removed by the first pass after that,
// which the horizon alone makes due (also across a reopen).
func TestCleanTombstones(t *testing.T) {
	cfg := compactConfig()
	cfg.DeleteRetentionMs = 60_000
	clock := newFakeClock()
	l, dir := newTestLog(t, cfg, clock)
	ts := clock.Millis() - 5000

	appendRaw(t, l, 0, keyed(t, put("a", "a1", ts), put("b", "b1", ts+1), put("c", "c1", ts+2)))
	appendRaw(t, l, 0, keyed(t, del("a", ts+3), put("b", "b2", ts+4)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("d", "d1", ts+5)))

	res := mustClean(t, l, clock)
	if !res.Cleaned || res.TombstonesRemoved != 0 || res.RecordsRemoved != 2 {
		t.Fatalf("first pass: %+v", res)
	}
	horizon := clock.Millis() + cfg.DeleteRetentionMs
	batches := mustReadBatches(t, l)
	if got := fmt.Sprint(recordsOf(batches)); got != `[2:c="c1" 3:a=<tombstone> 4:b="b2" 5:d="d1"]` {
		t.Fatalf("after the first pass: %s", got)
	}
	tomb := batches[1]
	if tomb.Header.Attributes&attrDeleteHorizon == 0 || tomb.Header.FirstTimestamp != horizon {
		t.Fatalf("tombstone batch header %+v, want delete horizon %d", tomb.Header, horizon)
	}
	if tomb.Records[0].Timestamp != ts+3 || tomb.Records[1].Timestamp != ts+4 {
		t.Fatalf("record timestamps changed: %+v", tomb.Records)
	}

	l.Close()
	l = openLog(t, dir, cfg, clock)
	defer l.Close()
	clock.Advance(time.Duration(cfg.DeleteRetentionMs-1) * time.Millisecond)
	if l.NeedsClean(clock.Now()) {
		t.Fatal("clean due before the delete horizon")
	}
	if res := mustClean(t, l, clock); res.Cleaned {
		t.Fatalf("cleaned before the horizon: %+v", res)
	}
	clock.Advance(time.Millisecond)
	if !l.NeedsClean(clock.Now()) {
		t.Fatal("no clean due at the delete horizon")
	}
	res = mustClean(t, l, clock)
	if !res.Cleaned || res.Reason != "tombstones" || res.TombstonesRemoved != 1 {
		t.Fatalf("second pass: %+v", res)
	}
	batches = mustReadBatches(t, l)
	if got := fmt.Sprint(recordsOf(batches)); got != `[2:c="c1" 4:b="b2" 5:d="d1"]` {
		t.Fatalf("after the horizon: %s", got)
	}
	if h := batches[1].Header; h.Attributes&attrDeleteHorizon != 0 || h.FirstTimestamp != ts+4 || h.BaseOffset != 3 || h.LastOffset() != 4 {
		t.Fatalf("batch without tombstones: %+v", h)
	}
	if l.NeedsClean(clock.Now().Add(time.Hour)) {
		t.Fatal("clean still due with no tombstone left")
	}
}

// TestCleanMinCompactionLag: segments holding a record newer than
// min.compaction.lag.ms are not cleaned, nor any after them.
func TestCleanMinCompactionLag(t *testing.T) {
	cfg := compactConfig()
	cfg.MinCompactionLagMs = 60_000
	clock := newFakeClock()
	l, _ := newTestLog(t, cfg, clock)
	old := clock.Millis() - 120_000
	appendRaw(t, l, 0, keyed(t, put("a", "1", old), put("a", "2", old)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("a", "3", clock.Millis()), put("a", "4", clock.Millis())))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("b", "1", clock.Millis())))

	res := mustClean(t, l, clock)
	if !res.Cleaned || res.EndOffset != 2 {
		t.Fatalf("first pass: %+v", res)
	}
	if got := fmt.Sprint(mustReadRecords(t, l)); got != `[1:a="2" 2:a="3" 3:a="4" 4:b="1"]` {
		t.Fatalf("after the first pass: %s", got)
	}
	clock.Advance(59 * time.Second)
	if l.NeedsClean(clock.Now()) {
		t.Fatal("clean due inside min.compaction.lag.ms")
	}
	clock.Advance(time.Second + time.Millisecond)
	res = mustClean(t, l, clock)
	if !res.Cleaned || res.EndOffset != 4 {
		t.Fatalf("second pass: %+v", res)
	}
	if got := fmt.Sprint(mustReadRecords(t, l)); got != `[3:a="4" 4:b="1"]` {
		t.Fatalf("after the lag: %s", got)
	}
	// The emptied first segment has no timestamp but a fresh file time; it
	// is clean, so it does not hold back the dirty segments after it.
	if l.mu.segments[0].size != 0 {
		t.Fatal("first segment not emptied")
	}
	appendRaw(t, l, 0, keyed(t, put("a", "5", old)))
	l.Roll()
	if !l.NeedsClean(clock.Now()) {
		t.Fatal("old dirty segment not cleanable")
	}
}

// TestCleanDirtyRatio: no pass while dirty bytes are below
// min.cleanable.dirty.ratio of the cleanable bytes.
func TestCleanDirtyRatio(t *testing.T) {
	cfg := compactConfig()
	cfg.MinCleanableDirtyRatio = 0.5
	clock := newFakeClock()
	l, _ := newTestLog(t, cfg, clock)
	value := string(bytes.Repeat([]byte("v"), 500))
	var distinct []testRecord
	for i := range 20 {
		distinct = append(distinct, put(fmt.Sprintf("k%02d", i), value, 1))
	}
	appendRaw(t, l, 0, keyed(t, distinct...))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("x", "1", 1)))
	if res := mustClean(t, l, clock); !res.Cleaned || res.DirtyRatio != 1 {
		t.Fatalf("first pass: %+v", res)
	}
	cleanBytes := l.mu.segments[0].size

	var dirtyBytes int64
	for i := 0; ; i++ {
		appendRaw(t, l, 0, keyed(t, put(fmt.Sprintf("k%02d", i), value, 2)))
		l.Roll()
		dirtyBytes = l.Size() - cleanBytes - l.mu.segments[len(l.mu.segments)-1].size
		ratio := float64(dirtyBytes) / float64(cleanBytes+dirtyBytes)
		due := l.NeedsClean(clock.Now())
		if due != (ratio >= cfg.MinCleanableDirtyRatio) {
			t.Fatalf("ratio %.3f: due=%v", ratio, due)
		}
		if !due {
			continue
		}
		res := mustClean(t, l, clock)
		if !res.Cleaned || res.DirtyRatio < 0.5 || res.DirtyRatio != ratio {
			t.Fatalf("pass at ratio %.3f: %+v", ratio, res)
		}
		if i < 5 {
			t.Fatalf("cleaned after only %d dirty segments", i+1)
		}
		break
	}
}

// TestCleanMaxCompactionLag: dirty data older than max.compaction.lag.ms
// is cleaned whatever the dirty ratio, and the active segment rolls once
// it is that old, so its records become cleanable.
func TestCleanMaxCompactionLag(t *testing.T) {
	cfg := compactConfig()
	cfg.MinCleanableDirtyRatio = 0.99
	cfg.MaxCompactionLagMs = 10_000
	clock := newFakeClock()
	l, _ := newTestLog(t, cfg, clock)
	var distinct []testRecord
	for i := range 50 {
		distinct = append(distinct, put(fmt.Sprintf("k%02d", i), "value", clock.Millis()))
	}
	appendRaw(t, l, 0, keyed(t, distinct...))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("x", "1", clock.Millis())))
	mustClean(t, l, clock)

	appendRaw(t, l, 0, keyed(t, put("k00", "new", clock.Millis()), put("k01", "new", clock.Millis())))
	l.Roll()
	if l.NeedsClean(clock.Now()) {
		t.Fatal("clean due at a low dirty ratio")
	}
	clock.Advance(10*time.Second - time.Millisecond)
	if l.NeedsClean(clock.Now()) {
		t.Fatal("clean due before max.compaction.lag.ms")
	}
	clock.Advance(time.Millisecond)
	res := mustClean(t, l, clock)
	if !res.Cleaned || res.Reason != "max compaction lag" || res.DirtyRatio >= cfg.MinCleanableDirtyRatio || res.RecordsRemoved != 2 {
		t.Fatalf("pass: %+v", res)
	}

	appendRaw(t, l, 0, keyed(t, put("k02", "new", clock.Millis())))
	if err := l.MaybeRoll(); err != nil || l.NumSegments() != 3 {
		t.Fatalf("rolled early: %v, %d segments", err, l.NumSegments())
	}
	clock.Advance(10 * time.Second)
	if err := l.MaybeRoll(); err != nil || l.NumSegments() != 4 {
		t.Fatalf("no roll at max.compaction.lag.ms (segment.ms is a week): %v, %d segments", err, l.NumSegments())
	}
}

// TestCleanRewritesBatches: a batch some of whose records go is
// re-encoded with its own codec, base offset, offset range, producer
// id/epoch/sequence and leader epoch; records keep their offsets,
// timestamps and headers. Batches that keep every record, control and
// transactional batches are copied byte for byte. Keyless records go.
func TestCleanRewritesBatches(t *testing.T) {
	codecs := []struct {
		name   string
		codec  int8
		xerial bool
	}{{"none", 0, false}, {"gzip", 1, false}, {"snappy", 2, false}, {"snappy-xerial", 2, true}, {"lz4", 3, false}, {"zstd", 4, false}}
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			cfg := compactConfig()
			clock := newFakeClock()
			l, _ := newTestLog(t, cfg, clock)
			headers := []RecordHeader{{Key: "h", Value: []byte("hv")}, {Key: "n", Value: nil}}
			mixed := makeBatch(t, batchSpec{codec: c.codec, xerialSnappy: c.xerial, producerID: 7, records: []testRecord{
				put("a", "a1", 100), {key: []byte("b"), value: []byte("b1"), timestamp: 90, headers: headers}, {value: []byte("keyless"), timestamp: 95}, put("c", "", 120),
			}})
			appendRaw(t, l, 3, setProducer(mixed, 2, 40))
			whole := makeBatch(t, batchSpec{codec: c.codec, xerialSnappy: c.xerial, records: []testRecord{put("x", "x1", 130), put("y", "y1", 131)}})
			appendRaw(t, l, 3, whole)
			control := makeBatch(t, batchSpec{producerID: 9, attributes: attrControl | attrTransactional, records: []testRecord{put("\x00\x00\x00\x01", "\x00\x00\x00\x00\x00\x00", 132)}})
			txn := makeBatch(t, batchSpec{producerID: 9, attributes: attrTransactional, records: []testRecord{put("x", "txn", 133)}})
			appendRaw(t, l, 4, control, txn)
			appendRaw(t, l, 4, keyed(t, put("a", "a2", 140)))
			l.Roll()
			appendRaw(t, l, 4, keyed(t, put("z", "z1", 150)))
			before := mustReadBatches(t, l)

			res := mustClean(t, l, clock)
			if !res.Cleaned || res.RecordsRemoved != 2 || res.BatchesRewritten != 1 || res.BatchesDropped != 0 {
				t.Fatalf("result %+v", res)
			}
			after := mustReadBatches(t, l)
			if len(after) != len(before) {
				t.Fatalf("%d batches, want %d", len(after), len(before))
			}
			got, want := after[0], before[0]
			h, wh := got.Header, want.Header
			if h.BaseOffset != 0 || h.LastOffsetDelta != 3 || h.NumRecords != 2 || h.Compression() != c.codec ||
				h.ProducerID != 7 || h.ProducerEpoch != 2 || h.BaseSequence != 40 || h.PartitionLeaderEpoch != 3 ||
				h.FirstTimestamp != 90 || h.MaxTimestamp != 120 || h.Attributes != wh.Attributes {
				t.Fatalf("rewritten header %+v, was %+v", h, wh)
			}
			if s := fmt.Sprint(got.Records); s != `[1:b="b1" 3:c=""]` {
				t.Fatalf("rewritten records %s", s)
			}
			records, err := DecodeRecords(got.Raw)
			if err != nil || !slices.EqualFunc(records[0].Headers, headers, func(a, b RecordHeader) bool {
				return a.Key == b.Key && bytes.Equal(a.Value, b.Value) && (a.Value == nil) == (b.Value == nil)
			}) || records[0].Timestamp != 90 || records[1].Timestamp != 120 {
				t.Fatalf("rewritten records %+v, %v", records, err)
			}
			for i := 1; i < len(before); i++ {
				if !bytes.Equal(after[i].Raw, before[i].Raw) {
					t.Fatalf("batch %d (offset %d) changed", i, before[i].Header.BaseOffset)
				}
			}
		})
	}
}

// TestCleanKeepsLogStartOffset: a first segment whose records are all
// superseded stays as an empty segment, so the log start offset does not
// move, also after a restart.
func TestCleanKeepsLogStartOffset(t *testing.T) {
	cfg := compactConfig()
	cfg.SegmentBytes = 100 // one batch per segment, none merged
	clock := newFakeClock()
	l, dir := newTestLog(t, cfg, clock)
	appendRaw(t, l, 0, keyed(t, put("a", "1", 1), put("b", "1", 1)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("c", "1", 1)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("a", "2", 1), put("b", "2", 1)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("d", "1", 1)))

	res := mustClean(t, l, clock)
	if !res.Cleaned || res.SegmentsBefore != 3 {
		t.Fatalf("result %+v", res)
	}
	check := func(l *Log) {
		t.Helper()
		if l.LogStartOffset() != 0 || l.LogEndOffset() != 6 || l.mu.segments[0].baseOffset != 0 {
			t.Fatalf("log [%d, %d), first segment %d", l.LogStartOffset(), l.LogEndOffset(), l.mu.segments[0].baseOffset)
		}
		if got := fmt.Sprint(mustReadRecords(t, l)); got != `[2:c="1" 3:a="2" 4:b="2" 5:d="1"]` {
			t.Fatalf("records %s", got)
		}
		// A fetch from the log start skips the gap.
		chunk, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := chunk.ReadAll()
		if h := completeBatches(t, data); len(h) == 0 || h[0].BaseOffset != 2 {
			t.Fatalf("Read(0) returned %+v", h)
		}
	}
	check(l)
	l.Close()
	l2 := openLog(t, dir, cfg, clock)
	defer l2.Close()
	check(l2)
	if s := l2.RecoveryStats(); s.SegmentsRemoved != 0 {
		t.Fatalf("recovery removed segments: %+v", s)
	}
	// Truncating into the gap ends the log at or before the offset, and
	// what follows is dirty again.
	if err := l2.TruncateTo(1); err != nil || l2.LogEndOffset() != 0 {
		t.Fatalf("truncate: %v, end %d", err, l2.LogEndOffset())
	}
	if l2.cleaner.firstDirtyOffset != 0 {
		t.Fatalf("first dirty offset %d after truncation", l2.cleaner.firstDirtyOffset)
	}
}

// TestCleanPolicyAndRetention: a compact-only log never deletes by
// retention.ms or retention.bytes (DeleteRecords still works); compact,delete
// does both; a delete-only log is never cleaned.
func TestCleanPolicyAndRetention(t *testing.T) {
	for _, policy := range []struct {
		compact, delete bool
	}{{true, false}, {true, true}, {false, true}} {
		t.Run(fmt.Sprintf("compact=%v,delete=%v", policy.compact, policy.delete), func(t *testing.T) {
			cfg := compactConfig()
			cfg.Compact, cfg.Delete = policy.compact, policy.delete
			cfg.RetentionMs, cfg.RetentionBytes = 1000, 1
			clock := newFakeClock()
			l, _ := newTestLog(t, cfg, clock)
			for i := range 4 {
				appendRaw(t, l, 0, keyed(t, put(fmt.Sprint(i), "v", clock.Millis())))
				l.Roll()
			}
			clock.Advance(time.Hour)
			if due := l.NeedsClean(clock.Now()); due != policy.compact {
				t.Fatalf("NeedsClean = %v", due)
			}
			n, err := l.ApplyRetention()
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 4, false: 0}[policy.delete]; n != want {
				t.Fatalf("retention deleted %d segments, want %d", n, want)
			}
			if !policy.delete {
				if err := l.DeleteRecordsBefore(2); err != nil || l.LogStartOffset() != 2 || l.NumSegments() != 3 {
					t.Fatalf("DeleteRecordsBefore: %v, start %d, %d segments", err, l.LogStartOffset(), l.NumSegments())
				}
			}
		})
	}
}

// TestCleanAbortsWhenSegmentsChange: retention removing a segment while a
// pass runs makes the pass throw its output away.
func TestCleanAbortsWhenSegmentsChange(t *testing.T) {
	cfg := compactConfig()
	clock := newFakeClock()
	l, dir := newTestLog(t, cfg, clock)
	for i := range 4 {
		appendRaw(t, l, 0, keyed(t, put("a", fmt.Sprint(i), 1)))
		l.Roll()
	}
	l.cleanHook = func(step cleanStep) error {
		if step == stepCleanedWritten {
			return l.DeleteRecordsBefore(1)
		}
		return nil
	}
	res, err := l.Clean(clock.Now())
	if err != nil || !res.Aborted || res.Cleaned {
		t.Fatalf("Clean: %+v, %v", res, err)
	}
	if files := cleanerFiles(t, dir); len(files) != 0 {
		t.Fatalf("left %v", files)
	}
	l.cleanHook = nil
	if got := fmt.Sprint(mustReadRecords(t, l)); got != `[1:a="1" 2:a="2" 3:a="3"]` {
		t.Fatalf("records %s", got)
	}
	if res := mustClean(t, l, clock); !res.Cleaned || fmt.Sprint(mustReadRecords(t, l)) != `[3:a="3"]` {
		t.Fatalf("retry: %+v, %v", res, mustReadRecords(t, l))
	}
}

// TestCleanGroupsSegments: small segments are merged while the result
// stays within segment.bytes; the last cleaned segment stays alone.
func TestCleanGroupsSegments(t *testing.T) {
	cfg := compactConfig()
	cfg.SegmentBytes = 4096
	clock := newFakeClock()
	l, _ := newTestLog(t, cfg, clock)
	value := string(bytes.Repeat([]byte("v"), 200))
	for i := range 30 {
		appendRaw(t, l, 0, keyed(t, put(fmt.Sprint(i), value, 1)))
		l.Roll()
	}
	before := mustReadRecords(t, l)
	res := mustClean(t, l, clock)
	if !res.Cleaned || res.SegmentsBefore != 30 || res.SegmentsAfter >= 15 {
		t.Fatalf("result %+v", res)
	}
	segments := l.mu.segments
	for _, s := range segments[:len(segments)-1] {
		if s.size > cfg.SegmentBytes {
			t.Fatalf("segment %d has %d bytes", s.baseOffset, s.size)
		}
	}
	if last := segments[len(segments)-2]; last.baseOffset != 29 {
		t.Fatalf("last cleaned segment starts at %d", last.baseOffset)
	}
	if after := mustReadRecords(t, l); !slices.Equal(after, before) {
		t.Fatalf("records changed:\n%v\n%v", before, after)
	}
}

// hasNullKey is CheckRecords with a compacted topic's rule alone.
func hasNullKey(records []byte) (bool, error) {
	v, err := CheckRecords(records, RecordRules{RequireKey: true, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64})
	return len(v) > 0, err
}

func TestBatchHasNullKey(t *testing.T) {
	for codec := int8(0); codec <= 4; codec++ {
		keyedBatch := makeBatch(t, batchSpec{codec: codec, records: []testRecord{put("a", "1", 1), put("", "2", 1), del("b", 1)}})
		keyless := makeBatch(t, batchSpec{codec: codec, records: []testRecord{put("a", "1", 1), {value: []byte("x")}}})
		for _, tc := range []struct {
			name  string
			batch []byte
			want  bool
		}{{"keyed", keyedBatch, false}, {"keyless", keyless, true}} {
			got, err := hasNullKey(tc.batch)
			if err != nil || got != tc.want {
				t.Fatalf("codec %d %s: %v, %v", codec, tc.name, got, err)
			}
		}
		both := append(append([]byte(nil), keyedBatch...), keyless...)
		if got, err := hasNullKey(both); err != nil || !got {
			t.Fatalf("codec %d: two batches: null key = %v, %v", codec, got, err)
		}
	}
	control := makeBatch(t, batchSpec{attributes: attrControl, records: []testRecord{{value: []byte("x")}}})
	if got, err := hasNullKey(control); err != nil || got {
		t.Fatalf("control batch: %v, %v", got, err)
	}
	broken := keyed(t, put("a", "1", 1))
	broken[BatchHeaderSize] = 0x7f // record length past the end
	if _, err := hasNullKey(broken); err == nil {
		t.Fatal("no error for a broken record")
	}
}

// TestCleanKeepsLastBatchAtLogEnd: when the cleaned section reaches the
// log end offset (the active segment is empty) and its last batch loses
// every record, the batch stays with no records, so a reader from the log
// start still reaches the log end offset; once more records follow it,
// the next pass drops it.
func TestCleanKeepsLastBatchAtLogEnd(t *testing.T) {
	cfg := compactConfig()
	cfg.DeleteRetentionMs = 1000
	cfg.MinCleanableDirtyRatio = 0.1
	clock := newFakeClock()
	l, dir := newTestLog(t, cfg, clock)
	appendRaw(t, l, 0, keyed(t, put("a", "1", 1), put("b", "1", 1)))
	appendRaw(t, l, 0, setProducer(makeBatch(t, batchSpec{codec: 4, producerID: 5, records: []testRecord{del("a", 2)}}), 1, 7))
	l.Roll()
	mustClean(t, l, clock)
	clock.Advance(time.Second)
	res := mustClean(t, l, clock)
	if !res.Cleaned || res.TombstonesRemoved != 1 {
		t.Fatalf("result %+v", res)
	}
	batches := mustReadBatches(t, l)
	if len(batches) != 2 || fmt.Sprint(batches[0].Records) != `[1:b="1"]` {
		t.Fatalf("batches %+v", batches)
	}
	h := batches[1].Header
	if h.NumRecords != 0 || h.BaseOffset != 2 || h.LastOffset() != 2 || h.ProducerID != 5 || h.ProducerEpoch != 1 || h.BaseSequence != 7 || h.Compression() != 0 {
		t.Fatalf("kept empty batch %+v", h)
	}
	l.Close()
	l = openLog(t, dir, cfg, clock)
	defer l.Close()
	if l.LogEndOffset() != 3 || len(mustReadBatches(t, l)) != 2 {
		t.Fatalf("reopened: end %d", l.LogEndOffset())
	}

	appendRaw(t, l, 0, keyed(t, put("c", "1", 3)))
	l.Roll()
	appendRaw(t, l, 0, keyed(t, put("d", "1", 4)))
	if res := mustClean(t, l, clock); !res.Cleaned || res.BatchesDropped != 1 {
		t.Fatalf("pass after more records: %+v", res)
	}
	if got := fmt.Sprint(mustReadRecords(t, l)); got != `[1:b="1" 3:c="1" 4:d="1"]` || len(mustReadBatches(t, l)) != 3 {
		t.Fatalf("records %s", got)
	}
}

// TestCleanOffsetMapBudget: when the dirty section has more keys than the
// map may hold, a pass cleans up to the segment where the budget ran out
// and the next pass goes on from there.
func TestCleanOffsetMapBudget(t *testing.T) {
	cfg := compactConfig()
	cfg.MinCleanableDirtyRatio = 0.1
	clock := newFakeClock()
	l, _ := newTestLog(t, cfg, clock)
	for i := range 3 {
		appendRaw(t, l, 0, keyed(t, put("a", fmt.Sprint(i), 1), put(fmt.Sprint("only", i), "x", 1)))
		l.Roll()
	}
	l.offsetMapBudget = 1 // any key exceeds it: one segment per pass
	for pass, want := range []string{
		`[0:a="0" 1:only0="x" 2:a="1" 3:only1="x" 4:a="2" 5:only2="x"]`, // the map knows segment 0 only
		`[1:only0="x" 2:a="1" 3:only1="x" 4:a="2" 5:only2="x"]`,
		`[1:only0="x" 3:only1="x" 4:a="2" 5:only2="x"]`,
	} {
		res := mustClean(t, l, clock)
		if !res.Cleaned || res.EndOffset != int64(2*(pass+1)) {
			t.Fatalf("pass %d: %+v", pass, res)
		}
		if got := fmt.Sprint(mustReadRecords(t, l)); got != want {
			t.Fatalf("pass %d: %s", pass, got)
		}
	}
}
