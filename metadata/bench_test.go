package metadata_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// BenchmarkProposeOneNode is the latency of one committed and applied
// record on a one-voter quorum: one WAL fsync per record.
func BenchmarkProposeOneNode(b *testing.B) {
	n, err := metadata.StartNode(metadata.Config{NodeID: 1, Dir: b.TempDir(), DisableController: true})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	ctx := context.Background()
	if _, err := n.Propose(ctx, cluster.AllocateProducerIDs{N: 1}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := n.Propose(ctx, cluster.AllocateProducerIDs{N: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateTopicsOneNode creates 1,000 topics of 10 partitions on a
// one-voter quorum: PerRecord proposes one CreateTopic per topic (the
// path before TopicBatch: one raft round and WAL fsync each), Batch one
// TopicBatch for all.
//
//	go test -run '^$' -bench BenchmarkCreateTopicsOneNode -benchtime 3x ./metadata/
func BenchmarkCreateTopicsOneNode(b *testing.B) {
	mk := func(iter, i int) cluster.CreateTopic {
		ct := cluster.CreateTopic{Name: fmt.Sprintf("t-%d-%04d", iter, i), ID: cluster.TopicID{byte(iter), byte(i >> 8), byte(i), 9}}
		for range 10 {
			ct.Partitions = append(ct.Partitions, cluster.PartitionAssignment{Replicas: []int32{1}})
		}
		return ct
	}
	for _, mode := range []string{"PerRecord", "Batch"} {
		b.Run(mode, func(b *testing.B) {
			n, err := metadata.StartNode(metadata.Config{NodeID: 1, Dir: b.TempDir(), DisableController: true})
			if err != nil {
				b.Fatal(err)
			}
			defer n.Close()
			ctx := context.Background()
			b.ResetTimer()
			for iter := 0; iter < b.N; iter++ {
				if mode == "PerRecord" {
					for i := range 1000 {
						if _, err := n.Propose(ctx, mk(iter, i)); err != nil {
							b.Fatal(err)
						}
					}
					continue
				}
				var batch cluster.TopicBatch
				for i := range 1000 {
					batch.Records = append(batch.Records, mk(iter, i))
				}
				if _, err := n.Propose(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "topics/s")
		})
	}
}
