package cluster

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Rejection reasons. Each wraps ErrRejected.
var (
	ErrRejected              = errors.New("cluster: record rejected")
	ErrClusterInitialized    = fmt.Errorf("%w: cluster id already set", ErrRejected)
	ErrBrokerNotRegistered   = fmt.Errorf("%w: broker not registered", ErrRejected)
	ErrStaleIncarnation      = fmt.Errorf("%w: stale broker incarnation", ErrRejected)
	ErrTopicExists           = fmt.Errorf("%w: topic already exists", ErrRejected)
	ErrTopicIDExists         = fmt.Errorf("%w: topic id already in use", ErrRejected)
	ErrTopicNotFound         = fmt.Errorf("%w: topic not found", ErrRejected)
	ErrPartitionNotFound     = fmt.Errorf("%w: partition not found", ErrRejected)
	ErrStalePartitionEpoch   = fmt.Errorf("%w: stale partition epoch", ErrRejected)
	ErrFencedLeaderEpoch     = fmt.Errorf("%w: fenced leader epoch", ErrRejected)
	ErrIneligibleReplica     = fmt.Errorf("%w: ineligible replica", ErrRejected)
	ErrInvalidReplicaSubset  = fmt.Errorf("%w: isr is not a subset of the replicas", ErrRejected)
	ErrInvalidLeader         = fmt.Errorf("%w: leader not in the new isr", ErrRejected)
	ErrInsufficientReplicas  = fmt.Errorf("%w: not enough unfenced brokers", ErrRejected)
	ErrReplicaCountDiffering = fmt.Errorf("%w: partitions of one topic must have equal replica counts", ErrRejected)
	// ErrInvalidReplicaAssignment: a reassignment target that is not a list
	// of distinct registered brokers (Kafka's INVALID_REPLICA_ASSIGNMENT).
	ErrInvalidReplicaAssignment = fmt.Errorf("%w: invalid replica assignment", ErrRejected)
	// ErrNoReassignmentInProgress: a cancel of a partition that is not
	// being reassigned (Kafka's NO_REASSIGNMENT_IN_PROGRESS).
	ErrNoReassignmentInProgress = fmt.Errorf("%w: no reassignment in progress", ErrRejected)
)

// Apply returns the state after rec. On error the returned state is s,
// unchanged. Apply is deterministic: it reads nothing but s and rec.
func Apply(s State, rec Record) (State, error) {
	if rec == nil {
		return s, invalid("nil record")
	}
	if err := rec.Validate(); err != nil {
		return s, err
	}
	var (
		next State
		err  error
	)
	switch r := rec.(type) {
	case InitCluster:
		next, err = applyInitCluster(s, r)
	case RegisterBroker:
		next, err = applyRegisterBroker(s, r)
	case BrokerHeartbeat:
		next, err = applyHeartbeat(s, r)
	case FenceBroker:
		next, err = applyFence(s, r.NodeID)
	case BrokerUnreachable:
		next, err = applyUnreachable(s, r)
	case UnfenceBroker:
		next, err = applyUnfence(s, r.NodeID)
	case CreateTopic:
		next, err = applyCreateTopic(s, r)
	case DeleteTopic:
		next, err = applyDeleteTopic(s, r)
	case CreatePartitions:
		next, err = applyCreatePartitions(s, r)
	case AlterConfigs:
		next, err = applyAlterConfigs(s, r)
	case AlterPartition:
		next, err = applyAlterPartition(s, r)
	case ElectLeader:
		next, err = applyElectLeader(s, r)
	case AllocateProducerIDs:
		next = s
		next.NextProducerID += r.N
	case ControlledShutdown:
		next, err = applyControlledShutdown(s, r)
	case ReassignPartition:
		next, err = applyReassignPartition(s, r)
	case UpdateFeatures:
		next, err = applyUpdateFeatures(s, r)
	case AlterScramCredentials:
		next = applyAlterScram(s, r)
	case CreateACLs:
		next = applyACLs(s, r.Bindings, nil)
	case DeleteACLs:
		next = applyACLs(s, nil, r.Bindings)
	case AlterClientQuotas:
		next = applyAlterClientQuotas(s, r)
	case AlterClientMetrics:
		next = applyAlterClientMetrics(s, r)
	case AlterResourceConfigs:
		next = applyAlterResourceConfigs(s, r)
	case SetControllers:
		next = applySetControllers(s, r)
	case OfflineReplicas:
		next, err = applyOfflineReplicas(s, r)
	case UpdateController:
		next, err = applyUpdateController(s, r)
	case TopicBatch:
		next, _ = ApplyTopicBatch(s, r)
	default:
		return s, invalid("unknown record %T", rec)
	}
	if err != nil {
		return s, err
	}
	return next, nil
}

