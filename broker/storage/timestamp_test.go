package storage

import (
	"fmt"
	"testing"
)

// timestampLayout appends, for each codec, a batch of 5 records with
// out-of-order timestamps, over several segments.
func timestampLayout(t *testing.T) *Log {
	cfg := testConfig()
	cfg.SegmentBytes = 300
	cfg.IndexIntervalBytes = 0
	l, _ := newTestLog(t, cfg, nil)
	for i, codec := range []int8{0, 1, 2, 3, 4, 2} {
		base := int64(1000 * (i + 1))
		records := []testRecord{
			{value: []byte("a"), timestamp: base + 10},
			{value: []byte("b"), timestamp: base + 50},
			{value: []byte("c"), timestamp: base + 30},
			{value: []byte("d"), timestamp: base + 50}, // tie with b
			{value: make([]byte, 300), timestamp: base + 40},
		}
		appendRaw(t, l, 0, makeBatch(t, batchSpec{codec: codec, xerialSnappy: i == 5, records: records}))
	}
	return l
}

func TestOffsetForTimestamp(t *testing.T) {
	l := timestampLayout(t)
	if l.NumSegments() < 3 {
		t.Fatalf("only %d segments", l.NumSegments())
	}
	tests := []struct {
		ts         int64
		wantOffset int64
		wantTs     int64
		ok         bool
	}{
		{0, 0, 1010, true},
		{1010, 0, 1010, true},
		{1011, 1, 1050, true},
		{1031, 1, 1050, true}, // b (1050) precedes c (1030)
		{1051, 5, 2010, true},
		{3020, 11, 3050, true},
		{4050, 16, 4050, true},
		{5041, 21, 5050, true},
		{6050, 26, 6050, true},
		{6051, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.ts), func(t *testing.T) {
			o, ts, ok, err := l.OffsetForTimestamp(tt.ts)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.ok || (ok && (o != tt.wantOffset || ts != tt.wantTs)) {
				t.Fatalf("got (%d, %d, %v), want (%d, %d, %v)", o, ts, ok, tt.wantOffset, tt.wantTs, tt.ok)
			}
		})
	}
}

func TestMaxTimestamp(t *testing.T) {
	l, _ := newTestLog(t, testConfig(), nil)
	if _, _, ok, err := l.MaxTimestamp(); ok || err != nil {
		t.Fatalf("empty log: %v %v", ok, err)
	}
	l = timestampLayout(t)
	// The last batch (xerial snappy) has 6050 twice; the earliest wins.
	if o, ts, ok, err := l.MaxTimestamp(); err != nil || !ok || o != 26 || ts != 6050 {
		t.Fatalf("got (%d, %d, %v, %v)", o, ts, ok, err)
	}
	// A later, older batch changes nothing; an equal one in a later segment neither.
	appendRaw(t, l, 0, makeBatch(t, batchSpec{codec: 4, records: []testRecord{{timestamp: 10}, {timestamp: 6050}}}))
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, l, 0, makeBatch(t, batchSpec{codec: 1, records: []testRecord{{timestamp: 6050}}}))
	if o, ts, _, _ := l.MaxTimestamp(); o != 26 || ts != 6050 {
		t.Fatalf("got (%d, %d)", o, ts)
	}
	appendRaw(t, l, 0, makeBatch(t, batchSpec{codec: 3, records: []testRecord{{timestamp: 1}, {timestamp: 7000}, {timestamp: 7000}}}))
	if o, ts, _, _ := l.MaxTimestamp(); o != 34 || ts != 7000 {
		t.Fatalf("got (%d, %d)", o, ts)
	}
	// LogAppendTime: every record carries the append time; the first one is named.
	if _, err := appendWith(l, AppendOptions{LogAppendTime: 9000}, valueBatch(t, 3, 10, 1)); err != nil {
		t.Fatal(err)
	}
	if o, ts, _, _ := l.MaxTimestamp(); o != 36 || ts != 9000 {
		t.Fatalf("got (%d, %d)", o, ts)
	}
	if o, ts, ok, _ := l.OffsetForTimestamp(8000); !ok || o != 36 || ts != 9000 {
		t.Fatalf("OffsetForTimestamp with log append time: (%d, %d)", o, ts)
	}
}

func TestTimestampLookupsAfterReopen(t *testing.T) {
	l := timestampLayout(t)
	dir := l.Dir()
	l.Close()
	l2 := openLog(t, dir, l.cfg, nil)
	defer l2.Close()
	if o, ts, ok, _ := l2.MaxTimestamp(); !ok || o != 26 || ts != 6050 {
		t.Fatalf("max timestamp after reopen (%d, %d)", o, ts)
	}
	if o, _, ok, _ := l2.OffsetForTimestamp(3020); !ok || o != 11 {
		t.Fatalf("offset for timestamp after reopen %d", o)
	}
}
