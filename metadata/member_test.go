package metadata_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
	"github.com/strata-streaming/strata/metadata/metadatatest"
)

// onNode places n partitions with one replica each on node.
func onNode(node int32, n int) []cluster.PartitionAssignment {
	out := make([]cluster.PartitionAssignment, n)
	for i := range out {
		out[i] = cluster.PartitionAssignment{Replicas: []int32{node}}
	}
	return out
}

// memberContract is what the broker relies on from any Member it proposes
// topic and producer-id records through: the change is applied (State
// shows it) when Propose returns, the state machine's rejections come back
// as the cluster sentinels, and a state once read never changes.
func memberContract(t *testing.T, m metadata.Member) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m.State().ClusterID == "" {
		t.Fatal("empty cluster id")
	}
	id := cluster.TopicID(metadata.NewTopicID())
	create := cluster.CreateTopic{Name: "orders", ID: id, Partitions: onNode(1, 3), Configs: map[string]string{"retention.ms": "1000"}}
	if _, err := m.Propose(ctx, create); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Propose(ctx, create); !errors.Is(err, cluster.ErrTopicExists) && !errors.Is(err, cluster.ErrTopicIDExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := m.Propose(ctx, cluster.CreatePartitions{Topic: "orders", Partitions: onNode(1, 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Propose(ctx, cluster.AlterConfigs{Topic: "orders", Configs: map[string]string{"retention.ms": "2000", "cleanup.policy": "compact"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Propose(ctx, cluster.CreatePartitions{Topic: "nope", Partitions: onNode(1, 1)}); !errors.Is(err, cluster.ErrTopicNotFound) {
		t.Fatalf("growing a missing topic: %v", err)
	}
	if _, err := m.Propose(ctx, cluster.AlterConfigs{Topic: "nope"}); !errors.Is(err, cluster.ErrTopicNotFound) {
		t.Fatalf("configs of a missing topic: %v", err)
	}
	if _, err := m.Propose(ctx, cluster.CreateTopic{Name: "gone", ID: cluster.TopicID(metadata.NewTopicID()), Partitions: onNode(1, 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Propose(ctx, cluster.DeleteTopic{Name: "gone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Propose(ctx, cluster.DeleteTopic{Name: "gone"}); !errors.Is(err, cluster.ErrTopicNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// A TopicBatch: each record's outcome follows from the Before state
	// the member hands back, the same on every member.
	batch := cluster.TopicBatch{Records: []cluster.Record{
		cluster.CreateTopic{Name: "batched", ID: cluster.TopicID(metadata.NewTopicID()), Partitions: onNode(1, 2)},
		create, // orders exists
		cluster.DeleteTopic{Name: "batched"},
	}}
	a, err := m.Propose(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := cluster.ApplyTopicBatch(a.Before, batch); errs[0] != nil || !errors.Is(errs[1], cluster.ErrTopicExists) || errs[2] != nil {
		t.Fatalf("batch outcomes: %v", errs)
	}
	if _, ok := a.After.Topic("batched"); ok {
		t.Fatal("the batch's topic outlived its deletion in the batch")
	}
	first, err := m.Propose(ctx, cluster.AllocateProducerIDs{N: 1000})
	if err != nil {
		t.Fatal(err)
	}
	next, err := m.Propose(ctx, cluster.AllocateProducerIDs{N: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if next.Before.NextProducerID != first.Before.NextProducerID+1000 {
		t.Fatalf("producer id blocks overlap: %d then %d", first.Before.NextProducerID, next.Before.NextProducerID)
	}
	st := m.State()
	if len(st.Topics) != 1 {
		t.Fatalf("topics: %+v", st.Topics)
	}
	got, ok := st.Topic("orders")
	if !ok || got.ID != id || len(got.Partitions) != 4 || got.Configs["retention.ms"] != "2000" || got.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("topic: %+v", got)
	}
	// A state read earlier is a value: later records leave it alone.
	if _, err := m.Propose(ctx, cluster.AlterConfigs{Topic: "orders", Configs: map[string]string{"retention.ms": "3000"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Topic("orders"); got.Configs["retention.ms"] != "2000" || len(got.Configs) != 2 {
		t.Fatalf("a later record changed an earlier state: %+v", got.Configs)
	}
	if got, _ := m.State().Topic("orders"); got.Configs["retention.ms"] != "3000" {
		t.Fatalf("configs after the change: %+v", got.Configs)
	}
}

func TestMemberOneNode(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := metadata.OpenNode(ctx, metadata.Config{NodeID: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	memberContract(t, n)
	clusterID := n.State().ClusterID
	before, err := n.Propose(ctx, cluster.AllocateProducerIDs{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n2, err := metadata.OpenNode(ctx, metadata.Config{NodeID: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	if got := n2.State().ClusterID; got != clusterID {
		t.Fatalf("cluster id changed: %s → %s", clusterID, got)
	}
	if st := n2.State(); len(st.Topics) != 1 || len(st.Topics["orders"].Partitions) != 4 {
		t.Fatalf("topics after reopen: %+v", st.Topics)
	}
	if next, err := n2.Propose(ctx, cluster.AllocateProducerIDs{N: 1}); err != nil || next.Before.NextProducerID != before.Before.NextProducerID+1 {
		t.Fatalf("producer ids after reopen: %d, %v (before %d)", next.Before.NextProducerID, err, before.Before.NextProducerID)
	}
}

func TestMemberThreeNodes(t *testing.T) {
	c := metadatatest.NewCluster(t, 3, metadatatest.Options{Config: func(cfg *metadata.Config) {
		cfg.TickInterval = 50 * time.Millisecond
	}})
	leader := c.WaitLeader(10 * time.Second)
	f := follower(c, leader)
	c.WaitFor("a cluster id", 5*time.Second, func() bool { return c.Node(f).State().ClusterID != "" })
	// The broker on a follower changes metadata through the quorum.
	memberContract(t, c.Node(f))
	// Every node sees the same topics.
	want := c.Node(f).State().Topics["orders"]
	for _, id := range c.IDs() {
		c.WaitFor("the topics on every node", 5*time.Second, func() bool {
			got := c.Node(id).State().Topics
			return len(got) == 1 && len(got["orders"].Partitions) == len(want.Partitions) && got["orders"].ID == want.ID
		})
	}
}