// ApplyAll applies records in order and stops at the first rejection.
func ApplyAll(s State, recs ...Record) (State, error) {
	for i, r := range recs {
		var err error
		if s, err = Apply(s, r); err != nil {
			return s, fmt.Errorf("record %d (%T): %w", i, r, err)
		}
	}
	return s, nil
}

func applyInitCluster(s State, r InitCluster) (State, error) {
	if s.ClusterID == r.ClusterID {
		return s, nil
	}
	if s.ClusterID != "" {
		return s, fmt.Errorf("%w: %s", ErrClusterInitialized, s.ClusterID)
	}
	s.ClusterID = r.ClusterID
	return s, nil
}

// withBroker returns s with a private Brokers map holding b.
func withBroker(s State, b Broker) State {
	brokers := maps.Clone(s.Brokers)
	if brokers == nil {
		brokers = map[int32]Broker{}
	}
	brokers[b.NodeID] = b
	s.Brokers = brokers
	return s
}

func applyRegisterBroker(s State, r RegisterBroker) (State, error) {
	old, known := s.Brokers[r.NodeID]
	if known && old.IncarnationID != r.IncarnationID {
		// A new process on this node: its log may be behind, so the old
		// incarnation leaves the ISRs and its leaderships first.
		s = clearOfflineReplicas(fenceReplicas(s, r.NodeID), r.NodeID)
	}
	// A new incarnation starts eligible (ShuttingDown clear).
	b := Broker{NodeID: r.NodeID, IncarnationID: r.IncarnationID, Addr: r.Addr, Rack: r.Rack, Endpoints: r.Endpoints, LastHeartbeatMs: r.TimeMs}
	if known && old.IncarnationID == r.IncarnationID {
		b.Fenced = old.Fenced
		b.ShuttingDown = old.ShuttingDown
		b.LastHeartbeatMs = max(old.LastHeartbeatMs, r.TimeMs)
	}
	return withBroker(s, b), nil
}

// registered returns the broker node when inc is its registered
// incarnation; what names the request in the error.
func registered(s State, node int32, inc, what string) (Broker, error) {
	b, ok := s.Brokers[node]
	if !ok {
		return b, fmt.Errorf("%w: %d", ErrBrokerNotRegistered, node)
	}
	if b.IncarnationID != inc {
		return b, fmt.Errorf("%w: broker %d is %s, %s from %s", ErrStaleIncarnation, node, b.IncarnationID, what, inc)
	}
	return b, nil
}

func applyHeartbeat(s State, r BrokerHeartbeat) (State, error) {
	b, err := registered(s, r.NodeID, r.IncarnationID, "heartbeat")
	if err != nil {
		return s, err
	}
	if r.TimeMs <= b.LastHeartbeatMs {
		return s, nil
	}
	b.LastHeartbeatMs = r.TimeMs
	return withBroker(s, b), nil
}

func applyFence(s State, node int32) (State, error) {
	b, ok := s.Brokers[node]
	if !ok {
		return s, fmt.Errorf("%w: %d", ErrBrokerNotRegistered, node)
	}
	if b.Fenced {
		return s, nil
	}
	b.Fenced = true
	if b.Refused() {
		b.RefusalFenced = true
	}
	return fenceReplicas(withBroker(s, b), node), nil
}

// applyUnreachable records a refused connection to the broker's current
// incarnation; a report of an old incarnation is rejected, one no newer
// than its last heartbeat, or of a fenced or already refusal-fenced
// broker, changes nothing.
func applyUnreachable(s State, r BrokerUnreachable) (State, error) {
	b, ok := s.Brokers[r.NodeID]
	if !ok {
		return s, fmt.Errorf("%w: %d", ErrBrokerNotRegistered, r.NodeID)
	}
	if b.IncarnationID != r.IncarnationID {
		return s, fmt.Errorf("%w: broker %d is %s, refusal reported for %s", ErrStaleIncarnation, r.NodeID, b.IncarnationID, r.IncarnationID)
	}
	if b.Fenced || b.RefusalFenced || r.TimeMs <= b.LastHeartbeatMs || r.TimeMs <= b.UnreachableMs {
		return s, nil
	}
	b.UnreachableMs = r.TimeMs
	return withBroker(s, b), nil
}

