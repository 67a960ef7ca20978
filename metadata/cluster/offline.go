package cluster

import "slices"

// OfflineReplicas reports replicas of a node whose log directory failed
// (what a Kafka broker's heartbeat says with its offline log dirs,
// KIP-858). Each listed replica becomes one of its partition's
// OfflineReplicas: it leaves the ISR (unless it is the last member, as a
// fenced broker does) and its leadership goes to the first other eligible
// ISR member in replica order, or to no leader. It takes no leadership or
// ISR place again until the node registers a new incarnation (a restart,
// after which the node reports again whatever is still offline).
// Rejected unless IncarnationID is the registered incarnation; partitions
// of topics deleted since, or not replicated on the node, are ignored.
type OfflineReplicas struct {
	NodeID        int32        `json:"node_id"`
	IncarnationID string       `json:"incarnation_id"`
	Partitions    []ReplicaRef `json:"partitions"`
}

// ReplicaRef names one partition by topic id (a topic deleted and created
// again under the same name is another topic).
type ReplicaRef struct {
	TopicID   TopicID `json:"topic_id"`
	Partition int32   `json:"partition"`
}

// TypeOfflineReplicas is OfflineReplicas' type byte.
const TypeOfflineReplicas RecordType = 23

// maxOfflineReplicas bounds one OfflineReplicas record (a node reports a
// large failed directory in several).
const maxOfflineReplicas = 20000

// Type implements Record.
func (OfflineReplicas) Type() RecordType { return TypeOfflineReplicas }

// Validate implements Record.
func (r OfflineReplicas) Validate() error {
	if r.NodeID < 0 {
		return invalid("node id %d", r.NodeID)
	}
	if r.IncarnationID == "" {
		return invalid("empty incarnation id")
	}
	if len(r.Partitions) == 0 || len(r.Partitions) > maxOfflineReplicas {
		return invalid("%d partitions (1 to %d)", len(r.Partitions), maxOfflineReplicas)
	}
	for _, p := range r.Partitions {
		if p.Partition < 0 {
			return invalid("partition %d", p.Partition)
		}
	}
	return nil
}

// EligibleReplica reports whether node may lead p or take a new place in
// its ISR: the broker is eligible and its replica of p is not offline.
func (s State) EligibleReplica(p Partition, node int32) bool {
	return s.Eligible(node) && !slices.Contains(p.OfflineReplicas, node)
}

// LiveReplica reports whether node's replica of p can serve: the broker
// is live and the replica is not offline.
func (s State) LiveReplica(p Partition, node int32) bool {
	return s.Live(node) && !slices.Contains(p.OfflineReplicas, node)
}

func applyOfflineReplicas(s State, r OfflineReplicas) (State, error) {
	if _, err := registered(s, r.NodeID, r.IncarnationID, "offline replicas"); err != nil {
		return s, err
	}
	changed := map[string]Topic{}
	for _, ref := range r.Partitions {
		name, ok := s.TopicIDs[ref.TopicID]
		if !ok {
			continue
		}
		t, seen := changed[name]
		if !seen {
			t = s.Topics[name]
		}
		if int(ref.Partition) >= len(t.Partitions) {
			continue
		}
		p := t.Partitions[ref.Partition]
		if !slices.Contains(p.Replicas, r.NodeID) || slices.Contains(p.OfflineReplicas, r.NodeID) {
			continue
		}
		np := p
		np.OfflineReplicas = append(slices.Clone(p.OfflineReplicas), r.NodeID)
		slices.Sort(np.OfflineReplicas)
		if slices.Contains(p.ISR, r.NodeID) && len(p.ISR) > 1 {
			np.ISR = without(p.ISR, r.NodeID)
		}
		if p.Leader == r.NodeID {
			np.Leader = NoLeader
			for _, id := range np.Replicas {
				if slices.Contains(np.ISR, id) && s.EligibleReplica(np, id) {
					np.Leader = id
					break
				}
			}
		}
		if !seen {
			t.Partitions = slices.Clone(t.Partitions)
		}
		t.Partitions[ref.Partition] = bumpEpochs(p, np)
		changed[name] = t
	}
	ts := make([]Topic, 0, len(changed))
	for _, t := range changed {
		ts = append(ts, t)
	}
	return withTopics(s, ts...), nil
}

// clearOfflineReplicas forgets node's offline replicas: a new incarnation
// has opened its log directories again.
func clearOfflineReplicas(s State, node int32) State {
	var changed []Topic
	for _, t := range s.Topics {
		var parts []Partition
		for i, p := range t.Partitions {
			if !slices.Contains(p.OfflineReplicas, node) {
				continue
			}
			if parts == nil {
				parts = slices.Clone(t.Partitions)
			}
			np := p
			np.OfflineReplicas = without(p.OfflineReplicas, node)
			if len(np.OfflineReplicas) == 0 {
				np.OfflineReplicas = nil
			}
			parts[i] = bumpEpochs(p, np)
		}
		if parts != nil {
			t.Partitions = parts
			changed = append(changed, t)
		}
	}
	return withTopics(s, changed...)
}
