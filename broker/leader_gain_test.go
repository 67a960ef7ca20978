package broker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createOnReplicas creates a one-partition topic on the given replicas
// (the first leads).
func createOnReplicas(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, replicas []int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Partition, a.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// TestLeaderGainEndsFollowersLongPolls: a partition's leadership moves to
// a node whose followers are in a long poll (replica.fetch.wait.max.ms,
// here 5 s) for another partition it leads. Their fetches in flight do
// not name the moved partition, so without the new leader ending them the
// followers would start replicating it, and its acks=all producers would
// be answered, only when the polls time out (Kafka's behaviour).
func TestLeaderGainEndsFollowersLongPolls(t *testing.T) {
	c := startTestCluster(t, 3, func(cfg *Config) {
		mustSet(t, cfg, "auto.leader.rebalance.enable", "false", "replica.fetch.wait.max.ms", "5000")
	})
	ctx := testContext(t)
	cl := c.client()
	adm := kadm.NewClient(cl)
	createOnReplicas(t, ctx, cl, "moved", []int32{1, 2, 3})
	createOnReplicas(t, ctx, cl, "idle", []int32{2, 1, 3})
	for topic, leader := range map[string]int32{"moved": 1, "idle": 2} {
		waitUntil(t, 20*time.Second, topic+" led by its first replica with every replica in sync", func() bool {
			p, err := partitionMetadata(ctx, cl, topic, 0)
			return err == nil && p.Leader == leader && len(p.ISR) == 3
		})
	}
	producer, err := kgo.NewClient(kgo.SeedBrokers(c.nodes[0].addr()), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	produce := func(topic string) time.Duration {
		t.Helper()
		start := time.Now()
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
		return time.Since(start)
	}
	produce("moved")

	if r := reassign(t, adm, "moved", 0, []int32{2, 1, 3}); r.Err != nil {
		t.Fatalf("reassign: %v", r.Err)
	}
	waitUntil(t, 20*time.Second, "the reordered replicas", func() bool {
		p, err := partitionMetadata(ctx, cl, "moved", 0)
		return err == nil && slices.Equal(p.Replicas, []int32{2, 1, 3})
	})
	// A record to idle ends the followers' long polls at node 2: the next
	// ones start now and last 5 s unless something ends them.
	produce("idle")
	elected, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"moved": {0: {}}})
	if err != nil || elected["moved"][0].Err != nil {
		t.Fatalf("elect: %v %+v", err, elected)
	}
	waitUntil(t, 10*time.Second, "every node applying the election", func() bool {
		for _, nb := range c.nodes {
			if tp, ok := nb.srv.clusterState().Topic("moved"); !ok || tp.Partitions[0].Leader != 2 {
				return false
			}
		}
		return true
	})
	took := produce("moved")
	t.Logf("the first acks=all produce after the leader moved took %s", took.Round(time.Millisecond))
	if took > 2500*time.Millisecond {
		t.Errorf("the first acks=all produce after the leader moved took %s: the followers waited out their long polls", took)
	}
	// The record went to the new leader (node 2), after the first one.
	if p := c.nodes[1].srv.topics.partition("moved", 0); p == nil || !p.IsLeader() || p.HighWatermark() != 2 {
		t.Errorf("node 2 does not lead moved with both records")
	}
}

// BenchmarkLeaderGainsMissing is a follower fetch naming 10,000
// partitions checked against as many leaderships gained at once (a node
// starting): the whole scan, as every partition is named.
func BenchmarkLeaderGainsMissing(b *testing.B) {
	var g leaderGains
	now := time.Now()
	topic := &topicState{name: "t"}
	var targets []fetchTarget
	for i := range 10000 {
		p := &partition{topic: topic, index: int32(i)}
		g.gained(p, []int32{1, 2, 3}, now)
		targets = append(targets, fetchTarget{key: sessionKey{topic: "t", partition: int32(i)}})
	}
	for b.Loop() {
		if g.missing(2, targets, now) {
			b.Fatal("every gained partition is named")
		}
	}
}
