package broker

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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

// TestElectLeadersUnclean: partitions on broker-only nodes 4 and 5 lose
// node 5 (the ISR shrinks to 4), take a record only node 4 has, then lose
// node 4 too: leaderless. With nothing alive an unclean election is
// ELIGIBLE_LEADERS_NOT_AVAILABLE and a preferred one
// PREFERRED_LEADER_NOT_AVAILABLE, as in Kafka. Node 5 back (alive, outside
// the ISR, and not elected by itself: unclean.leader.election.enable is
// off) is elected through the API: kadm for partition 0, whose record
// written without node 5 is gone, sarama for partition 1, and the null
// topic list (every partition) for partition 2, the only one listed. The
// preferred replica being down, a preferred election stays
// PREFERRED_LEADER_NOT_AVAILABLE; an unknown election type is
// INVALID_REQUEST.
func TestElectLeadersUnclean(t *testing.T) {
	c := startTestCluster(t, 3)
	c.addBrokerOnly(4)
	c.addBrokerOnly(5)
	ctx := testContext(t)
	cl := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	waitUntil(t, 20*time.Second, "nodes 4 and 5 registered", func() bool {
		st := c.node(1).srv.clusterState()
		b4, ok4 := st.Brokers[4]
		b5, ok5 := st.Brokers[5]
		return ok4 && ok5 && !b4.Fenced && !b5.Fenced
	})
	const topic, parts = "unclean", 3
	req := assignedTopicRequest(topic, []int32{0, 1, 2}, func(int32) []int32 { return []int32{4, 5} })
	if resp, err := req.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	// state is every partition's leader and ISR, as node 1 applied them.
	state := func() (leaders []int32, isrs [][]int32) {
		tp, _ := c.node(1).srv.clusterState().Topic(topic)
		for _, p := range tp.Partitions {
			leaders, isrs = append(leaders, p.Leader), append(isrs, p.ISR)
		}
		return leaders, isrs
	}
	allAre := func(leader int32, isr ...int32) func() bool {
		return func() bool {
			leaders, isrs := state()
			for i := range leaders {
				if leaders[i] != leader || !slices.Equal(isrs[i], isr) {
					return false
				}
			}
			return len(leaders) == parts
		}
	}
	waitUntil(t, 20*time.Second, "node 4 leading with a full ISR", allAre(4, 4, 5))
	for p := range int32(parts) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("both")}).FirstErr(); err != nil {
			t.Fatalf("produce to %d: %v", p, err)
		}
	}
	c.node(5).stop()
	waitUntil(t, 30*time.Second, "the ISR shrunk to node 4", allAre(4, 4))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("only on 4")}).FirstErr(); err != nil {
		t.Fatalf("produce without node 5: %v", err)
	}
	c.node(4).stop()
	waitUntil(t, 30*time.Second, "no leader", allAre(-1, 4))

	one := kadm.TopicsSet{topic: {0: {}}}
	expect := func(how kadm.ElectLeadersHow, want error) {
		t.Helper()
		res, err := adm.ElectLeaders(ctx, how, one)
		if err != nil {
			t.Fatal(err)
		}
		if r := res[topic][0]; !errors.Is(r.Err, want) {
			t.Fatalf("election type %d: %v %s, want %v", how, r.Err, r.ErrMessage, want)
		}
	}
	expect(kadm.ElectLiveReplica, kerr.EligibleLeadersNotAvailable)
	expect(kadm.ElectPreferredReplica, kerr.PreferredLeaderNotAvailable)

	c.node(5).start()
	waitUntil(t, 20*time.Second, "node 5 unfenced", func() bool {
		b, ok := c.node(1).srv.clusterState().Brokers[5]
		return ok && !b.Fenced
	})
	if leaders, isrs := state(); !allAre(-1, 4)() {
		t.Fatalf("node 5 back: leaders %v ISRs %v, want no leader and ISR [4] (no unclean election by itself)", leaders, isrs)
	}

	expect(kadm.ElectLiveReplica, nil)
	waitUntil(t, 10*time.Second, "node 5 leading partition 0 alone", func() bool {
		leaders, isrs := state()
		return leaders[0] == 5 && slices.Equal(isrs[0], []int32{5})
	})
	// The record only node 4 had is lost: that is what unclean means.
	waitUntil(t, 10*time.Second, "partition 0 ending at offset 1", func() bool {
		// Partitions 1 and 2, leaderless, fail the request as a whole.
		ends, _ := adm.ListEndOffsets(ctx, topic)
		o, ok := ends.Lookup(topic, 0)
		return ok && o.Err == nil && o.Offset == 1
	})
	expect(kadm.ElectPreferredReplica, kerr.PreferredLeaderNotAvailable)
	expect(kadm.ElectLiveReplica, kerr.ElectionNotNeeded)

	sa, err := sarama.NewClusterAdmin([]string{c.nodes[0].addr()}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sres, err := sa.ElectLeaders(sarama.UncleanElection, map[string][]int32{topic: {1}})
	if err != nil || sres[topic][1] == nil || sres[topic][1].ErrorCode != sarama.ErrNoError {
		t.Fatalf("sarama unclean election: %v %+v", err, sres)
	}
	waitUntil(t, 10*time.Second, "node 5 leading partition 1", func() bool {
		leaders, _ := state()
		return leaders[1] == 5
	})

	all, err := adm.ElectLeaders(ctx, kadm.ElectLiveReplica, nil)
	if err != nil || len(all) != 1 || len(all[topic]) != 1 || all[topic][2].Err != nil {
		t.Fatalf("unclean election of every partition: %v %+v, want %s-2 elected and nothing else listed", err, all, topic)
	}
	waitUntil(t, 10*time.Second, "node 5 leading every partition", allAre(5, 5))

	raw := kmsg.NewPtrElectLeadersRequest()
	raw.Version, raw.ElectionType, raw.TimeoutMillis = 2, 2, 10000
	rtp := kmsg.NewElectLeadersRequestTopic()
	rtp.Topic, rtp.Partitions = topic, []int32{0}
	raw.Topics = append(raw.Topics, rtp)
	rresp, err := raw.RequestWith(ctx, cl)
	if err != nil || rresp.ErrorCode != kerr.InvalidRequest.Code || len(rresp.Topics) != 1 ||
		len(rresp.Topics[0].Partitions) != 1 || rresp.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("election type 2: %v %+v", err, rresp)
	}
}
