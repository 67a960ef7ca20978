package cluster

import (
	"fmt"
	"slices"
)

// PlanAssignment assigns replicas for n new partitions with rf replicas
// each over the eligible brokers of s (unfenced, not shutting down), spreading preferred leaders and
// replicas evenly: each partition's preferred leader is the broker leading
// the fewest partitions so far (counting the existing topics), and its
// followers are the brokers holding the fewest replicas, taken from racks
// the partition does not use yet while there are any (when brokers
// registered a rack). Ties go to the lower node id. Deterministic.
func PlanAssignment(s State, n, rf int) ([]PartitionAssignment, error) {
	return NewAssigner(s).Plan(n, rf)
}

// Assigner plans the partitions of several new topics (one admin request)
// against one state: it counts the existing leaders and replicas once,
// and each Plan or Count adds to the counts, so later topics of the batch
// spread around the earlier ones as if those had been applied.
type Assigner struct {
	s        State
	live     []int32
	leaders  map[int32]int
	replicas map[int32]int
}

// NewAssigner counts the preferred leaders and replicas of s's topics.
func NewAssigner(s State) *Assigner {
	a := &Assigner{s: s, leaders: map[int32]int{}, replicas: map[int32]int{}}
	for _, id := range s.BrokerIDs() {
		if s.Eligible(id) {
			a.live = append(a.live, id)
		}
	}
	for _, t := range s.Topics {
		for _, p := range t.Partitions {
			a.Count(p.Replicas)
		}
	}
	return a
}

// Count adds one partition placed elsewhere (a manual assignment) to the
// counts.
func (a *Assigner) Count(replicas []int32) {
	if len(replicas) > 0 {
		a.leaders[replicas[0]]++
	}
	for _, r := range replicas {
		a.replicas[r]++
	}
}

// Plan is PlanAssignment against the counts so far; it adds what it
// plans to them.
func (a *Assigner) Plan(n, rf int) ([]PartitionAssignment, error) {
	if n <= 0 || rf <= 0 {
		return nil, invalid("assignment of %d partitions with replication factor %d", n, rf)
	}
	s, live, leaders, replicas := a.s, a.live, a.leaders, a.replicas
	if rf > len(live) {
		return nil, fmt.Errorf("%w: replication factor %d, %d eligible brokers", ErrInsufficientReplicas, rf, len(live))
	}
	out := make([]PartitionAssignment, n)
	for i := range out {
		chosen := make([]int32, 0, rf)
		racks := map[string]bool{}
		pick := func(score func(int32) [2]int) {
			best := int32(-1)
			var bestScore [3]int
			for _, id := range live {
				if slices.Contains(chosen, id) {
					continue
				}
				rackUsed := 0
				if rack := s.Brokers[id].Rack; rack != "" && racks[rack] {
					rackUsed = 1
				}
				sc := score(id)
				cand := [3]int{rackUsed, sc[0], sc[1]}
				if best == -1 || less3(cand, bestScore) {
					best, bestScore = id, cand
				}
			}
			chosen = append(chosen, best)
			racks[s.Brokers[best].Rack] = true
		}
		pick(func(id int32) [2]int { return [2]int{leaders[id], replicas[id]} })
		for len(chosen) < rf {
			pick(func(id int32) [2]int { return [2]int{replicas[id], leaders[id]} })
		}
		leaders[chosen[0]]++
		for _, id := range chosen {
			replicas[id]++
		}
		out[i] = PartitionAssignment{Replicas: chosen}
	}
	return out, nil
}

func less3(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// PlanFencing returns the records the active controller proposes at nowMs:
// FenceBroker for every unfenced broker whose last heartbeat is more than
// sessionTimeoutMs old (broker.session.timeout.ms) or against which a
// refused connection counts (Broker.Refused: its process is not running),
// UnfenceBroker for every fenced broker that has heartbeated since and
// has no refusal counting against it. In node id order.
func PlanFencing(s State, nowMs, sessionTimeoutMs int64) []Record {
	var out []Record
	for _, id := range s.BrokerIDs() {
		b := s.Brokers[id]
		stale := nowMs-b.LastHeartbeatMs > sessionTimeoutMs
		refused := b.UnreachableMs > b.LastHeartbeatMs && (b.Fenced || !b.RefusalFenced)
		switch {
		case (stale || refused) && !b.Fenced:
			out = append(out, FenceBroker{NodeID: id})
		case !stale && !refused && b.Fenced:
			out = append(out, UnfenceBroker{NodeID: id})
		}
	}
	return out
}

// PlanElections returns an ElectLeader for every partition whose leader is
// missing or no longer eligible (fenced, shutting down, out of the ISR) and
// for which an election would change something: an eligible ISR member
// exists, or unclean election is enabled for the topic and an eligible
// replica exists. It also returns one for a partition whose reassignment
// was waiting for an eligible leader and can now complete. In topic,
// partition order.
func PlanElections(s State) []Record {
	var out []Record
	for _, name := range s.TopicNames() {
		t := s.Topics[name]
		for i := range t.Partitions {
			r := ElectLeader{Topic: name, Partition: int32(i)}
			if _, _, changed, err := electionOutcome(s, t, r); err == nil && changed {
				out = append(out, r)
			}
		}
	}
	return out
}

// PlanPreferredElections returns a preferred ElectLeader for every
// partition whose leader is not its first replica while that replica is
// eligible and in the ISR: the automatic leader rebalance
// (auto.leader.rebalance.enable) that gives leaderships back to a broker
// after it returns. Unlike Kafka it ignores
// leader.imbalance.per.broker.percentage and restores every partition. In
// topic, partition order.
func PlanPreferredElections(s State) []Record {
	var out []Record
	for _, name := range s.TopicNames() {
		for i, p := range s.Topics[name].Partitions {
			if len(p.Replicas) == 0 {
				continue
			}
			first := p.Replicas[0]
			if p.Leader != first && s.EligibleReplica(p, first) && slices.Contains(p.ISR, first) {
				out = append(out, ElectLeader{Topic: name, Partition: int32(i), Preferred: true})
			}
		}
	}
	return out
}
