package storage

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestDecodeRecordsAllCodecs(t *testing.T) {
	records := []testRecord{
		{key: []byte("k0"), value: []byte("v0"), timestamp: 1000, headers: []RecordHeader{{Key: "h", Value: []byte("x")}, {Key: "n", Value: nil}}},
		{key: nil, value: bytes.Repeat([]byte("z"), 1000), timestamp: 990},
		{key: []byte{}, value: nil, timestamp: 1500},
	}
	cases := []struct {
		name   string
		codec  int8
		xerial bool
	}{{"none", 0, false}, {"gzip", 1, false}, {"snappy", 2, false}, {"snappy-xerial", 2, true}, {"lz4", 3, false}, {"zstd", 4, false}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := makeBatch(t, batchSpec{codec: c.codec, xerialSnappy: c.xerial, records: records})
			stampBatch(b, 500, 0, 0)
			got, err := DecodeRecords(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(records) {
				t.Fatalf("%d records, want %d", len(got), len(records))
			}
			for i, r := range got {
				w := records[i]
				if r.Offset != int64(500+i) || r.Timestamp != w.timestamp || !bytesEqualNil(r.Key, w.key) || !bytesEqualNil(r.Value, w.value) {
					t.Fatalf("record %d: got %+v", i, r)
				}
				if fmt.Sprint(r.Headers) != fmt.Sprint(w.headers) {
					t.Fatalf("record %d headers %v, want %v", i, r.Headers, w.headers)
				}
			}
			if got[0].Headers[1].Value != nil {
				t.Fatal("null header value decoded as non-nil")
			}
		})
	}
}

// bytesEqualNil compares contents and nil-ness (null vs empty).
func bytesEqualNil(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestDecodeRecordsLogAppendTime(t *testing.T) {
	b := makeBatch(t, batchSpec{logAppendTime: 777, records: []testRecord{{value: []byte("a"), timestamp: 1}, {value: []byte("b"), timestamp: 2}}})
	got, err := DecodeRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Timestamp != 777 {
			t.Fatalf("timestamp %d, want the log append time", r.Timestamp)
		}
	}
}

func TestDecodeRecordsErrors(t *testing.T) {
	good := valueBatch(t, 2, 5, 1)
	tests := []struct {
		name string
		b    []byte
	}{
		{"truncated", good[:len(good)-1]},
		{"count too high", withUint32(good, offsetNumRecords, 3)},
		{"count too low", withUint32(good, offsetNumRecords, 1)},
		{"bad gzip", withByte(withByte(good, offsetAttributes+1, 1), BatchHeaderSize, 0)},
		{"bad snappy", withByte(good, offsetAttributes+1, 2)},
		{"bad lz4", withByte(good, offsetAttributes+1, 3)},
		{"bad zstd", withByte(good, offsetAttributes+1, 4)},
		{"unknown codec", withByte(good, offsetAttributes+1, 6)},
		{"short xerial", append(withByte(good[:BatchHeaderSize], offsetAttributes+1, 2), xerialMagic...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			if len(b) >= BatchHeaderSize {
				b = withUint32(b, offsetLength, uint32(len(b)-batchLogOverhead))
			}
			if _, err := DecodeRecords(b); !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("got %v, want ErrCorruptBatch", err)
			}
		})
	}
}
