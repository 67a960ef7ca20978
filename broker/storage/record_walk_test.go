package storage

import (
	"bytes"
	"errors"
	"testing"
)

// TestForEachRecord: every record's key and value, null and empty told
// apart, indexes counted across batches, in every codec; fn's error stops
// the walk.
func TestForEachRecord(t *testing.T) {
	records := []testRecord{
		{key: []byte("k0"), value: []byte("v0"), timestamp: 1},
		{key: nil, value: []byte("v1"), timestamp: 2},
		{key: []byte("k2"), value: nil, timestamp: 3},
		{key: []byte{}, value: []byte{}, timestamp: 4},
	}
	for codec := int8(0); codec <= 4; codec++ {
		batch := makeBatch(t, batchSpec{codec: codec, records: records})
		twice := append(append([]byte{}, batch...), batch...)
		var seen int32
		err := ForEachRecord(twice, 0, func(index int32, key, value []byte) error {
			want := records[index%int32(len(records))]
			if index != seen || !bytes.Equal(key, want.key) || (key == nil) != (want.key == nil) ||
				!bytes.Equal(value, want.value) || (value == nil) != (want.value == nil) {
				t.Errorf("codec %d: record %d (expected %d): key %q value %q, want %q %q", codec, index, seen, key, value, want.key, want.value)
			}
			seen++
			return nil
		})
		if err != nil || seen != 8 {
			t.Fatalf("codec %d: %d records, %v", codec, seen, err)
		}
		stop := errors.New("stop")
		calls := 0
		if err := ForEachRecord(twice, 0, func(int32, []byte, []byte) error { calls++; return stop }); err != stop || calls != 1 {
			t.Fatalf("codec %d: fn's error: %v after %d calls", codec, err, calls)
		}
		if err := ForEachRecord(batch[:len(batch)-1], 0, func(int32, []byte, []byte) error { return nil }); !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("codec %d: truncated: %v", codec, err)
		}
	}
}
