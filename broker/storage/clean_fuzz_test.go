package storage

import "testing"

// FuzzBatchHasNullKey: never panics, and agrees with DecodeRecords on
// every batch DecodeRecords accepts.
func FuzzBatchHasNullKey(f *testing.F) {
	for codec := int8(0); codec <= 4; codec++ {
		f.Add(makeBatch(f, batchSpec{codec: codec, records: []testRecord{put("a", "1", 1), del("b", 2)}}))
		f.Add(makeBatch(f, batchSpec{codec: codec, records: []testRecord{put("a", "1", 1), {value: []byte("x")}}}))
	}
	f.Fuzz(func(t *testing.T, batch []byte) {
		null, err := BatchHasNullKey(batch)
		records, derr := DecodeRecords(batch)
		if err != nil || derr != nil {
			return
		}
		h, _ := ParseBatchHeader(batch)
		want := false
		for _, r := range records {
			want = want || (r.Key == nil && !h.IsControl())
		}
		if null != want {
			t.Fatalf("BatchHasNullKey = %v, DecodeRecords says %v", null, want)
		}
	})
}
