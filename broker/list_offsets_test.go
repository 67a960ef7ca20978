package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func listOffsetsRequest(version int16, topic string, partition int32, timestamp int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = version
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = partition
	rp.Timestamp = timestamp
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func (c *rawConn) listOffset(version int16, topic string, partition int32, timestamp int64) kmsg.ListOffsetsResponseTopicPartition {
	c.t.Helper()
	resp := roundTrip[*kmsg.ListOffsetsResponse](c, listOffsetsRequest(version, topic, partition, timestamp))
	return resp.Topics[0].Partitions[0]
}

// TestListOffsets: earliest, latest, max timestamp and lookups by
// timestamp over batches holding several records with distinct explicit
// timestamps, compressed and not, out of order within a batch; then
// DeleteRecords moves the earliest offset and the lookups follow it. It
// runs on one segment and with a segment per batch.
func TestListOffsets(t *testing.T) {
	tb := startTestBroker(t)
	for _, segmentBytes := range []string{"1073741824", "100"} {
		t.Run("segment.bytes="+segmentBytes, func(t *testing.T) {
			topic := "ts-" + segmentBytes
			tb.createTopic(topic, 1, map[string]*string{"segment.bytes": ptr(segmentBytes)})
			testListOffsets(t, tb, topic)
			if n := tb.srv.topics.partition(topic, 0).Log().NumSegments(); segmentBytes == "100" && n < 4 {
				t.Fatalf("%d segments; the test needs one per batch", n)
			}
		})
	}
}

func testListOffsets(t *testing.T, tb *testBroker, topic string) {
	c := tb.dialRaw()
	at := func(ts ...int64) []testRecord {
		out := make([]testRecord, len(ts))
		for i, x := range ts {
			out[i] = testRecord{value: []byte(fmt.Sprintf("at-%d", x)), timestamp: x}
		}
		return out
	}
	batches := []batchSpec{
		plainBatch(at(1000, 1010, 1020)...),               // offsets 0-2
		{records: at(1030, 1040, 1050), codec: codecGzip}, // 3-5
		{records: at(1100, 2000, 1500), codec: codecZstd}, // 6-8, maximum inside
		{records: at(1600, 1700), codec: codecLZ4},        // 9-10
		{records: at(1800, 1900), codec: codecSnappy},     // 11-12
	}
	for i, b := range batches {
		if b.producerID == 0 {
			b.producerID, b.epoch, b.baseSeq = -1, -1, -1
		}
		if got := c.produceRaw(topic, 0, buildBatch(t, b)); got.ErrorCode != 0 {
			t.Fatalf("batch %d: %v", i, kerr.ErrorForCode(got.ErrorCode))
		}
	}

	type lookup struct {
		timestamp  int64
		wantOffset int64
		wantTs     int64
	}
	check := func(what string, lookups []lookup) {
		t.Helper()
		for _, version := range []int16{1, 4, 7, 10} {
			for _, l := range lookups {
				if version < 7 && l.timestamp == -3 {
					continue // max timestamp needs v7 (KIP-734)
				}
				got := c.listOffset(version, topic, 0, l.timestamp)
				if got.ErrorCode != 0 {
					t.Fatalf("%s v%d timestamp %d: %v", what, version, l.timestamp, kerr.ErrorForCode(got.ErrorCode))
				}
				if got.Offset != l.wantOffset || (l.timestamp >= -1 || l.timestamp == -3) && got.Timestamp != l.wantTs {
					t.Errorf("%s v%d timestamp %d: offset %d timestamp %d, want offset %d timestamp %d",
						what, version, l.timestamp, got.Offset, got.Timestamp, l.wantOffset, l.wantTs)
				}
			}
		}
	}
	check("full log", []lookup{
		{-2, 0, -1},   // earliest
		{-1, 13, -1},  // latest
		{-3, 7, 2000}, // max timestamp: the middle record of the zstd batch
		{0, 0, 1000},  // before everything
		{1000, 0, 1000},
		{1015, 2, 1020},
		{1030, 3, 1030}, // first record of a compressed batch
		{1045, 5, 1050},
		{1051, 6, 1100},
		{1550, 7, 2000}, // first by offset with timestamp >= 1550, not the nearest
		{1999, 7, 2000},
		{2001, -1, -1}, // past every timestamp
	})

	del := kmsg.NewPtrDeleteRecordsRequest()
	del.Version = 2
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = topic
	dp := kmsg.NewDeleteRecordsRequestTopicPartition()
	dp.Partition, dp.Offset = 0, 4
	dt.Partitions = append(dt.Partitions, dp)
	del.Topics = append(del.Topics, dt)
	delResp := roundTrip[*kmsg.DeleteRecordsResponse](c, del)
	if p := delResp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.LowWatermark != 4 {
		t.Fatalf("DeleteRecords: error %v, low watermark %d", kerr.ErrorForCode(p.ErrorCode), p.LowWatermark)
	}
	check("after DeleteRecords to 4", []lookup{
		{-2, 4, -1},
		{-1, 13, -1},
		{0, 4, 1040}, // the first record left, inside a batch that began before the cut
		{1030, 4, 1040},
		{1051, 6, 1100},
	})
	if got := c.listOffset(10, topic, 0, -4); got.ErrorCode != 0 || got.Offset != 4 {
		t.Errorf("earliest local: error %v offset %d, want 4", kerr.ErrorForCode(got.ErrorCode), got.Offset)
	}

	// Errors.
	if got := c.listOffset(7, topic, 3, -1); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("missing partition: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	if got := c.listOffset(7, "nope", 0, -1); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("missing topic: %v", kerr.ErrorForCode(got.ErrorCode))
	}
	future := listOffsetsRequest(7, topic, 0, -1)
	future.Topics[0].Partitions[0].CurrentLeaderEpoch = 5
	if got := roundTrip[*kmsg.ListOffsetsResponse](c, future).Topics[0].Partitions[0]; got.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("leader epoch from the future: %v", kerr.ErrorForCode(got.ErrorCode))
	}
}

// TestListOffsetsEmptyPartition: an empty log answers earliest = latest =
// 0 and no offset for timestamps.
func TestListOffsetsEmptyPartition(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("empty", 1, nil)
	c := tb.dialRaw()
	for _, tc := range []struct{ timestamp, want int64 }{{-2, 0}, {-1, 0}, {-3, -1}, {0, -1}} {
		if got := c.listOffset(8, "empty", 0, tc.timestamp); got.ErrorCode != 0 || got.Offset != tc.want {
			t.Errorf("timestamp %d: error %v offset %d, want %d", tc.timestamp, kerr.ErrorForCode(got.ErrorCode), got.Offset, tc.want)
		}
	}
}
