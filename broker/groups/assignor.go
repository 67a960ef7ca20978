package groups

import (
	"sort"
)

// Server-side assignors of the consumer protocol (KIP-848), named as
// Kafka names them. Each maps every partition of the subscribed topics to
// exactly one member subscribed to its topic.

// Assignor names.
const (
	UniformAssignor = "uniform"
	RangeAssignor   = "range"
)

// assignorSpec is the input of an assignor: each member's subscribed
// topics, the partition counts of those topics, and the previous target
// (for stickiness).
type assignorSpec struct {
	members    []string // sorted member ids
	subscribed map[string][]string
	partitions map[string]int32
	previous   map[string]map[TopicPartition]bool
}

type assignment map[string]map[TopicPartition]bool

func knownAssignor(name string) bool { return name == UniformAssignor || name == RangeAssignor }

func assign(name string, spec assignorSpec) assignment {
	if name == RangeAssignor {
		return assignRange(spec)
	}
	return assignUniform(spec)
}

// topicSubscribers lists, per topic, its subscribers in member-id order.
func (spec assignorSpec) topicSubscribers() (topics []string, subscribers map[string][]string) {
	subscribers = map[string][]string{}
	for _, id := range spec.members {
		for _, t := range spec.subscribed[id] {
			if _, ok := spec.partitions[t]; ok {
				subscribers[t] = append(subscribers[t], id)
			}
		}
	}
	for t := range subscribers {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	return topics, subscribers
}

func newAssignment(members []string) assignment {
	out := assignment{}
	for _, id := range members {
		out[id] = map[TopicPartition]bool{}
	}
	return out
}

// assignRange gives each topic's subscribers contiguous ranges of its
// partitions, the first ones one extra partition when they do not divide
// evenly (the classic RangeAssignor, per topic).
func assignRange(spec assignorSpec) assignment {
	out := newAssignment(spec.members)
	topics, subscribers := spec.topicSubscribers()
	for _, t := range topics {
		subs := subscribers[t]
		n := spec.partitions[t]
		per, extra := n/int32(len(subs)), n%int32(len(subs))
		var next int32
		for i, id := range subs {
			count := per
			if int32(i) < extra {
				count++
			}
			for range count {
				out[id][TopicPartition{Topic: t, Partition: next}] = true
				next++
			}
		}
	}
	return out
}

// assignUniform spreads all partitions evenly over the members, keeping
// each member's previous partitions up to its fair share, then handing the
// rest to the least-loaded subscribed member.
func assignUniform(spec assignorSpec) assignment {
	out := newAssignment(spec.members)
	topics, subscribers := spec.topicSubscribers()
	// The most constrained topics (fewest subscribers) are placed first.
	sort.SliceStable(topics, func(i, j int) bool { return len(subscribers[topics[i]]) < len(subscribers[topics[j]]) })
	var all []TopicPartition
	for _, t := range topics {
		for p := range spec.partitions[t] {
			all = append(all, TopicPartition{Topic: t, Partition: p})
		}
	}
	if len(spec.members) == 0 {
		return out
	}
	subscribes := func(id, topic string) bool {
		for _, s := range subscribers[topic] {
			if s == id {
				return true
			}
		}
		return false
	}
	quota := len(all) / len(spec.members)
	extra := len(all) % len(spec.members)
	taken := map[TopicPartition]bool{}
	// Sticky pass: keep previous partitions up to the quota (one more for
	// as many members as there are extra partitions).
	for _, id := range spec.members {
		var kept []TopicPartition
		for tp := range spec.previous[id] {
			if tp.Partition < spec.partitions[tp.Topic] && subscribes(id, tp.Topic) {
				kept = append(kept, tp)
			}
		}
		sortTopicPartitions(kept)
		limit := quota
		if extra > 0 && len(kept) > quota {
			limit++
			extra--
		}
		for _, tp := range kept[:min(limit, len(kept))] {
			out[id][tp] = true
			taken[tp] = true
		}
	}
	for _, tp := range all {
		if taken[tp] {
			continue
		}
		best := ""
		for _, id := range subscribers[tp.Topic] {
			if best == "" || len(out[id]) < len(out[best]) {
				best = id
			}
		}
		out[best][tp] = true
	}
	return out
}

func sortTopicPartitions(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}
