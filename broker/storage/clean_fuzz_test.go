package storage

import "testing"

// FuzzBatchHasNullKey: the null-key check never panics, and agrees with
// DecodeRecords on every batch DecodeRecords accepts.
func FuzzBatchHasNullKey(f *testing.F) {
	for codec := int8(0); codec <= 4; codec++ {
		f.Add(makeBatch(f, batchSpec{codec: codec, records: []testRecord{put("a", "1", 1), del("b", 2)}}))
		f.Add(makeBatch(f, batchSpec{codec: codec, records: []testRecord{put("a", "1", 1), {value: []byte("x")}}}))
	}
	f.Fuzz(func(t *testing.T, batch []byte) {
		if h, err := ParseBatchHeader(batch); err == nil && h.Size() <= len(batch) {
			batch = batch[:h.Size()] // the first batch, as DecodeRecords reads
		}
		null, err := hasNullKey(batch)
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
			t.Fatalf("null key = %v, DecodeRecords says %v", null, want)
		}
	})
}

// FuzzCheckRecords: never panics, and on every batch DecodeRecords accepts
// names exactly the records without a key and those outside the timestamp
// bounds.
func FuzzCheckRecords(f *testing.F) {
	for codec := int8(0); codec <= 4; codec++ {
		f.Add(makeBatch(f, batchSpec{codec: codec, records: []testRecord{put("a", "1", 1), del("b", 2), {value: []byte("x")}}}), int64(0), int64(1))
	}
	f.Fuzz(func(t *testing.T, batch []byte, minTs, maxTs int64) {
		rules := RecordRules{RequireKey: true, MinTimestamp: minTs, MaxTimestamp: maxTs}
		got, err := CheckRecords(batch, rules)
		h, herr := ParseBatchHeader(batch)
		if herr != nil || h.Size() != len(batch) {
			return
		}
		records, derr := DecodeRecords(batch)
		if err != nil || derr != nil || h.TimestampType() == 1 {
			return
		}
		var want []int32
		for i, r := range records {
			if !h.IsControl() && (r.Key == nil || (r.Timestamp != NoTimestamp && (r.Timestamp < minTs || r.Timestamp > maxTs))) {
				want = append(want, int32(i))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("CheckRecords named %d records, DecodeRecords says %v", len(got), want)
		}
		for i := range got {
			if got[i].Index != want[i] {
				t.Fatalf("CheckRecords named record %d, want %d", got[i].Index, want[i])
			}
		}
	})
}
