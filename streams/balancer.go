package streams

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// taskBalancer is the group balancer of Apps with state stores (protocol
// "strata-streams", cooperative). Every member's JoinGroup metadata is a
// kmsg.ConsumerMemberMetadata whose owned partitions say what it holds and
// whose user data lists the tasks it has open stores of (active or
// standby) with their changelog position, the sum of the stores' next
// offsets (Kafka Streams' task offset sums). The leader assigns tasks, a
// task being partition p of one topic or of every topic joined with it:
//
//  1. a member keeps the tasks it owns, up to its fair share (⌊tasks /
//     members⌋, one more for as many members as the remainder allows);
//  2. every other task goes to a member with room, preferring the one whose
//     local copy of it is furthest along its changelog (a standby), then the
//     member with fewer tasks, then the first in member order;
//  3. each stateful task gets NumStandbyReplicas standbys on distinct other
//     members, preferring those with a local copy, then those keeping fewer
//     standbys of the same owner's tasks (so a dead member's tasks find
//     standbys on several members, each with room for one), then the copy
//     furthest along, then fewer standbys, then member order.
//
// Standbys travel in the assignment's user data (the same encoding as the
// metadata's, offsets zero), so each member learns its own from SyncGroup
// and no member has to compute anything; the placement is deterministic
// given the members' metadata. Partitions moving between members are first
// revoked (kgo.BalancePlan.AdjustCooperative), as cooperative-sticky does.
//
// User data layout (big-endian):
//
//	version int16 (0) | count int32 | count × { topic length int16 | topic | partition int32 | offset int64 }
type taskBalancer struct {
	groups     map[string]string // joined topic → task topic
	stateful   map[string]bool   // task topics with stores
	standbys   int
	local      func() map[topicPartition]int64
	onStandbys func([]topicPartition) // nil without standbys
	logger     *slog.Logger
}

// taskBalancerProtocol names the balancer in JoinGroup.
const taskBalancerProtocol = "strata-streams"

func (m *stateManager) balancer(standbys int, logger *slog.Logger) *taskBalancer {
	b := &taskBalancer{groups: m.groups, stateful: map[string]bool{}, standbys: standbys,
		local: m.localOffsets, logger: logger}
	for topic := range m.byInput {
		b.stateful[topic] = true
	}
	if m.standby != nil {
		b.onStandbys = m.standby.setWanted
	}
	return b
}

func (b *taskBalancer) ProtocolName() string { return taskBalancerProtocol }
func (b *taskBalancer) IsCooperative() bool  { return true }

func (b *taskBalancer) taskTopic(topic string) string {
	if g, ok := b.groups[topic]; ok {
		return g
	}
	return topic
}

func (b *taskBalancer) JoinGroupMetadata(interests []string, current map[string][]int32, generation int32) []byte {
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version = 3
	meta.Topics = interests
	meta.Generation = generation
	for _, t := range slices.Sorted(maps.Keys(current)) {
		owned := kmsg.NewConsumerMemberMetadataOwnedPartition()
		owned.Topic, owned.Partitions = t, current[t]
		meta.OwnedPartitions = append(meta.OwnedPartitions, owned)
	}
	meta.UserData = encodeTasks(b.local())
	return meta.AppendTo(nil)
}

func (b *taskBalancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	var ma kmsg.ConsumerMemberAssignment
	if err := ma.ReadFrom(assignment); err != nil {
		return nil, fmt.Errorf("streams: parsing the group assignment: %w", err)
	}
	standbys, err := decodeTasks(ma.UserData)
	if err != nil {
		return nil, fmt.Errorf("streams: parsing the standbys of the group assignment: %w", err)
	}
	if b.onStandbys != nil {
		tasks := make([]topicPartition, 0, len(standbys))
		for tp := range standbys {
			tasks = append(tasks, tp)
		}
		b.onStandbys(tasks)
	}
	out := map[string][]int32{}
	for _, t := range ma.Topics {
		out[t.Topic] = append(out[t.Topic], t.Partitions...)
	}
	return out, nil
}

func (b *taskBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	cb, err := kgo.NewConsumerBalancer(b, members)
	return cb, cb.MemberTopics(), err
}

// memberTasks is what the leader knows of one member while balancing.
type memberTasks struct {
	topics   map[string]bool
	local    map[topicPartition]int64
	tasks    int
	standbys int
}

