package broker

import (
	"reflect"
	"testing"

	"github.com/strata-streaming/strata/broker/share"
)

func TestShareStateRecordRoundTrip(t *testing.T) {
	key := sharePartitionKey{group: "workers", topic: [16]byte{1, 2, 3}, partition: 7}
	for _, snap := range []*share.Snapshot{
		{Start: 0},
		{Start: 42, Batches: []share.StateBatch{{First: 42, Last: 42, State: share.Available, DeliveryCount: 1}, {First: 43, Last: 50, State: share.Acknowledged, DeliveryCount: 2}, {First: 51, Last: 51, State: share.Archived, DeliveryCount: 5}}},
		nil, // tombstone
	} {
		k, v := encodeShareStateRecord(key, snap, 7)
		gotKey, got, epoch, err := decodeShareStateRecord(k, v)
		if err != nil || gotKey != key || (snap != nil && epoch != 7) {
			t.Fatalf("decode %+v: key %+v err %v", snap, gotKey, err)
		}
		if snap == nil {
			if got != nil {
				t.Fatalf("tombstone decoded as %+v", got)
			}
			continue
		}
		if !reflect.DeepEqual(got, snap) && !(len(snap.Batches) == 0 && got.Start == snap.Start && len(got.Batches) == 0) {
			t.Fatalf("round trip: %+v, want %+v", got, snap)
		}
	}
	// Malformed records are errors, never panics.
	k, v := encodeShareStateRecord(key, &share.Snapshot{Start: 1, Batches: []share.StateBatch{{First: 1, Last: 2, State: share.Available, DeliveryCount: 1}}}, 3)
	for _, c := range []struct{ k, v []byte }{
		{nil, v}, {k[:3], v}, {k[:len(k)-1], v}, {append([]byte{0, 1}, k[2:]...), v},
		{k, v[:5]}, {k, v[:len(v)-1]}, {k, append(v[:14:14], 0xff, 0xff, 0xff, 0xff)}, {k, v[:3]}, {k, append([]byte{0, 2}, v[2:]...)},
	} {
		if _, _, _, err := decodeShareStateRecord(c.k, c.v); err == nil {
			t.Errorf("malformed record %x / %x decoded", c.k, c.v)
		}
	}
	// A version 0 value (no leader epoch) still decodes, with epoch 0.
	v0 := append([]byte{0, 0}, v[6:]...)
	if _, got, epoch, err := decodeShareStateRecord(k, v0); err != nil || epoch != 0 || got.Start != 1 || len(got.Batches) != 1 {
		t.Fatalf("version 0 value: %+v epoch %d err %v", got, epoch, err)
	}
}

func FuzzDecodeShareStateRecord(f *testing.F) {
	k, v := encodeShareStateRecord(sharePartitionKey{group: "g", partition: 1}, &share.Snapshot{Start: 3, Batches: []share.StateBatch{{First: 3, Last: 4, State: share.Archived, DeliveryCount: 2}}}, 1)
	f.Add(k, v)
	f.Fuzz(func(t *testing.T, k, v []byte) {
		_, _, _, _ = decodeShareStateRecord(k, v)
	})
}
