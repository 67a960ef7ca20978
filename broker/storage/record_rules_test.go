package storage

import (
	"math"
	"testing"
)

func TestCheckRecords(t *testing.T) {
	keyless := func(ts int64) testRecord { return testRecord{value: []byte("v"), timestamp: ts} }
	unbounded := RecordRules{MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64}
	tests := []struct {
		name    string
		records []testRecord
		rules   RecordRules
		want    []RecordViolation // Message not compared
	}{
		{"no rules", []testRecord{keyless(1)}, unbounded, nil},
		{"all keyed", []testRecord{put("a", "1", 1), put("b", "2", 2)},
			RecordRules{RequireKey: true, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64}, nil},
		{"keyless in the middle and at the end", []testRecord{put("a", "1", 1), keyless(2), put("c", "3", 3), keyless(4)},
			RecordRules{RequireKey: true, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64},
			[]RecordViolation{{Index: 1}, {Index: 3}}},
		{"too new", []testRecord{put("a", "1", 100), put("b", "2", 5000), put("c", "3", 200)},
			RecordRules{MinTimestamp: math.MinInt64, MaxTimestamp: 1000},
			[]RecordViolation{{Index: 1, Timestamp: true}}},
		{"too old", []testRecord{put("a", "1", 100), put("b", "2", 5000)},
			RecordRules{MinTimestamp: 1000, MaxTimestamp: math.MaxInt64},
			[]RecordViolation{{Index: 0, Timestamp: true}}},
		{"timestamp wins over the key", []testRecord{keyless(5000), keyless(1)},
			RecordRules{RequireKey: true, MinTimestamp: 0, MaxTimestamp: 1000},
			[]RecordViolation{{Index: 0, Timestamp: true}, {Index: 1}}},
		{"no timestamp is never out of bounds", []testRecord{put("a", "1", NoTimestamp), put("b", "2", 5000)},
			RecordRules{MinTimestamp: 1000, MaxTimestamp: 2000},
			[]RecordViolation{{Index: 1, Timestamp: true}}},
		{"within bounds", []testRecord{put("a", "1", 100), put("b", "2", 900)},
			RecordRules{MinTimestamp: 100, MaxTimestamp: 900}, nil},
	}
	for _, tc := range tests {
		for codec := int8(0); codec <= 4; codec++ {
			batch := makeBatch(t, batchSpec{codec: codec, records: tc.records})
			// Twice back to back: indexes count across batches.
			twice := append(append([]byte{}, batch...), batch...)
			got, err := CheckRecords(twice, tc.rules)
			if err != nil {
				t.Fatalf("%s, codec %d: %v", tc.name, codec, err)
			}
			var want []RecordViolation
			for _, w := range tc.want {
				want = append(want, w)
			}
			for _, w := range tc.want {
				w.Index += int32(len(tc.records))
				want = append(want, w)
			}
			if len(got) != len(want) {
				t.Fatalf("%s, codec %d: got %+v, want %+v", tc.name, codec, got, want)
			}
			for i := range got {
				if got[i].Index != want[i].Index || got[i].Timestamp != want[i].Timestamp || got[i].Message == "" {
					t.Fatalf("%s, codec %d: violation %d is %+v, want %+v", tc.name, codec, i, got[i], want[i])
				}
			}
		}
	}
	// A corrupt compressed body is an error, not a pass.
	batch := makeBatch(t, batchSpec{codec: 1, records: []testRecord{put("a", "1", 1)}})
	batch[len(batch)-3] ^= 0xff
	if _, err := CheckRecords(batch, RecordRules{RequireKey: true, MinTimestamp: math.MinInt64, MaxTimestamp: math.MaxInt64}); err == nil {
		t.Fatal("a corrupt gzip body passed the check")
	}
}
