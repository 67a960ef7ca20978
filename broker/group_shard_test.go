package broker

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-streaming/strata/broker/groups"
	"github.com/strata-streaming/strata/broker/storage"
)

// TestGroupBatchEncoding: the coordinator's batches pass the append path's
// validation and decode back to the records, tombstones included.
func TestGroupBatchEncoding(t *testing.T) {
	records := []groups.Record{
		{Group: "g", IsOffset: true, TopicPartition: groups.TopicPartition{Topic: "t", Partition: 1}, Offset: &groups.OffsetAndMetadata{Offset: 5, LeaderEpoch: 2, Metadata: "m", CommitTimestamp: 1000, ExpireTimestamp: -1}},
		{Group: "g", IsOffset: true, TopicPartition: groups.TopicPartition{Topic: "t", Partition: 2}},
		{Group: "g", Metadata: &groups.GroupMetadata{ProtocolType: "consumer", Generation: 3, StateTimestamp: 1000}},
		{Group: "g"},
	}
	now := time.UnixMilli(1_700_000_000_000)
	batch := encodeGroupBatch(records, now)
	headers, err := storage.ValidateBatches(batch)
	if err != nil {
		t.Fatal(err)
	}
	h := headers[0]
	if len(headers) != 1 || h.NumRecords != 4 || h.LastOffsetDelta != 3 || h.ProducerID != -1 || h.FirstTimestamp != now.UnixMilli() || h.Compression() != 0 {
		t.Fatalf("header %+v", h)
	}
	decoded, err := storage.DecodeRecords(batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range decoded {
		if r.Offset != int64(i) || r.Timestamp != now.UnixMilli() {
			t.Fatalf("record %d: offset %d timestamp %d", i, r.Offset, r.Timestamp)
		}
		back, known, err := groups.DecodeRecord(r.Key, r.Value)
		if err != nil || !known || !reflect.DeepEqual(back, records[i]) {
			t.Fatalf("record %d: %+v (known=%v err=%v), want %+v", i, back, known, err, records[i])
		}
	}
}