// furtherAlong reports whether member i's local copy of task u is further
// along its changelog than member j's (having one beats having none).
func furtherAlong(ms []memberTasks, i, j int, u topicPartition) (better, equal bool) {
	oi, hi := ms[i].local[u]
	oj, hj := ms[j].local[u]
	if hi != hj {
		return hi, false
	}
	return oi > oj, oi == oj
}

func (b *taskBalancer) Balance(cb *kgo.ConsumerBalancer, topics map[string]int32) kgo.IntoSyncAssignment {
	members := cb.Members()
	if len(members) == 0 {
		return cb.NewPlan()
	}
	ms := make([]memberTasks, len(members))
	owner := map[topicPartition]int{}
	for i := range members {
		_, meta := cb.MemberAt(i)
		ms[i].topics = map[string]bool{}
		for _, t := range meta.Topics {
			ms[i].topics[t] = true
		}
		local, err := decodeTasks(meta.UserData)
		if err != nil {
			b.logger.Warn("ignoring a member's local tasks", "member", members[i].MemberID, "err", err)
		}
		ms[i].local = local
		for _, o := range meta.OwnedPartitions {
			for _, p := range o.Partitions {
				u := topicPartition{b.taskTopic(o.Topic), p}
				if _, taken := owner[u]; !taken {
					owner[u] = i
				}
			}
		}
	}

	unitTopics := map[string][]string{}
	for t := range topics {
		k := b.taskTopic(t)
		unitTopics[k] = append(unitTopics[k], t)
	}
	var units []topicPartition
	for k, ts := range unitTopics {
		sort.Strings(ts)
		var n int32
		for _, t := range ts {
			n = max(n, topics[t])
		}
		for p := range n {
			units = append(units, topicPartition{k, p})
		}
	}
	sort.Slice(units, func(i, j int) bool {
		if units[i].topic != units[j].topic {
			return units[i].topic < units[j].topic
		}
		return units[i].partition < units[j].partition
	})
	eligible := func(i int, u topicPartition) bool {
		for _, t := range unitTopics[u.topic] {
			if !ms[i].topics[t] {
				return false
			}
		}
		return true
	}

	floor, extras := len(units)/len(members), len(units)%len(members)
	assigned := map[topicPartition]int{}
	assign := func(u topicPartition, i int) {
		if ms[i].tasks >= floor {
			extras--
		}
		ms[i].tasks++
		assigned[u] = i
	}
	// Owners keep their tasks: up to the fair share first, then one more
	// while the remainder lasts.
	for _, u := range units {
		if i, ok := owner[u]; ok && eligible(i, u) && ms[i].tasks < floor {
			assign(u, i)
		}
	}
	for _, u := range units {
		if i, ok := owner[u]; ok && !isAssigned(assigned, u) && eligible(i, u) && ms[i].tasks == floor && extras > 0 {
			assign(u, i)
		}
	}
	for _, u := range units {
		if isAssigned(assigned, u) {
			continue
		}
		best, bestRoomless := -1, -1
		for i := range members {
			if !eligible(i, u) {
				continue
			}
			if bestRoomless < 0 || ms[i].tasks < ms[bestRoomless].tasks {
				bestRoomless = i
			}
			if ms[i].tasks > floor || (ms[i].tasks == floor && extras <= 0) {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			better, equal := furtherAlong(ms, i, best, u)
			if better || (equal && ms[i].tasks < ms[best].tasks) {
				best = i
			}
		}
		if best < 0 {
			best = bestRoomless // subscriptions differ for a while
		}
		if best >= 0 {
			assign(u, best)
		}
	}

	standbys := map[string]map[topicPartition]int64{}
	// sameOwner counts the standbys a member keeps of one owner's tasks:
	// spreading them means the tasks of a member that dies find their
	// standbys on several members, each with room for one of them.
	sameOwner := map[[2]int]int{}
	for _, u := range units {
		o, ok := assigned[u]
		if !ok || b.standbys == 0 || !b.stateful[u.topic] {
			continue
		}
		var cands []int
		for i := range members {
			if i != o && eligible(i, u) {
				cands = append(cands, i)
			}
		}
		sort.SliceStable(cands, func(x, y int) bool {
			i, j := cands[x], cands[y]
			_, hi := ms[i].local[u]
			_, hj := ms[j].local[u]
			if hi != hj {
				return hi
			}
			if si, sj := sameOwner[[2]int{i, o}], sameOwner[[2]int{j, o}]; si != sj {
				return si < sj
			}
			better, equal := furtherAlong(ms, i, j, u)
			return better || (equal && ms[i].standbys < ms[j].standbys)
		})
		for _, i := range cands[:min(b.standbys, len(cands))] {
			ms[i].standbys++
			sameOwner[[2]int{i, o}]++
			id := members[i].MemberID
			if standbys[id] == nil {
				standbys[id] = map[topicPartition]int64{}
			}
			standbys[id][u] = 0
		}
	}

	plan := cb.NewPlan()
	for _, u := range units {
		i, ok := assigned[u]
		if !ok {
			continue
		}
		member, _ := cb.MemberAt(i)
		for _, t := range unitTopics[u.topic] {
			if u.partition < topics[t] {
				plan.AddPartition(member, t, u.partition)
			}
		}
	}
	plan.AdjustCooperative(cb)
	b.logger.Info("balanced tasks", "members", len(members), "tasks", len(units), "standby_replicas", b.standbys)
	return standbyPlan{plan: plan, standbys: standbys}
}

func isAssigned(assigned map[topicPartition]int, u topicPartition) bool {
	_, ok := assigned[u]
	return ok
}

// standbyPlan is a balance plan with each member's standby tasks in its
// assignment's user data.
type standbyPlan struct {
	plan     *kgo.BalancePlan
	standbys map[string]map[topicPartition]int64
}

func (p standbyPlan) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment {
	out := p.plan.IntoSyncAssignment()
	for i := range out {
		tasks := p.standbys[out[i].MemberID]
		if len(tasks) == 0 {
			continue
		}
		var ma kmsg.ConsumerMemberAssignment
		if err := ma.ReadFrom(out[i].MemberAssignment); err != nil {
			continue // kgo encoded it; cannot happen
		}
		ma.UserData = encodeTasks(tasks)
		out[i].MemberAssignment = ma.AppendTo(nil)
	}
	return out
}

// encodeTasks writes tasks in the user data layout, sorted.
func encodeTasks(tasks map[topicPartition]int64) []byte {
	keys := make([]topicPartition, 0, len(tasks))
	for tp := range tasks {
		keys = append(keys, tp)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].partition < keys[j].partition
	})
	out := binary.BigEndian.AppendUint16(nil, 0)
	out = binary.BigEndian.AppendUint32(out, uint32(len(keys)))
	for _, tp := range keys {
		out = binary.BigEndian.AppendUint16(out, uint16(len(tp.topic)))
		out = append(out, tp.topic...)
		out = binary.BigEndian.AppendUint32(out, uint32(tp.partition))
		out = binary.BigEndian.AppendUint64(out, uint64(tasks[tp]))
	}
	return out
}

