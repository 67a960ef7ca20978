package broker

import (
	"testing"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// TestSameTopicSeesEveryChange: reconcile skips a topic sameTopic calls
// unchanged, so every record that changes a topic must make it differ,
// and records about other topics or brokers must not.
func TestSameTopicSeesEveryChange(t *testing.T) {
	s, err := cluster.ApplyAll(cluster.State{},
		cluster.InitCluster{ClusterID: "c"},
		cluster.RegisterBroker{NodeID: 1, IncarnationID: "i1", Addr: "h:1"},
		cluster.RegisterBroker{NodeID: 2, IncarnationID: "i2", Addr: "h:2"},
		cluster.CreateTopic{Name: "a", ID: cluster.TopicID{1}, Partitions: []cluster.PartitionAssignment{{Replicas: []int32{1, 2}}}},
		cluster.CreateTopic{Name: "b", ID: cluster.TopicID{2}, Partitions: []cluster.PartitionAssignment{{Replicas: []int32{2, 1}}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rec      cluster.Record
		aChanged bool
	}{
		{cluster.AlterPartition{Topic: "a", Partition: 0, PartitionEpoch: 0, LeaderEpoch: -1, NewISR: []int32{1}}, true},
		{cluster.ElectLeader{Topic: "a", Partition: 0, Preferred: true, Unclean: true}, false}, // already the preferred leader
		{cluster.CreatePartitions{Topic: "a", Partitions: []cluster.PartitionAssignment{{Replicas: []int32{1, 2}}}}, true},
		{cluster.AlterConfigs{Topic: "a", Configs: map[string]string{"retention.ms": "1"}}, true},
		{cluster.ReassignPartition{Topic: "a", Partition: 0, Target: []int32{2, 1}}, true},
		{cluster.FenceBroker{NodeID: 1}, true}, // leads a-0
		{cluster.AlterConfigs{Topic: "b", Configs: map[string]string{"retention.ms": "1"}}, false},
		{cluster.BrokerHeartbeat{NodeID: 1, IncarnationID: "i1", TimeMs: 5}, false},
		{cluster.TopicBatch{Records: []cluster.Record{cluster.CreateTopic{Name: "c", ID: cluster.TopicID{3}, Partitions: []cluster.PartitionAssignment{{Replicas: []int32{1}}}}}}, false},
	} {
		next, err := cluster.Apply(s, tc.rec)
		if err != nil {
			t.Fatalf("%T: %v", tc.rec, err)
		}
		if changed := !sameTopic(s.Topics["a"], next.Topics["a"]); changed != tc.aChanged {
			t.Errorf("%T %+v: topic a changed %v, want %v", tc.rec, tc.rec, changed, tc.aChanged)
		}
	}
}