func applyUnfence(s State, node int32) (State, error) {
	b, ok := s.Brokers[node]
	if !ok {
		return s, fmt.Errorf("%w: %d", ErrBrokerNotRegistered, node)
	}
	if !b.Fenced {
		return s, nil
	}
	b.Fenced = false
	return withBroker(s, b), nil
}

// fenceReplicas removes node from every ISR it is in (unless it is the last
// member) and moves its leaderships to another eligible ISR member, or to
// no leader. node must already count as not live in s (or be about to be
// re-registered).
func fenceReplicas(s State, node int32) State { return moveReplicasOff(s, node, false) }

// applyControlledShutdown marks the broker ShuttingDown and moves its ISR
// places and leaderships off it, except where it is the only ISR member
// able to lead.
func applyControlledShutdown(s State, r ControlledShutdown) (State, error) {
	b, err := registered(s, r.NodeID, r.IncarnationID, "shutdown request")
	if err != nil {
		return s, err
	}
	if !b.ShuttingDown {
		b.ShuttingDown = true
		s = withBroker(s, b)
	}
	// Run again on a repeated request: an ISR member may have become
	// eligible to take over a leadership the node kept.
	return moveReplicasOff(s, r.NodeID, true), nil
}

// moveReplicasOff removes node from every ISR it is in (unless it is the
// last member) and moves its leaderships to the first eligible ISR member
// in replica order. With none, a fenced node's leadership goes to no
// leader; with keepLast (controlled shutdown) the node keeps the
// leadership and its ISR place instead, and unchanged partitions are left
// alone.
func moveReplicasOff(s State, node int32, keepLast bool) State {
	var changed []Topic
	for _, t := range s.Topics {
		var parts []Partition // cloned on the first change
		for i, p := range t.Partitions {
			inISR := slices.Contains(p.ISR, node)
			if !inISR && p.Leader != node {
				continue
			}
			np := p
			if p.Leader == node {
				np.Leader = NoLeader
				for _, r := range np.Replicas {
					if r != node && slices.Contains(np.ISR, r) && s.EligibleReplica(np, r) {
						np.Leader = r
						break
					}
				}
				if np.Leader == NoLeader && keepLast {
					continue
				}
			}
			if inISR && len(p.ISR) > 1 {
				np.ISR = without(p.ISR, node)
			}
			if keepLast && np.Leader == p.Leader && slices.Equal(np.ISR, p.ISR) {
				continue
			}
			if parts == nil {
				parts = slices.Clone(t.Partitions)
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

// bumpEpochs returns np with the partition epoch bumped relative to old,
// and the leader epoch too when the leader changed.
func bumpEpochs(old, np Partition) Partition {
	np.PartitionEpoch = old.PartitionEpoch + 1
	np.LeaderEpoch = old.LeaderEpoch
	if np.Leader != old.Leader {
		np.LeaderEpoch = old.LeaderEpoch + 1
	}
	return np
}

// setPartition stores np as partition i of topic name, bumping its epochs
// relative to old.
func setPartition(s State, name string, i int, old, np Partition) State {
	t := s.Topics[name]
	t.Partitions = slices.Clone(t.Partitions)
	t.Partitions[i] = bumpEpochs(old, np)
	return withTopics(s, t)
}

// withTopics returns s with private topic maps holding ts.
func withTopics(s State, ts ...Topic) State {
	if len(ts) == 0 {
		return s
	}
	topics := maps.Clone(s.Topics)
	if topics == nil {
		topics = map[string]Topic{}
	}
	ids := maps.Clone(s.TopicIDs)
	if ids == nil {
		ids = map[TopicID]string{}
	}
	for _, t := range ts {
		topics[t.Name] = t
		ids[t.ID] = t.Name
	}
	s.Topics, s.TopicIDs = topics, ids
	return s
}

func without(ids []int32, node int32) []int32 {
	out := make([]int32, 0, len(ids))
	for _, id := range ids {
		if id != node {
			out = append(out, id)
		}
	}
	return out
}

// newPartitions builds the state of freshly assigned partitions: the ISR is
// every replica, the leader the first eligible replica.
func newPartitions(s State, parts []PartitionAssignment) []Partition {
	out := make([]Partition, len(parts))
	for i, a := range parts {
		p := Partition{Replicas: slices.Clone(a.Replicas), ISR: slices.Clone(a.Replicas), Leader: NoLeader}
		for _, r := range a.Replicas {
			if s.Eligible(r) {
				p.Leader = r
				break
			}
		}
		out[i] = p
	}
	return out
}

func applyCreateTopic(s State, r CreateTopic) (State, error) {
	t, err := createdTopic(s, r)
	if err != nil {
		return s, err
	}
	return withTopics(s, t), nil
}

// createdTopic is the topic r creates in s, or why s does not allow it.
// It does not change s (applyCreateTopic and ApplyTopicBatch store it).
func createdTopic(s State, r CreateTopic) (Topic, error) {
	if _, ok := s.Topics[r.Name]; ok {
		return Topic{}, fmt.Errorf("%w: %s", ErrTopicExists, r.Name)
	}
	if other, ok := s.TopicIDs[r.ID]; ok {
		return Topic{}, fmt.Errorf("%w: %s is used by %s", ErrTopicIDExists, r.ID, other)
	}
	rf := len(r.Partitions[0].Replicas)
	for _, p := range r.Partitions {
		if len(p.Replicas) != rf {
			return Topic{}, fmt.Errorf("%w: topic %s", ErrReplicaCountDiffering, r.Name)
		}
	}
	return Topic{Name: r.Name, ID: r.ID, Partitions: newPartitions(s, r.Partitions), Configs: maps.Clone(r.Configs)}, nil
}

func applyDeleteTopic(s State, r DeleteTopic) (State, error) {
	t, err := topicToDelete(s, r)
	if err != nil {
		return s, err
	}
	topics := maps.Clone(s.Topics)
	ids := maps.Clone(s.TopicIDs)
	delete(topics, t.Name)
	delete(ids, t.ID)
	s.Topics, s.TopicIDs = topics, ids
	return s, nil
}

// topicToDelete is the topic r deletes from s, or ErrTopicNotFound.
func topicToDelete(s State, r DeleteTopic) (Topic, error) {
	t, ok := s.Topics[r.Name]
	if !ok || (r.ID != (TopicID{}) && r.ID != t.ID) {
		return Topic{}, fmt.Errorf("%w: %s", ErrTopicNotFound, r.Name)
	}
	return t, nil
}

func applyCreatePartitions(s State, r CreatePartitions) (State, error) {
	t, err := grownTopic(s, r)
	if err != nil {
		return s, err
	}
	return withTopics(s, t), nil
}

// grownTopic is r's topic with the new partitions, or why s does not
// allow them. It does not change s.
func grownTopic(s State, r CreatePartitions) (Topic, error) {
	t, ok := s.Topics[r.Topic]
	if !ok {
		return Topic{}, fmt.Errorf("%w: %s", ErrTopicNotFound, r.Topic)
	}
	// The replica count a reassignment of partition 0 is heading for.
	rf := len(t.Partitions[0].TargetReplicas())
	for _, p := range r.Partitions {
		if len(p.Replicas) != rf {
			return Topic{}, fmt.Errorf("%w: topic %s", ErrReplicaCountDiffering, r.Topic)
		}
	}
	t.Partitions = append(slices.Clone(t.Partitions), newPartitions(s, r.Partitions)...)
	return t, nil
}

func applyAlterConfigs(s State, r AlterConfigs) (State, error) {
	t, ok := s.Topics[r.Topic]
	if !ok {
		return s, fmt.Errorf("%w: %s", ErrTopicNotFound, r.Topic)
	}
	t.Configs = maps.Clone(r.Configs)
	return withTopics(s, t), nil
}

func lookupPartition(s State, topic string, partition int32) (Partition, error) {
	t, ok := s.Topics[topic]
	if !ok {
		return Partition{}, fmt.Errorf("%w: %s", ErrTopicNotFound, topic)
	}
	if int(partition) >= len(t.Partitions) {
		return Partition{}, fmt.Errorf("%w: %s-%d", ErrPartitionNotFound, topic, partition)
	}
	return t.Partitions[partition], nil
}

func applyAlterPartition(s State, r AlterPartition) (State, error) {
	p, err := lookupPartition(s, r.Topic, r.Partition)
	if err != nil {
		return s, err
	}
	if r.PartitionEpoch != p.PartitionEpoch {
		return s, fmt.Errorf("%w: %s-%d is at partition epoch %d, request has %d", ErrStalePartitionEpoch, r.Topic, r.Partition, p.PartitionEpoch, r.PartitionEpoch)
	}
	if r.LeaderEpoch != -1 && r.LeaderEpoch != p.LeaderEpoch {
		return s, fmt.Errorf("%w: %s-%d is at leader epoch %d, request has %d", ErrFencedLeaderEpoch, r.Topic, r.Partition, p.LeaderEpoch, r.LeaderEpoch)
	}
	for _, id := range r.NewISR {
		if !slices.Contains(p.Replicas, id) {
			return s, fmt.Errorf("%w: %s-%d: %d", ErrInvalidReplicaSubset, r.Topic, r.Partition, id)
		}
		if !slices.Contains(p.ISR, id) && !s.EligibleReplica(p, id) {
			return s, fmt.Errorf("%w: %s-%d: broker %d is fenced, shutting down, unknown or its replica is offline", ErrIneligibleReplica, r.Topic, r.Partition, id)
		}
	}
	np := p
	np.ISR = slices.Clone(r.NewISR)
	switch {
	case r.Leader != nil && *r.Leader == NoLeader:
		np.Leader = NoLeader
	case r.Leader != nil:
		if !slices.Contains(r.NewISR, *r.Leader) {
			return s, fmt.Errorf("%w: %s-%d: %d", ErrInvalidLeader, r.Topic, r.Partition, *r.Leader)
		}
		// The current leader may stay while live; a new one must be eligible.
		if (*r.Leader == p.Leader && !s.LiveReplica(p, *r.Leader)) || (*r.Leader != p.Leader && !s.EligibleReplica(p, *r.Leader)) {
			return s, fmt.Errorf("%w: %s-%d: leader %d is fenced, shutting down or unknown", ErrIneligibleReplica, r.Topic, r.Partition, *r.Leader)
		}
		np.Leader = *r.Leader
	case !slices.Contains(np.ISR, p.Leader):
		np.Leader, _ = chooseLeader(s, np, false, false, false)
	}
	np = maybeCompleteReassignment(s, np)
	return setPartition(s, r.Topic, int(r.Partition), p, np), nil
}

// chooseLeader picks the leader an election yields on p, and whether the
// ISR must become just that leader (an unclean election). Only eligible
// brokers are picked, except that a live current leader in the ISR that is
// shutting down keeps the leadership while no eligible ISR member exists.
func chooseLeader(s State, p Partition, preferred, unclean, keepCurrent bool) (leader int32, uncleanPick bool) {
	if preferred && len(p.Replicas) > 0 {
		first := p.Replicas[0]
		if slices.Contains(p.ISR, first) && s.EligibleReplica(p, first) {
			return first, false
		}
	}
	currentInISR := p.Leader != NoLeader && slices.Contains(p.ISR, p.Leader)
	if keepCurrent && currentInISR && s.EligibleReplica(p, p.Leader) {
		return p.Leader, false
	}
	for _, r := range p.Replicas {
		if slices.Contains(p.ISR, r) && s.EligibleReplica(p, r) {
			return r, false
		}
	}
	if currentInISR && s.LiveReplica(p, p.Leader) {
		return p.Leader, false
	}
	if unclean {
		for _, r := range p.Replicas {
			if s.EligibleReplica(p, r) {
				return r, true
			}
		}
	}
	return NoLeader, false
}

// electionOutcome is what ElectLeader r would make of the partition, and
// whether that differs from now.
func electionOutcome(s State, t Topic, r ElectLeader) (Partition, Partition, bool, error) {
	if int(r.Partition) >= len(t.Partitions) {
		return Partition{}, Partition{}, false, fmt.Errorf("%w: %s-%d", ErrPartitionNotFound, r.Topic, r.Partition)
	}
	p := t.Partitions[r.Partition]
	unclean := r.Unclean || t.Configs[UncleanLeaderElectionConfig] == "true"
	leader, uncleanPick := chooseLeader(s, p, r.Preferred, unclean, true)
	np := p
	np.Leader = leader
	if uncleanPick {
		np.ISR = []int32{leader}
	}
	np = maybeCompleteReassignment(s, np)
	changed := np.Leader != p.Leader || !slices.Equal(np.ISR, p.ISR) || !slices.Equal(np.Replicas, p.Replicas) ||
		np.Reassigning() != p.Reassigning()
	return p, np, changed, nil
}

func applyElectLeader(s State, r ElectLeader) (State, error) {
	t, ok := s.Topics[r.Topic]
	if !ok {
		return s, fmt.Errorf("%w: %s", ErrTopicNotFound, r.Topic)
	}
	p, np, changed, err := electionOutcome(s, t, r)
	if err != nil || !changed {
		return s, err
	}
	return setPartition(s, r.Topic, int(r.Partition), p, np), nil
}

// applyReassignPartition starts, replaces or (with an empty target)
// cancels a reassignment; see ReassignPartition.
func applyReassignPartition(s State, r ReassignPartition) (State, error) {
	p, err := lookupPartition(s, r.Topic, r.Partition)
	if err != nil {
		return s, err
	}
	if len(r.Target) == 0 {
		if !p.Reassigning() {
			return s, fmt.Errorf("%w: %s-%d", ErrNoReassignmentInProgress, r.Topic, r.Partition)
		}
		return setPartition(s, r.Topic, int(r.Partition), p, revertReassignment(s, p)), nil
	}
	for _, id := range r.Target {
		if _, ok := s.Brokers[id]; !ok {
			return s, fmt.Errorf("%w: %s-%d: broker %d is not registered", ErrInvalidReplicaAssignment, r.Topic, r.Partition, id)
		}
	}
	np := p
	if np.Reassigning() {
		np = revertReassignment(s, np)
	}
	original := np.Replicas
	np.Replicas = slices.Clone(r.Target)
	np.AddingReplicas, np.RemovingReplicas = nil, nil
	for _, id := range r.Target {
		if !slices.Contains(original, id) {
			np.AddingReplicas = append(np.AddingReplicas, id)
		}
	}
	for _, id := range original {
		if !slices.Contains(r.Target, id) {
			np.Replicas = append(np.Replicas, id)
			np.RemovingReplicas = append(np.RemovingReplicas, id)
		}
	}
	np = maybeCompleteReassignment(s, np)
	return setPartition(s, r.Topic, int(r.Partition), p, np), nil
}

// revertReassignment returns p with its reassignment cancelled: the replicas
// are the original ones (Replicas without AddingReplicas) and the ISR keeps
// its original members. Should no original replica be in the ISR, the ISR
// keeps its first member (the leader if there is one), which then also
// stays a replica: the data is never left without an in-sync copy.
func revertReassignment(s State, p Partition) Partition {
	np := p
	np.Replicas = nil
	for _, id := range p.Replicas {
		if !slices.Contains(p.AddingReplicas, id) {
			np.Replicas = append(np.Replicas, id)
		}
	}
	np.ISR = intersect(p.ISR, np.Replicas)
	if len(np.ISR) == 0 {
		keep := p.ISR[0]
		if p.Leader != NoLeader {
			keep = p.Leader
		}
		np.ISR = []int32{keep}
		np.Replicas = append(np.Replicas, keep)
	}
	np.AddingReplicas, np.RemovingReplicas = nil, nil
	if !slices.Contains(np.ISR, np.Leader) {
		np.Leader, _ = chooseLeader(s, np, false, false, false)
	}
	return np
}

// maybeCompleteReassignment completes p's reassignment when every added
// replica is in the ISR: the replicas become the target, the ISR loses the
// removed replicas and a removed leader is replaced by the first eligible
// remaining ISR member in replica order. It waits while that would empty
// the ISR or leave no eligible leader in place of a removed one. p is
// returned unchanged when nothing completes.
func maybeCompleteReassignment(s State, p Partition) Partition {
	if !p.Reassigning() {
		return p
	}
	for _, id := range p.AddingReplicas {
		if !slices.Contains(p.ISR, id) {
			return p
		}
	}
	np := p
	np.Replicas = p.TargetReplicas()
	np.ISR = intersect(p.ISR, np.Replicas)
	if len(np.ISR) == 0 {
		return p
	}
	if p.Leader != NoLeader && !slices.Contains(np.ISR, p.Leader) {
		np.Leader, _ = chooseLeader(s, np, false, false, false)
		if np.Leader == NoLeader {
			return p
		}
	}
	np.AddingReplicas, np.RemovingReplicas = nil, nil
	return np
}

// intersect returns the members of a that are in b, in a's order.
func intersect(a, b []int32) []int32 {
	out := make([]int32, 0, len(a))
	for _, id := range a {
		if slices.Contains(b, id) {
			out = append(out, id)
		}
	}
	return out
}
