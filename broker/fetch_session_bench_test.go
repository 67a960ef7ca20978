package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkFetchSessionIncremental measures one incremental fetch (KIP-227,
// v16, topic IDs) of a session over 10 and over 10,000 partitions when one
// partition received a record since the last fetch: the client names that
// partition's new offset, as franz-go does, and the answer carries that
// record alone. The produce before each fetch is not timed. With the dirty
// set the two sizes cost about the same; reading every partition made the
// large session a thousand times dearer.
//
//	go test -run '^$' -bench BenchmarkFetchSessionIncremental -benchtime 200x ./broker/
func BenchmarkFetchSessionIncremental(b *testing.B) {
	tb := startTestBroker(b)
	// 10 topics of 1,000 partitions: one CreateTopics of 10,000 outlasts
	// the harness's 60 s context on a busy machine.
	const topics, perTopic = 10, 1000
	ids := make([][16]byte, topics)
	for i := range ids {
		ids[i] = tb.createTopic(fmt.Sprintf("fsi-%d", i), perTopic, nil)
	}
	record := buildBatch(b, plainBatch(fixtureRecords(1, 7)...))
	for _, size := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("partitions=%d", size), func(b *testing.B) {
			c := tb.dialRaw()
			// partition i of the session is fsi-<i/perTopic>, partition i%perTopic.
			next := make([]int64, size)
			request := func(sessionID, epoch int32, named []int) *kmsg.FetchRequest {
				req := kmsg.NewPtrFetchRequest()
				req.Version, req.ReplicaID, req.MaxBytes = 16, -1, 1<<20
				req.MaxWaitMillis, req.MinBytes = 500, 1
				req.SessionID, req.SessionEpoch = sessionID, epoch
				byTopic := map[int]int{}
				for _, i := range named {
					ti, ok := byTopic[i/perTopic]
					if !ok {
						ti = len(req.Topics)
						byTopic[i/perTopic] = ti
						rt := kmsg.NewFetchRequestTopic()
						rt.TopicID = ids[i/perTopic]
						req.Topics = append(req.Topics, rt)
					}
					rp := kmsg.NewFetchRequestTopicPartition()
					rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = int32(i%perTopic), next[i], 1<<20
					rp.CurrentLeaderEpoch = -1
					req.Topics[ti].Partitions = append(req.Topics[ti].Partitions, rp)
				}
				return req
			}
			all := make([]int, size)
			for i := range all {
				all[i] = i
				next[i] = tb.logEnd(fmt.Sprintf("fsi-%d", i/perTopic), int32(i%perTopic))
			}
			req := request(0, 0, all)
			req.MaxWaitMillis = 0
			full := roundTrip[*kmsg.FetchResponse](c, req)
			if full.ErrorCode != 0 || full.SessionID == 0 {
				b.Fatalf("opening the session: %v, session %d", kerr.ErrorForCode(full.ErrorCode), full.SessionID)
			}
			epoch := int32(1)
			var named []int // the partition that returned records last time
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				i := n % size
				if got := c.produceRaw(fmt.Sprintf("fsi-%d", i/perTopic), int32(i%perTopic), record); got.ErrorCode != 0 {
					b.Fatalf("produce: %v", kerr.ErrorForCode(got.ErrorCode))
				}
				b.StartTimer()
				resp := roundTrip[*kmsg.FetchResponse](c, request(full.SessionID, epoch, named))
				epoch++
				if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
					b.Fatalf("fetch %d: error %v, %d topics, want partition %d alone", n, kerr.ErrorForCode(resp.ErrorCode), len(resp.Topics), i)
				}
				if p := resp.Topics[0].Partitions[0]; p.Partition != int32(i%perTopic) || len(p.RecordBatches) == 0 {
					b.Fatalf("fetch %d: partition %d with %d bytes, want records of %d", n, p.Partition, len(p.RecordBatches), i%perTopic)
				}
				next[i]++
				named = append(named[:0], i)
			}
		})
	}
}
