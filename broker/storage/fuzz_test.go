package storage

import (
	"errors"
	"testing"
)

// fuzzSeeds are valid batches of every codec plus a few broken ones.
func fuzzSeeds(f *testing.F) [][]byte {
	records := []testRecord{
		{key: []byte("k"), value: []byte("value"), timestamp: 10, headers: []RecordHeader{{Key: "h", Value: []byte("v")}}},
		{value: nil, timestamp: 12},
	}
	var seeds [][]byte
	for codec := int8(0); codec <= 4; codec++ {
		seeds = append(seeds, makeBatch(f, batchSpec{codec: codec, records: records}))
	}
	seeds = append(seeds,
		makeBatch(f, batchSpec{codec: 2, xerialSnappy: true, records: records}),
		makeBatch(f, batchSpec{logAppendTime: 99, attributes: attrControl | attrTransactional, records: records}),
		nil,
		make([]byte, BatchHeaderSize),
	)
	two := append(append([]byte{}, seeds[0]...), seeds[3]...)
	return append(seeds, two, two[:len(two)-3])
}

func FuzzValidateBatches(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		headers, err := ValidateBatches(b)
		if err != nil {
			if !errors.Is(err, ErrCorruptBatch) && !errors.Is(err, ErrUnsupportedMagic) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		total := 0
		for _, h := range headers {
			total += h.Size()
			if h.Magic != 2 || h.LastOffsetDelta < 0 || h.Length < minBatchLength {
				t.Fatalf("accepted bad header %+v", h)
			}
		}
		if total != len(b) {
			t.Fatalf("headers cover %d of %d bytes", total, len(b))
		}
	})
}

func FuzzDecodeRecords(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		records, err := DecodeRecords(b)
		if err != nil {
			return
		}
		h, _ := ParseBatchHeader(b)
		if len(records) != int(h.NumRecords) {
			t.Fatalf("%d records, header says %d", len(records), h.NumRecords)
		}
	})
}

func FuzzParseBatchHeader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseBatchHeader(b)
		if err != nil {
			return
		}
		if len(b) < BatchHeaderSize || h.Magic != 2 || h.Size() < BatchHeaderSize {
			t.Fatalf("accepted %d bytes as %+v", len(b), h)
		}
	})
}

func FuzzDecodeEpochs(f *testing.F) {
	for _, s := range []string{
		string(EncodeEpochs([]EpochEntry{{0, 0}, {3, 4711}})), "0\n0\n", "0\n1\n1 -5\n", "0\n2\n3 10\n2 20\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeEpochs(b)
		if err != nil {
			if !errors.Is(err, ErrCorruptRemoteData) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		for i, e := range entries {
			if e.Epoch < 0 || e.StartOffset < 0 || (i > 0 && (e.Epoch <= entries[i-1].Epoch || e.StartOffset < entries[i-1].StartOffset)) {
				t.Fatalf("accepted bad entries %v", entries)
			}
		}
		again, err := DecodeEpochs(EncodeEpochs(entries))
		if err != nil || len(again) != len(entries) {
			t.Fatalf("re-encoding %v: %v, %v", entries, again, err)
		}
	})
}

func FuzzOffsetIndexLookup(f *testing.F) {
	f.Add(encodeOffsetIndex([]offsetIndexEntry{{5, 100}, {9, 300}}), int64(100), int64(107))
	f.Add([]byte{1, 2, 3}, int64(0), int64(0))
	f.Add(encodeOffsetIndex([]offsetIndexEntry{{9, 100}, {5, 300}}), int64(0), int64(1<<40))
	f.Fuzz(func(t *testing.T, index []byte, base, offset int64) {
		pos, err := OffsetIndexLookup(index, base, offset)
		if err != nil {
			if !errors.Is(err, ErrCorruptRemoteData) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		entries, derr := decodeOffsetIndex(index, 1<<40)
		if derr != nil {
			t.Fatalf("lookup accepted an index decodeOffsetIndex rejects: %v", derr)
		}
		if want := lookupPosition(entries, base, offset); pos != want {
			t.Fatalf("position %d, in-memory lookup says %d", pos, want)
		}
	})
}

func FuzzTimeIndexLookup(f *testing.F) {
	f.Add(encodeTimeIndex([]timeIndexEntry{{1000, 5}, {2000, 9}}), int64(100), int64(1500))
	f.Add([]byte{1, 2, 3}, int64(0), int64(0))
	f.Add(encodeTimeIndex([]timeIndexEntry{{2000, 5}, {1000, 9}}), int64(0), int64(-1))
	f.Fuzz(func(t *testing.T, index []byte, base, ts int64) {
		offset, ok, err := TimeIndexLookup(index, base, ts)
		if err != nil {
			if !errors.Is(err, ErrCorruptRemoteData) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		entries, derr := decodeTimeIndex(index)
		if derr != nil {
			t.Fatalf("lookup accepted an index decodeTimeIndex rejects: %v", derr)
		}
		if want, wantOK := lookupTimestamp(entries, base, ts); offset != want || ok != wantOK {
			t.Fatalf("(%d, %v), in-memory lookup says (%d, %v)", offset, ok, want, wantOK)
		}
	})
}
