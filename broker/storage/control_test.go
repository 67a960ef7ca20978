package storage

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestEncodeControlBatch(t *testing.T) {
	for _, commit := range []bool{false, true} {
		batch := EncodeControlBatch(42, 3, commit, 17, 1700000000000)
		headers, err := ValidateBatches(batch)
		if err != nil {
			t.Fatalf("ValidateBatches: %v", err)
		}
		h := headers[0]
		if !h.IsControl() || !h.IsTransactional() || h.ProducerID != 42 || h.ProducerEpoch != 3 ||
			h.BaseSequence != -1 || h.NumRecords != 1 || h.LastOffsetDelta != 0 || h.MaxTimestamp != 1700000000000 {
			t.Fatalf("header %+v", h)
		}
		want := ControlTypeAbort
		if commit {
			want = ControlTypeCommit
		}
		typ, ok, err := ControlRecordType(batch)
		if err != nil || !ok || typ != want {
			t.Fatalf("ControlRecordType = %d, %v, %v; want %d", typ, ok, err, want)
		}

		// As a Kafka client parses it.
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(batch); err != nil {
			t.Fatalf("kmsg.RecordBatch: %v", err)
		}
		if uint32(rb.CRC) != crc32.Checksum(batch[offsetAttributes:], crc32.MakeTable(crc32.Castagnoli)) {
			t.Fatal("crc")
		}
		var rec kmsg.Record
		if err := rec.ReadFrom(rb.Records); err != nil {
			t.Fatalf("kmsg.Record: %v", err)
		}
		var key kmsg.ControlRecordKey
		if err := key.ReadFrom(rec.Key); err != nil || key.Version != 0 || int16(key.Type) != want {
			t.Fatalf("ControlRecordKey %+v, %v", key, err)
		}
		var marker kmsg.EndTxnMarker
		if err := marker.ReadFrom(rec.Value); err != nil || marker.Version != 0 || marker.CoordinatorEpoch != 17 {
			t.Fatalf("EndTxnMarker %+v, %v", marker, err)
		}

		// Append stamps the offset; the batch stays valid.
		l, _ := newTestLog(t, testConfig(), nil)
		appendRaw(t, l, 0, valueBatch(t, 2, 10, 1))
		res := appendRaw(t, l, 5, batch)
		if res.FirstOffset != 2 || res.LastOffset != 2 {
			t.Fatalf("append %+v", res)
		}
		chunk, err := l.Read(2, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		data, err := chunk.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if typ, ok, err := ControlRecordType(data); err != nil || !ok || typ != want {
			t.Fatalf("read back: %d, %v, %v", typ, ok, err)
		}
	}
}

// kmsgControlBatch encodes a control batch with franz-go's kmsg types.
func kmsgControlBatch(typ kmsg.ControlRecordKeyType) []byte {
	key := kmsg.ControlRecordKey{Type: typ}
	value := kmsg.EndTxnMarker{CoordinatorEpoch: 9}
	rec := kmsg.Record{Key: key.AppendTo(nil), Value: value.AppendTo(nil)}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // the length varint of 0 is one byte
	records := rec.AppendTo(nil)
	rb := kmsg.RecordBatch{
		Magic: 2, Attributes: 0x30, ProducerID: 5, ProducerEpoch: 1, FirstSequence: -1,
		FirstTimestamp: 10, MaxTimestamp: 10, NumRecords: 1, Records: records,
	}
	rb.Length = int32(len(rb.AppendTo(nil)) - batchLogOverhead)
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[offsetCRC:], batchCRC(b))
	return b
}

func TestControlRecordTypeOfKmsgBatch(t *testing.T) {
	for _, typ := range []kmsg.ControlRecordKeyType{kmsg.ControlRecordKeyTypeAbort, kmsg.ControlRecordKeyTypeCommit} {
		b := kmsgControlBatch(typ)
		if _, err := ValidateBatches(b); err != nil {
			t.Fatalf("ValidateBatches: %v", err)
		}
		got, ok, err := ControlRecordType(b)
		if err != nil || !ok || got != int16(typ) {
			t.Fatalf("type %d: got %d, %v, %v", typ, got, ok, err)
		}
	}
}

func TestControlRecordTypeRejects(t *testing.T) {
	plain := valueBatch(t, 1, 10, 1)
	if _, ok, err := ControlRecordType(plain); ok || err != nil {
		t.Fatalf("plain batch: %v, %v", ok, err)
	}
	empty := emptyBatch(decodeHeader(EncodeControlBatch(1, 0, true, 0, 1)))
	if _, ok, err := ControlRecordType(empty); ok || err != nil {
		t.Fatalf("empty control batch: %v, %v", ok, err)
	}
	shortKey := makeBatch(t, batchSpec{attributes: attrControl | attrTransactional, records: []testRecord{{key: []byte{0, 0, 0}, value: []byte{}, timestamp: 1}}})
	if _, _, err := ControlRecordType(shortKey); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("short key: %v", err)
	}
	badVersion := makeBatch(t, batchSpec{attributes: attrControl, records: []testRecord{{key: []byte{0xff, 0xff, 0, 1}, timestamp: 1}}})
	if _, _, err := ControlRecordType(badVersion); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("negative version: %v", err)
	}
	badCRC := EncodeControlBatch(1, 0, true, 0, 1)
	badCRC[len(badCRC)-1] ^= 1
	if _, _, err := ControlRecordType(badCRC); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("bad crc: %v", err)
	}
	if _, _, err := ControlRecordType(nil); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("nil: %v", err)
	}
}
