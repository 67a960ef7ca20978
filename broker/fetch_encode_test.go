package broker

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/storage"
)

// TestEncodeFetchBodyMatchesKmsg checks the hand-written Fetch encoder byte
// for byte against kmsg's for every version we serve, with the file chunks
// spliced in where sendfile would put them.
func TestEncodeFetchBodyMatchesKmsg(t *testing.T) {
	dir := t.TempDir()
	records := bytes.Repeat([]byte("0123456789abcdef"), 40)
	path := filepath.Join(dir, "seg")
	if err := os.WriteFile(path, append([]byte("xx"), records...), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := storage.FileChunk{File: f, Pos: 2, Len: int64(len(records))}
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

	for v := apis[kmsg.Fetch.Int16()].minVersion; v <= apis[kmsg.Fetch.Int16()].maxVersion; v++ {
		topics := []fetchTopicOut{
			{name: "orders", id: id, partitions: []fetchPartitionOut{
				{partition: 0, highWatermark: 100, lastStable: 100, logStartOffset: 3, chunk: chunk},
				{partition: 1, errorCode: 1, highWatermark: -1, lastStable: -1, logStartOffset: -1},
				// A read_committed fetch that failed: no aborted list either.
				{partition: 6, errorCode: 6, highWatermark: 9, lastStable: 9, logStartOffset: 0, abortedTxns: []storage.AbortedTxn{}},
				// KIP-951: a leader error with the leader's hint.
				{partition: 7, errorCode: 6, highWatermark: -1, lastStable: -1, logStartOffset: -1, currentLeader: &leaderHint{id: 3, epoch: 12}},
				{partition: 2, highWatermark: 7, lastStable: 7, logStartOffset: 0},
				{partition: 3, highWatermark: 9, lastStable: 4, logStartOffset: 0, chunk: chunk,
					abortedTxns: []storage.AbortedTxn{{ProducerID: 42, FirstOffset: 5}, {ProducerID: 43, FirstOffset: 6}}},
				{partition: 4, highWatermark: 9, lastStable: 9, logStartOffset: 0, abortedTxns: []storage.AbortedTxn{}},
			}},
			{name: "t2", id: id, partitions: []fetchPartitionOut{
				{partition: 5, highWatermark: 9, lastStable: 9, logStartOffset: 1, chunk: chunk},
			}},
		}
		var got []byte
		rack := "r1"
		endpoints := []brokerAddr{{id: 3, host: "127.0.0.1", port: 9093, rack: &rack}, {id: 4, host: "localhost", port: 9094}}
		for _, p := range encodeFetchBody(v, 0, 77, topics, endpoints) {
			got = append(got, p.bytes...)
			if p.chunk.Len > 0 {
				b, err := p.chunk.ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, b...)
			}
		}

		want := kmsg.NewPtrFetchResponse()
		want.Version = v
		want.SessionID = 77
		for _, to := range topics {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = to.name, to.id
			for _, po := range to.partitions {
				rp := kmsg.NewFetchResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.HighWatermark = po.partition, po.errorCode, po.highWatermark
				rp.LastStableOffset, rp.LogStartOffset = po.lastStable, po.logStartOffset
				if po.currentLeader != nil && v >= 12 {
					rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = po.currentLeader.id, po.currentLeader.epoch
				}
				if po.abortedTxns != nil && po.errorCode == 0 && v >= 4 {
					rp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
					for _, a := range po.abortedTxns {
						at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
						at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
						rp.AbortedTransactions = append(rp.AbortedTransactions, at)
					}
				}
				// Never null, errors included (librdkafka refuses null).
				rp.RecordBatches = []byte{}
				if po.chunk.Len > 0 {
					rp.RecordBatches = records
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			want.Topics = append(want.Topics, rt)
		}
		if v >= 16 { // NodeEndpoints
			for _, e := range endpoints {
				b := kmsg.NewFetchResponseBroker()
				b.NodeID, b.Host, b.Port, b.Rack = e.id, e.host, e.port, e.rack
				want.Brokers = append(want.Brokers, b)
			}
		}
		if wantBytes := want.AppendTo(nil); !bytes.Equal(got, wantBytes) {
			t.Fatalf("v%d: encoding differs from kmsg\n got %x\nwant %x", v, got, wantBytes)
		}
		// And kmsg reads ours back.
		back := kmsg.NewPtrFetchResponse()
		back.Version = v
		if err := back.ReadFrom(got); err != nil {
			t.Fatalf("v%d: kmsg cannot read our encoding: %v", v, err)
		}
		for _, bt := range back.Topics {
			for _, bp := range bt.Partitions {
				if bp.RecordBatches == nil {
					t.Fatalf("v%d: partition %d answered null records; Kafka (and librdkafka) need an empty set", v, bp.Partition)
				}
			}
		}
	}
}
