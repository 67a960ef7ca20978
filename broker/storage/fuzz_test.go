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
