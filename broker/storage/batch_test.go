package storage

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestParseBatchHeader(t *testing.T) {
	b := makeBatch(t, batchSpec{codec: 3, producerID: 42, attributes: attrTransactional, records: []testRecord{
		{value: []byte("a"), timestamp: 100}, {value: []byte("b"), timestamp: 300}, {value: []byte("c"), timestamp: 200},
	}})
	h, err := ParseBatchHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	want := BatchHeader{
		BaseOffset: 0, Length: int32(len(b) - 12), PartitionLeaderEpoch: -1, Magic: 2, CRC: h.CRC,
		Attributes: 3 | attrTransactional, LastOffsetDelta: 2, FirstTimestamp: 100, MaxTimestamp: 300,
		ProducerID: 42, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 3,
	}
	if h != want {
		t.Fatalf("header\n got %+v\nwant %+v", h, want)
	}
	if h.Size() != len(b) || h.LastOffset() != 2 || h.Compression() != 3 || !h.IsTransactional() || h.IsControl() || h.TimestampType() != 0 {
		t.Fatalf("accessors wrong: size %d last %d codec %d txn %v control %v tstype %d",
			h.Size(), h.LastOffset(), h.Compression(), h.IsTransactional(), h.IsControl(), h.TimestampType())
	}
	if got := batchCRC(b); got != h.CRC {
		t.Fatalf("crc %08x, header says %08x", got, h.CRC)
	}
}

func TestParseBatchHeaderErrors(t *testing.T) {
	good := valueBatch(t, 1, 10, 1)
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrCorruptBatch},
		{"short", good[:60], ErrCorruptBatch},
		{"magic 1", withByte(good, offsetMagic, 1), ErrUnsupportedMagic},
		{"short magic 0", withByte(good, offsetMagic, 0)[:30], ErrUnsupportedMagic},
		{"length too small", withUint32(good, offsetLength, 48), ErrCorruptBatch},
		{"negative length", withUint32(good, offsetLength, 0xffffffff), ErrCorruptBatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseBatchHeader(tt.b); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestValidateBatches(t *testing.T) {
	one := valueBatch(t, 3, 10, 1)
	two := valueBatch(t, 1, 100, 5)
	both := append(append([]byte{}, one...), two...)
	headers, err := ValidateBatches(both)
	if err != nil {
		t.Fatal(err)
	}
	if len(headers) != 2 || headers[0].NumRecords != 3 || headers[1].NumRecords != 1 {
		t.Fatalf("headers %+v", headers)
	}

	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrCorruptBatch},
		{"bad crc", withByte(one, len(one)-1, one[len(one)-1]^1), ErrCorruptBatch},
		{"flipped attribute", withByte(one, offsetAttributes+1, 1), ErrCorruptBatch},
		{"magic 1", withByte(one, offsetMagic, 1), ErrUnsupportedMagic},
		{"length past buffer", withUint32(one, offsetLength, uint32(len(one))), ErrCorruptBatch},
		{"trailing garbage", append(append([]byte{}, both...), 1, 2, 3), ErrCorruptBatch},
		{"truncated second batch", both[:len(both)-1], ErrCorruptBatch},
		{"negative last offset delta", recrc(withUint32(one, offsetLastOffsetDelta, 0xffffffff)), ErrCorruptBatch},
		{"negative record count", recrc(withUint32(one, offsetNumRecords, 0xfffffff0)), ErrCorruptBatch},
		{"unknown codec", recrc(withByte(one, offsetAttributes+1, 5)), ErrCorruptBatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ValidateBatches(tt.b); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}

	// The count of records need not match lastOffsetDelta+1 (Kafka does not require it).
	odd := recrc(withUint32(one, offsetNumRecords, 7))
	if _, err := ValidateBatches(odd); err != nil {
		t.Fatalf("record count mismatch rejected: %v", err)
	}
}

func TestStampBatchKeepsCRCValid(t *testing.T) {
	b := valueBatch(t, 2, 10, 1000)
	stampBatch(b, 12345, 7, 0)
	h, err := checkBatch(b)
	if err != nil {
		t.Fatalf("stamping offset/epoch broke the batch: %v", err)
	}
	if h.BaseOffset != 12345 || h.PartitionLeaderEpoch != 7 || h.MaxTimestamp != 1001 {
		t.Fatalf("header %+v", h)
	}
	stampBatch(b, 1, 8, 99999)
	if h, err = checkBatch(b); err != nil {
		t.Fatalf("log append time broke the batch: %v", err)
	}
	if h.MaxTimestamp != 99999 || h.TimestampType() != 1 || h.FirstTimestamp != 1000 {
		t.Fatalf("header %+v", h)
	}
}

func withByte(b []byte, at int, v byte) []byte {
	c := append([]byte{}, b...)
	c[at] = v
	return c
}

func withUint32(b []byte, at int, v uint32) []byte {
	c := append([]byte{}, b...)
	binary.BigEndian.PutUint32(c[at:], v)
	return c
}

// recrc fixes the CRC of a batch modified after encoding.
func recrc(b []byte) []byte {
	binary.BigEndian.PutUint32(b[offsetCRC:], batchCRC(b))
	return b
}
