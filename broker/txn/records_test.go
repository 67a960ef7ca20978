package txn

import (
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

func TestRecordCodec(t *testing.T) {
	cases := []struct {
		name     string
		rec      Record
		keyHex   string
		valueHex string // pins Kafka's layout where given
	}{
		{
			name:   "tombstone",
			rec:    Record{TransactionalID: "t"},
			keyHex: "0000" + "000174",
		},
		{
			name: "empty, v0: null partitions",
			rec: Record{TransactionalID: "t", Value: &Value{
				Version: 0, ProducerID: 1, ProducerEpoch: 2, TimeoutMs: 60000, State: Empty,
				LastUpdateTimestamp: 5, StartTimestamp: -1,
				PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1,
			}},
			keyHex: "0000" + "000174",
			valueHex: "0000" + "0000000000000001" + "0002" + "0000ea60" + "00" + "ffffffff" +
				"0000000000000005" + "ffffffffffffffff",
		},
		{
			name: "ongoing, v0",
			rec: Record{TransactionalID: "tx", Value: &Value{
				Version: 0, ProducerID: 7, ProducerEpoch: 0, TimeoutMs: 1000, State: Ongoing,
				Topics:              []TopicPartitions{{"a", []int32{0, 1}}, {"b", []int32{3}}},
				LastUpdateTimestamp: 20, StartTimestamp: 10,
				PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1,
			}},
			valueHex: "0000" + "0000000000000007" + "0000" + "000003e8" + "01" +
				"00000002" + "0001" + "61" + "00000002" + "00000000" + "00000001" + "0001" + "62" + "00000001" + "00000003" +
				"0000000000000014" + "000000000000000a",
		},
		{
			name: "prepare commit, v1 with tagged fields",
			rec: Record{TransactionalID: "tx", Value: &Value{
				Version: 1, ProducerID: 7, ProducerEpoch: 3, TimeoutMs: 1000, State: PrepareCommit,
				Topics:              []TopicPartitions{{"a", []int32{0}}},
				LastUpdateTimestamp: 20, StartTimestamp: 10,
				PreviousProducerID: 6, NextProducerID: -1, ClientTransactionVersion: 2, NextProducerEpoch: -1,
			}},
		},
		{
			name: "complete abort, v1: empty (not null) partitions",
			rec: Record{TransactionalID: "tx", Value: &Value{
				Version: 1, ProducerID: 7, ProducerEpoch: 3, TimeoutMs: 1000, State: CompleteAbort,
				Topics:              []TopicPartitions{},
				LastUpdateTimestamp: 20, StartTimestamp: 10,
				PreviousProducerID: -1, NextProducerID: -1, NextProducerEpoch: -1,
			}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, value := EncodeRecord(c.rec)
			if c.keyHex != "" && hex.EncodeToString(key) != c.keyHex {
				t.Fatalf("key %x, want %s", key, c.keyHex)
			}
			if c.valueHex != "" && hex.EncodeToString(value) != c.valueHex {
				t.Fatalf("value %x\nwant  %s", value, c.valueHex)
			}
			if (value == nil) != (c.rec.Value == nil) {
				t.Fatalf("value %x for tombstone=%v", value, c.rec.Value == nil)
			}
			got, err := DecodeRecord(key, value)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.rec) {
				t.Fatalf("decoded %+v\nwant %+v", got.Value, c.rec.Value)
			}
		})
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	key, value := EncodeRecord(Record{TransactionalID: "t", Value: &Value{State: Ongoing, Topics: []TopicPartitions{{"a", []int32{1}}}}})
	if _, err := DecodeRecord([]byte{0, 1, 0, 1, 't'}, nil); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("key version 1: %v", err)
	}
	for name, kv := range map[string][2][]byte{
		"short key":       {{0}, nil},
		"truncated key":   {key[:len(key)-1], nil},
		"short value":     {key, {0}},
		"truncated value": {key, value[:len(value)-3]},
		"value version 2": {key, append([]byte{0, 2}, value[2:]...)},
		"unknown state":   {key, func() []byte { v := append([]byte(nil), value...); v[16] = 9; return v }()},
	} {
		if _, err := DecodeRecord(kv[0], kv[1]); !errors.Is(err, ErrCorruptRecord) {
			t.Errorf("%s: %v, want ErrCorruptRecord", name, err)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []Record{
		{TransactionalID: "t"},
		{TransactionalID: "t", Value: &Value{State: Empty, StartTimestamp: -1}},
		{TransactionalID: "t", Value: &Value{State: Ongoing, Topics: []TopicPartitions{{"a", []int32{0, 1}}}}},
		{TransactionalID: "t", Value: &Value{Version: 1, State: PrepareAbort, Topics: []TopicPartitions{{"b", nil}}, PreviousProducerID: 3, NextProducerID: -1, NextProducerEpoch: -1}},
	} {
		k, v := EncodeRecord(r)
		f.Add(k, v)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		rec, err := DecodeRecord(key, value)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes the same,
		// and replays without panicking.
		k2, v2 := EncodeRecord(rec)
		rec2, err := DecodeRecord(k2, v2)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(rec, rec2) {
			t.Fatalf("unstable: %+v vs %+v", rec, rec2)
		}
		cfg := DefaultConfig()
		c := New(&cfg, 0)
		_ = c.Replay(rec)
		c.PendingMarkers()
	})
}
