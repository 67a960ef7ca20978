package groups

import (
	"encoding/hex"
	"reflect"
	"testing"
)

func TestRecordCodec(t *testing.T) {
	inst := "instance-1"
	cases := []struct {
		name string
		rec  Record
		// keyHex pins Kafka's key layout.
		keyHex string
	}{
		{
			name:   "offset commit",
			rec:    Record{Group: "g", IsOffset: true, TopicPartition: TopicPartition{"t", 3}, Offset: &OffsetAndMetadata{Offset: 42, LeaderEpoch: 5, Metadata: "m", CommitTimestamp: 1700000000000, ExpireTimestamp: -1}},
			keyHex: "0001" + "000167" + "000174" + "00000003",
		},
		{
			name: "offset commit with expire timestamp (value v1)",
			rec:  Record{Group: "g", IsOffset: true, TopicPartition: TopicPartition{"t", 0}, Offset: &OffsetAndMetadata{Offset: 1, LeaderEpoch: -1, CommitTimestamp: 10, ExpireTimestamp: 20}},
		},
		{
			name:   "offset tombstone",
			rec:    Record{Group: "g", IsOffset: true, TopicPartition: TopicPartition{"t", 0}},
			keyHex: "0001" + "000167" + "000174" + "00000000",
		},
		{
			name: "group metadata",
			rec: Record{Group: "g", Metadata: &GroupMetadata{
				ProtocolType: "consumer", Generation: 7, Protocol: "range", Leader: "m1", StateTimestamp: 123,
				Members: []MemberMetadata{
					{MemberID: "m1", ClientID: "c", ClientHost: "/127.0.0.1", RebalanceTimeoutMs: 60000, SessionTimeoutMs: 45000, Subscription: []byte{1}, Assignment: []byte{2}},
					{MemberID: "m2", InstanceID: &inst, ClientID: "c", ClientHost: "/127.0.0.1", RebalanceTimeoutMs: 60000, SessionTimeoutMs: 45000, Subscription: []byte{3}, Assignment: []byte{}},
				},
			}},
			keyHex: "0002" + "000167",
		},
		{
			name: "empty group metadata",
			rec:  Record{Group: "g", Metadata: &GroupMetadata{ProtocolType: "consumer", Generation: 8, StateTimestamp: 5}},
		},
		{
			name:   "group tombstone",
			rec:    Record{Group: "g"},
			keyHex: "0002" + "000167",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, value := EncodeRecord(c.rec)
			if c.keyHex != "" && hex.EncodeToString(key) != c.keyHex {
				t.Fatalf("key %x, want %s", key, c.keyHex)
			}
			if (value == nil) != (c.rec.Offset == nil && c.rec.Metadata == nil) {
				t.Fatalf("value %x for a tombstone=%v", value, value == nil)
			}
			back, known, err := DecodeRecord(key, value)
			if err != nil || !known {
				t.Fatalf("decode: known=%v err=%v", known, err)
			}
			if !reflect.DeepEqual(normalise(back), normalise(c.rec)) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", back, c.rec)
			}
		})
	}
}

// normalise maps empty and nil byte slices alike for comparison.
func normalise(r Record) Record {
	if r.Metadata != nil {
		md := *r.Metadata
		md.Members = append([]MemberMetadata(nil), md.Members...)
		for i := range md.Members {
			if len(md.Members[i].Assignment) == 0 {
				md.Members[i].Assignment = nil
			}
			if len(md.Members[i].Subscription) == 0 {
				md.Members[i].Subscription = nil
			}
		}
		r.Metadata = &md
	}
	return r
}

func TestDecodeOlderOffsetValueVersions(t *testing.T) {
	// Version 0: offset, metadata, commit timestamp; no leader epoch.
	value, _ := hex.DecodeString("0000" + "000000000000002a" + "0000" + "0000000000000064")
	key, _ := EncodeRecord(Record{Group: "g", IsOffset: true, TopicPartition: TopicPartition{"t", 0}})
	rec, _, err := DecodeRecord(key, value)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Offset.Offset != 42 || rec.Offset.LeaderEpoch != -1 || rec.Offset.CommitTimestamp != 100 || rec.Offset.ExpireTimestamp != -1 {
		t.Fatalf("%+v", rec.Offset)
	}
}

func TestDecodeSkipsUnknownRecordTypes(t *testing.T) {
	// Key version 3+ are KIP-848 consumer-group records.
	_, known, err := DecodeRecord([]byte{0, 3, 0, 1, 'g'}, []byte{1})
	if known || err != nil {
		t.Fatalf("known=%v err=%v", known, err)
	}
	if _, _, err := DecodeRecord([]byte{0}, nil); err == nil {
		t.Fatal("a one-byte key decoded")
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range []Record{
		{Group: "g", IsOffset: true, TopicPartition: TopicPartition{"t", 1}, Offset: &OffsetAndMetadata{Offset: 1, ExpireTimestamp: -1}},
		{Group: "g", Metadata: &GroupMetadata{ProtocolType: "consumer", Generation: 1, Protocol: "range", Members: []MemberMetadata{{MemberID: "m"}}}},
	} {
		k, v := EncodeRecord(r)
		f.Add(k, v)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		rec, known, err := DecodeRecord(key, value)
		if err != nil || !known {
			return
		}
		// What decodes re-encodes to something that decodes the same.
		k2, v2 := EncodeRecord(rec)
		rec2, _, err := DecodeRecord(k2, v2)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(normalise(rec), normalise(rec2)) {
			t.Fatalf("unstable: %+v vs %+v", rec, rec2)
		}
	})
}
