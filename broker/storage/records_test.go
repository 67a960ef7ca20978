package storage

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"unsafe"
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

// DecodeRecordsInto decompresses into the arena's spare capacity when it
// fits (and says so by growing the arena), into a new buffer when it does
// not, and appends to dst.
func TestDecodeRecordsIntoArena(t *testing.T) {
	records := []testRecord{{key: []byte("k0"), value: bytes.Repeat([]byte("a"), 3000), timestamp: 1000}, {value: []byte("v1"), timestamp: 1001}}
	for _, c := range []struct {
		name  string
		codec int8
	}{{"gzip", 1}, {"snappy", 2}, {"lz4", 3}, {"zstd", 4}, {"none", 0}} {
		t.Run(c.name, func(t *testing.T) {
			b := makeBatch(t, batchSpec{codec: c.codec, records: records})
			stampBatch(b, 7, 0, 0)
			body, err := decompress(int8(c.codec), b[BatchHeaderSize:])
			if err != nil {
				t.Fatal(err)
			}
			// Exact or an upper bound where the stream says; lz4's
			// frames here do not: four times the compressed size.
			switch hint := DecodedSizeHint(b); {
			case c.codec == 0 && hint != 0:
				t.Fatalf("DecodedSizeHint %d for an uncompressed batch", hint)
			case c.codec == 3 && hint != 4*(len(b)-BatchHeaderSize):
				t.Fatalf("DecodedSizeHint %d for lz4, want the guess %d", hint, 4*(len(b)-BatchHeaderSize))
			case c.codec != 0 && c.codec != 3 && (hint < len(body) || hint > len(body)+1):
				t.Fatalf("DecodedSizeHint %d for %d bytes of records", hint, len(body))
			}
			dst := []Record{{Offset: 1}}
			arena := make([]byte, 10, 1<<20)
			got, grown, err := DecodeRecordsInto(dst, arena, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || got[0].Offset != 1 || got[1].Offset != 7 || got[2].Offset != 8 || !bytes.Equal(got[1].Value, records[0].value) || string(got[2].Value) != "v1" {
				t.Fatalf("got %d records: %+v", len(got), got)
			}
			if c.codec == 0 {
				if len(grown) != len(arena) {
					t.Fatalf("an uncompressed batch used %d bytes of the arena", len(grown)-len(arena))
				}
				return
			}
			if len(grown) <= len(arena)+3000 {
				t.Fatalf("arena grew from %d to %d bytes, want the batch's 3000+ decompressed bytes", len(arena), len(grown))
			}
			if !within(got[1].Value, grown[len(arena):]) {
				t.Fatal("the records do not alias the arena")
			}
			// An arena too small for the batch: a new buffer, the arena unchanged.
			small := make([]byte, 0, 100)
			got, grown, err = DecodeRecordsInto(nil, small, b)
			if err != nil || len(got) != 2 || !bytes.Equal(got[0].Value, records[0].value) {
				t.Fatalf("with a small arena: %v, %d records", err, len(got))
			}
			if len(grown) != 0 {
				t.Fatalf("a small arena grew to %d bytes", len(grown))
			}
		})
	}
}

// within reports whether b lies in buf's memory.
func within(b, buf []byte) bool {
	if len(b) == 0 || len(buf) == 0 {
		return false
	}
	start, end := uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&buf[0]))+uintptr(len(buf))
	p := uintptr(unsafe.Pointer(&b[0]))
	return p >= start && p+uintptr(len(b)) <= end
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
