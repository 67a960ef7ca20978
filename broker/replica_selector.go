package broker

// Follower fetching (KIP-392). With replica.selector.class set to Kafka's
// org.apache.kafka.common.replica.RackAwareReplicaSelector, a partition's
// leader answers a consumer's fetch (v11+) that names its rack
// (client.rack) with the preferred read replica instead of records when
// the leader is on another rack and an in-sync replica is on the
// consumer's: the first such replica in replica order, live and not
// offline. The consumer then fetches from that follower, which serves up
// to its high watermark (followers serve v11+ consumer fetches whatever
// the selector). The default (empty, or Kafka's LeaderSelector) always
// reads from the leader.

import (
	"slices"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// Kafka's replica selector classes.
const (
	leaderSelectorClass    = "org.apache.kafka.common.replica.LeaderSelector"
	rackAwareSelectorClass = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
)

// preferredReadReplica is the follower a consumer on clientRack should
// read p from, when the rack-aware selector is on and there is one.
func (s *Server) preferredReadReplica(p *partition, clientRack string) (int32, bool) {
	if clientRack == "" || s.conf().ReplicaSelectorClass != rackAwareSelectorClass {
		return 0, false
	}
	st := s.clusterState()
	if st.Brokers[s.cfg.NodeID].Rack == clientRack {
		return 0, false // the leader is in the consumer's rack
	}
	t, ok := st.TopicByID(cluster.TopicID(p.topic.id))
	if !ok || int(p.index) >= len(t.Partitions) {
		return 0, false
	}
	cp := t.Partitions[p.index]
	for _, r := range cp.Replicas {
		if r != s.cfg.NodeID && slices.Contains(cp.ISR, r) && st.LiveReplica(cp, r) && st.Brokers[r].Rack == clientRack {
			return r, true
		}
	}
	return 0, false
}
