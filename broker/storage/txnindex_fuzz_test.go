package storage

import (
	"errors"
	"slices"
	"testing"
)

func FuzzDecodeTxnIndex(f *testing.F) {
	valid := EncodeTxnIndex([]AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 4, LastStableOffset: 5}, {ProducerID: 2, FirstOffset: 3, LastOffset: 9, LastStableOffset: 10}})
	f.Add(valid)
	f.Add(valid[:40])
	f.Add([]byte{})
	f.Add(make([]byte, txnIndexEntrySize))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := DecodeTxnIndex(b)
		if err != nil {
			if !errors.Is(err, ErrCorruptRemoteData) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if got := EncodeTxnIndex(entries); !slices.Equal(got, b) && len(b) > 0 {
			t.Fatalf("re-encoding differs")
		}
	})
}

func FuzzControlRecordType(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add(EncodeControlBatch(1, 0, true, 5, 10))
	f.Add(EncodeControlBatch(1, 0, false, 5, 10))
	f.Add(kmsgControlBatch(0))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, ok, err := ControlRecordType(b)
		if err != nil {
			if ok || (!errors.Is(err, ErrCorruptBatch) && !errors.Is(err, ErrUnsupportedMagic)) {
				t.Fatalf("ok %v with error %v", ok, err)
			}
			return
		}
		if ok && !decodeHeader(b).IsControl() {
			t.Fatal("ok for a batch that is not a control batch")
		}
	})
}
