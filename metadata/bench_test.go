package metadata_test

import (
	"context"
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
