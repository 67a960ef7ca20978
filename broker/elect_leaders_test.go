package broker

import (
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestElectLeaders: with the automatic rebalance off, a partition whose
// preferred replica restarted stays led by another until ElectLeaders
// (kadm) moves it back; a second preferred election is ELECTION_NOT_NEEDED,
// an unclean one on a led partition too (sarama's admin), an unknown
// partition UNKNOWN_TOPIC_OR_PARTITION.
func TestElectLeaders(t *testing.T) {
	c := startTestCluster(t, 3, func(cfg *Config) { mustSet(t, cfg, "auto.leader.rebalance.enable", "false") })
	ctx := testContext(t)
	adm := kadm.NewClient(c.client())
	if res, err := adm.CreateTopic(ctx, 1, 3, nil, "elect"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	var preferred int32
	waitUntil(t, 10*time.Second, "the partition's replicas", func() bool {
		md, err := adm.Metadata(ctx, "elect")
		if err != nil || len(md.Topics["elect"].Partitions[0].Replicas) != 3 {
			return false
		}
		preferred = md.Topics["elect"].Partitions[0].Replicas[0]
		return true
	})
	waitUntil(t, 10*time.Second, "the preferred replica leading", func() bool {
		l, _ := leaderOf(ctx, adm, "elect", 0)
		return l == preferred
	})
	c.node(preferred).stop()
	waitUntil(t, 20*time.Second, "another leader", func() bool {
		l, _ := leaderOf(ctx, adm, "elect", 0)
		return l > 0 && l != preferred
	})
	// DescribeCluster v2 lists the stopped node, fenced once its session
	// ended, when asked to (KIP-1073), and leaves it out otherwise.
	waitUntil(t, 30*time.Second, "the stopped node fenced", func() bool {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version, req.EndpointType, req.IncludeFencedBrokers = 2, 1, true
		resp, err := req.RequestWith(ctx, c.client())
		if err != nil || len(resp.Brokers) != 3 {
			return false
		}
		for _, b := range resp.Brokers {
			if b.NodeID == preferred {
				return b.IsFenced
			}
		}
		return false
	})
	c.startAll()
	waitUntil(t, 30*time.Second, "the preferred replica back in the ISR", func() bool {
		_, isr := leaderOf(ctx, adm, "elect", 0)
		return len(isr) == 3
	})
	if l, _ := leaderOf(ctx, adm, "elect", 0); l == preferred {
		t.Fatal("the preferred replica leads again without an election")
	}

	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"elect": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res["elect"][0]; r.Err != nil {
		t.Fatalf("preferred election: %v %s", r.Err, r.ErrMessage)
	}
	// Applied on the node that answered; the others follow.
	waitUntil(t, 10*time.Second, "the preferred replica leading after the election", func() bool {
		l, _ := leaderOf(ctx, adm, "elect", 0)
		return l == preferred
	})
	res, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"elect": {0: {}, 5: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res["elect"][0].Err, kerr.ElectionNotNeeded) || !errors.Is(res["elect"][5].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("second election: %+v", res)
	}
	// All partitions: nothing needs an election, so nothing is listed.
	if all, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil); err != nil || len(all) != 0 {
		t.Fatalf("election of every partition: %v %+v", err, all)
	}

	sa, err := sarama.NewClusterAdmin([]string{c.nodes[0].addr()}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sres, err := sa.ElectLeaders(sarama.UncleanElection, map[string][]int32{"elect": {0}})
	if err != nil || sres["elect"][0].ErrorCode != sarama.ErrElectionNotNeeded {
		t.Fatalf("sarama unclean election of a led partition: %v %+v", err, sres)
	}
}