var errTaskData = errors.New("streams: malformed task user data")

// decodeTasks reads the user data layout; empty data is no tasks.
func decodeTasks(data []byte) (map[topicPartition]int64, error) {
	out := map[topicPartition]int64{}
	if len(data) == 0 {
		return out, nil
	}
	if len(data) < 6 {
		return out, fmt.Errorf("%w: %d bytes", errTaskData, len(data))
	}
	if v := binary.BigEndian.Uint16(data); v != 0 {
		return out, fmt.Errorf("%w: version %d", errTaskData, v)
	}
	n := binary.BigEndian.Uint32(data[2:])
	data = data[6:]
	for range n {
		if len(data) < 2 {
			return out, fmt.Errorf("%w: truncated", errTaskData)
		}
		l := int(binary.BigEndian.Uint16(data))
		if len(data) < 2+l+12 {
			return out, fmt.Errorf("%w: truncated", errTaskData)
		}
		topic := string(data[2 : 2+l])
		p := int32(binary.BigEndian.Uint32(data[2+l:]))
		o := int64(binary.BigEndian.Uint64(data[2+l+4:]))
		out[topicPartition{topic, p}] = o
		data = data[2+l+12:]
	}
	if len(data) != 0 {
		return out, fmt.Errorf("%w: %d trailing bytes", errTaskData, len(data))
	}
	return out, nil
}
