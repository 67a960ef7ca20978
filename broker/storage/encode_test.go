package storage

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEncodeKVBatchDecodedByKmsg: the coordinators' batches decode with
// franz-go's kmsg decoders to what was encoded, with a null key or value kept null.
func TestEncodeKVBatchDecodedByKmsg(t *testing.T) {
	keys := [][]byte{[]byte("k0"), nil, bytes.Repeat([]byte("k"), 300)}
	values := [][]byte{[]byte("v0"), []byte("v1"), nil}
	for _, tc := range []struct {
		name          string
		producerID    int64
		epoch         int16
		transactional bool
	}{
		{"plain", -1, 7, false},
		{"transactional", 42, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := EncodeKVBatch(keys, values, tc.producerID, tc.epoch, tc.transactional, 1_700_000_000_000)
			headers, err := ValidateBatches(raw)
			if err != nil || len(headers) != 1 {
				t.Fatalf("ValidateBatches: %v", err)
			}
			var b kmsg.RecordBatch
			if err := b.ReadFrom(raw); err != nil {
				t.Fatal(err)
			}
			wantEpoch := tc.epoch
			if tc.producerID < 0 {
				wantEpoch = -1
			}
			if b.Magic != 2 || b.NumRecords != 3 || b.LastOffsetDelta != 2 || b.ProducerID != tc.producerID || b.ProducerEpoch != wantEpoch ||
				b.FirstSequence != -1 || b.FirstTimestamp != 1_700_000_000_000 || (b.Attributes&0x10 != 0) != tc.transactional || b.Attributes&0x27 != 0 {
				t.Fatalf("batch header %+v", b)
			}
			rest := b.Records
			for i := range keys {
				var r kmsg.Record
				length, n := binary.Varint(rest)
				if n <= 0 {
					t.Fatalf("record %d: bad length", i)
				}
				if err := r.ReadFrom(rest[:n+int(length)]); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				rest = rest[n+int(length):]
				if r.OffsetDelta != int32(i) || !bytes.Equal(r.Key, keys[i]) || (r.Key == nil) != (keys[i] == nil) ||
					!bytes.Equal(r.Value, values[i]) || (r.Value == nil) != (values[i] == nil) {
					t.Fatalf("record %d = %+v", i, r)
				}
			}
			if len(rest) != 0 {
				t.Fatalf("%d bytes after the records", len(rest))
			}
		})
	}
}
