package groups

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"time"
)

// Persistence of consumer (KIP-848) groups: Strata's own records, under
// key versions Kafka does not use (see doc.go for their layout). One
// record holds the group's epochs, assignor and the partition counts its
// target was computed from; one record per member holds the member with
// its current and target assignment. After every call the group diffs its
// state against what it last wrote and emits only the records that
// changed, with tombstones for members gone and for the whole group once
// it is deleted, turned classic, or holds nothing (no members, no offsets).

// Key versions of Strata's consumer group records.
const (
	consumerGroupKeyVersion  int16 = 0x7F00 // 32512
	consumerMemberKeyVersion int16 = 0x7F01 // 32513
	consumerRecordVersion    int16 = 0
)

// ConsumerGroupMetadata is the persisted group-level state of a consumer
// group.
type ConsumerGroupMetadata struct {
	GroupEpoch      int32
	AssignmentEpoch int32
	Assignor        string
	StateTimestamp  int64 // ms; -1 if unknown
	// SubscribedPartitions is the partition count of every subscribed
	// topic the target assignment was computed from.
	SubscribedPartitions map[string]int32
}

// ConsumerMemberMetadata is one persisted consumer group member.
type ConsumerMemberMetadata struct {
	InstanceID         *string
	RackID             *string
	ClientID           string
	ClientHost         string
	RebalanceTimeoutMs int32
	SubscribedNames    []string
	SubscribedRegex    string
	Assignor           string
	Epoch              int32
	PreviousEpoch      int32
	State              int8 // 0 stable, 1 unrevoked, 2 unreleased
	Assigned           []TopicPartition
	Revoking           []TopicPartition
	Target             []TopicPartition // at the group's assignment epoch
}

// --- encoding ---

type wbuf []byte

func (b *wbuf) i8(v int8)   { *b = append(*b, byte(v)) }
func (b *wbuf) i16(v int16) { *b = binary.BigEndian.AppendUint16(*b, uint16(v)) }
func (b *wbuf) i32(v int32) { *b = binary.BigEndian.AppendUint32(*b, uint32(v)) }
func (b *wbuf) i64(v int64) { *b = binary.BigEndian.AppendUint64(*b, uint64(v)) }
func (b *wbuf) str(s string) {
	b.i16(int16(len(s)))
	*b = append(*b, s...)
}
func (b *wbuf) nstr(s *string) {
	if s == nil {
		b.i16(-1)
		return
	}
	b.str(*s)
}

// tps writes partitions (sorted) grouped by topic.
func (b *wbuf) tps(tps []TopicPartition) {
	tps = slices.Clone(tps)
	sortTopicPartitions(tps)
	var topics [][]TopicPartition
	for i, tp := range tps {
		if i > 0 && tps[i-1].Topic == tp.Topic {
			topics[len(topics)-1] = append(topics[len(topics)-1], tp)
			continue
		}
		topics = append(topics, []TopicPartition{tp})
	}
	b.i32(int32(len(topics)))
	for _, t := range topics {
		b.str(t[0].Topic)
		b.i32(int32(len(t)))
		for _, tp := range t {
			b.i32(tp.Partition)
		}
	}
}

type rbuf struct {
	b   []byte
	err bool
}

func (r *rbuf) take(n int) []byte {
	if r.err || n < 0 || len(r.b) < n {
		r.err = true
		return make([]byte, max(n, 0))
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *rbuf) i8() int8   { return int8(r.take(1)[0]) }
func (r *rbuf) i16() int16 { return int16(binary.BigEndian.Uint16(r.take(2))) }
func (r *rbuf) i32() int32 { return int32(binary.BigEndian.Uint32(r.take(4))) }
func (r *rbuf) i64() int64 { return int64(binary.BigEndian.Uint64(r.take(8))) }
func (r *rbuf) str() string {
	n := r.i16()
	if n < 0 {
		r.err = true
		return ""
	}
	return string(r.take(int(n)))
}
func (r *rbuf) nstr() *string {
	n := r.i16()
	if n == -1 {
		return nil
	}
	if n < 0 {
		r.err = true
		return nil
	}
	s := string(r.take(int(n)))
	return &s
}

// count reads an array length, bounded by the bytes left (each element
// takes at least min bytes).
func (r *rbuf) count(min int) int {
	n := r.i32()
	if n < 0 || int(n)*min > len(r.b) {
		r.err = true
		return 0
	}
	return int(n)
}

func (r *rbuf) tps() []TopicPartition {
	var out []TopicPartition
	for range r.count(6) {
		topic := r.str()
		for range r.count(4) {
			out = append(out, TopicPartition{Topic: topic, Partition: r.i32()})
		}
	}
	return out
}

func consumerGroupKey(group string) []byte {
	var b wbuf
	b.i16(consumerGroupKeyVersion)
	b.str(group)
	return b
}

func consumerMemberKey(group, member string) []byte {
	var b wbuf
	b.i16(consumerMemberKeyVersion)
	b.str(group)
	b.str(member)
	return b
}

func encodeConsumerGroupValue(md *ConsumerGroupMetadata) []byte {
	var b wbuf
	b.i16(consumerRecordVersion)
	b.i32(md.GroupEpoch)
	b.i32(md.AssignmentEpoch)
	b.str(md.Assignor)
	b.i64(md.StateTimestamp)
	topics := make([]string, 0, len(md.SubscribedPartitions))
	for t := range md.SubscribedPartitions {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	b.i32(int32(len(topics)))
	for _, t := range topics {
		b.str(t)
		b.i32(md.SubscribedPartitions[t])
	}
	return b
}

func encodeConsumerMemberValue(m *ConsumerMemberMetadata) []byte {
	var b wbuf
	b.i16(consumerRecordVersion)
	b.nstr(m.InstanceID)
	b.nstr(m.RackID)
	b.str(m.ClientID)
	b.str(m.ClientHost)
	b.i32(m.RebalanceTimeoutMs)
	b.i32(int32(len(m.SubscribedNames)))
	for _, n := range m.SubscribedNames {
		b.str(n)
	}
	b.str(m.SubscribedRegex)
	b.str(m.Assignor)
	b.i32(m.Epoch)
	b.i32(m.PreviousEpoch)
	b.i8(m.State)
	b.tps(m.Assigned)
	b.tps(m.Revoking)
	b.tps(m.Target)
	return b
}

// decodeConsumerRecord decodes the key and value of one of Strata's
// consumer group records.
func decodeConsumerRecord(version int16, key, value []byte) (Record, error) {
	k := rbuf{b: key[2:]}
	r := Record{Group: k.str()}
	if version == consumerMemberKeyVersion {
		r.IsConsumerMember = true
		r.MemberID = k.str()
	} else {
		r.IsConsumerGroup = true
	}
	if k.err || len(k.b) != 0 {
		return Record{}, fmt.Errorf("%w: consumer group key", ErrCorruptRecord)
	}
	if value == nil {
		return r, nil
	}
	v := rbuf{b: value}
	if ver := v.i16(); ver != consumerRecordVersion {
		// A newer Strata's record: fail loudly rather than misread it.
		return Record{}, fmt.Errorf("%w: consumer group value version %d", ErrCorruptRecord, ver)
	}
	if r.IsConsumerGroup {
		md := &ConsumerGroupMetadata{GroupEpoch: v.i32(), AssignmentEpoch: v.i32(), Assignor: v.str(), StateTimestamp: v.i64(), SubscribedPartitions: map[string]int32{}}
		for range v.count(6) {
			t := v.str()
			md.SubscribedPartitions[t] = v.i32()
		}
		r.ConsumerGroup = md
	} else {
		m := &ConsumerMemberMetadata{InstanceID: v.nstr(), RackID: v.nstr(), ClientID: v.str(), ClientHost: v.str(), RebalanceTimeoutMs: v.i32()}
		for range v.count(2) {
			m.SubscribedNames = append(m.SubscribedNames, v.str())
		}
		m.SubscribedRegex = v.str()
		m.Assignor = v.str()
		m.Epoch = v.i32()
		m.PreviousEpoch = v.i32()
		m.State = v.i8()
		m.Assigned = v.tps()
		m.Revoking = v.tps()
		m.Target = v.tps()
		if m.State < int8(memberStable) || m.State > int8(memberUnreleased) {
			v.err = true
		}
		if m.SubscribedRegex != "" {
			if _, err := regexp.Compile(m.SubscribedRegex); err != nil {
				v.err = true
			}
		}
		r.ConsumerMember = m
	}
	if v.err || len(v.b) != 0 {
		return Record{}, fmt.Errorf("%w: consumer group value", ErrCorruptRecord)
	}
	return r, nil
}

// --- state ↔ records ---

func (g *Group) consumerGroupMetadata() ConsumerGroupMetadata {
	cg := g.consumer
	md := ConsumerGroupMetadata{
		GroupEpoch:           cg.groupEpoch,
		AssignmentEpoch:      cg.assignmentEpoch,
		Assignor:             cg.assignor,
		StateTimestamp:       -1,
		SubscribedPartitions: cg.subscribedPartitions,
	}
	if !g.stateTimestamp.IsZero() {
		md.StateTimestamp = g.stateTimestamp.UnixMilli()
	}
	return md
}

func (cg *consumerGroup) memberMetadata(m *consumerMember) ConsumerMemberMetadata {
	return ConsumerMemberMetadata{
		InstanceID:         m.instanceID,
		RackID:             m.rackID,
		ClientID:           m.clientID,
		ClientHost:         m.clientHost,
		RebalanceTimeoutMs: int32(m.rebalanceTimeout.Milliseconds()),
		SubscribedNames:    m.subscribedNames,
		SubscribedRegex:    m.subscribedRegex,
		Assignor:           m.assignor,
		Epoch:              m.epoch,
		PreviousEpoch:      m.previousEpoch,
		State:              int8(m.state),
		Assigned:           sortedSet(m.assigned),
		Revoking:           sortedSet(m.revoking),
		Target:             sortedSet(cg.target[m.id]),
	}
}

// persistConsumer emits the records that bring the log's view of the
// consumer group up to its state: changed group and member records, and
// tombstones for what is gone.
func (g *Group) persistConsumer() {
	wantGroup := ""
	want := map[string]string{}
	cg := g.consumer
	// An Empty group that had members keeps its group record (Kafka
	// keeps it until the group is deleted or cleaned up), so it comes back
	// from the log as it was.
	if cg != nil && g.state != Dead && (len(cg.members) > 0 || g.hasOffsets() || cg.groupEpoch > 0) {
		md := g.consumerGroupMetadata()
		wantGroup = string(encodeConsumerGroupValue(&md))
		for id, m := range cg.members {
			mm := cg.memberMetadata(m)
			want[id] = string(encodeConsumerMemberValue(&mm))
		}
	}
	if wantGroup != "" && wantGroup != g.persistedGroup {
		md := g.consumerGroupMetadata()
		md.SubscribedPartitions = maps2(md.SubscribedPartitions)
		g.out.Records = append(g.out.Records, Record{Group: g.id, IsConsumerGroup: true, ConsumerGroup: &md})
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if old, ok := g.persistedMembers[id]; ok && old == want[id] {
			continue
		}
		mm := cg.memberMetadata(cg.members[id])
		mm.InstanceID = cloneString(mm.InstanceID)
		mm.RackID = cloneString(mm.RackID)
		mm.SubscribedNames = slices.Clone(mm.SubscribedNames)
		g.out.Records = append(g.out.Records, Record{Group: g.id, IsConsumerMember: true, MemberID: id, ConsumerMember: &mm})
	}
	gone := []string{}
	for id := range g.persistedMembers {
		if _, ok := want[id]; !ok {
			gone = append(gone, id)
		}
	}
	sort.Strings(gone)
	for _, id := range gone {
		g.out.Records = append(g.out.Records, Record{Group: g.id, IsConsumerMember: true, MemberID: id})
	}
	if wantGroup == "" && g.persistedGroup != "" {
		g.out.Records = append(g.out.Records, Record{Group: g.id, IsConsumerGroup: true})
	}
	g.persistedGroup = wantGroup
	g.persistedMembers = want
}

func maps2(m map[string]int32) map[string]int32 {
	out := make(map[string]int32, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// replayConsumer makes the group a consumer group for a consumer record
// read back from the log (records of one group may come back in any
// order after compaction).
func (g *Group) replayConsumerGroup(now time.Time) {
	if g.consumer != nil {
		return
	}
	g.consumer = newConsumerGroup()
	g.protocolType = ConsumerProtocolType
	g.protocol = ""
	g.leader = ""
	g.members = map[string]*member{}
	g.order = nil
	g.staticMembers = map[string]string{}
	g.pendingMembers = map[string]time.Time{}
	g.pendingSync = map[string]bool{}
	g.supportedProtocols = map[string]int{}
	g.state = Empty
	g.persistedGroup = ""
	g.persistedMembers = map[string]string{}
}

// ReplayConsumerGroup applies a consumer group record (nil: its
// tombstone) read back from the log.
func (g *Group) ReplayConsumerGroup(now time.Time, md *ConsumerGroupMetadata) {
	if md == nil {
		if g.consumer != nil {
			g.consumer = nil
			g.protocolType = ""
			g.generation = 0
			g.state = Empty
			g.persistedGroup = ""
			g.persistedMembers = nil
		}
		return
	}
	g.replayConsumerGroup(now)
	cg := g.consumer
	cg.groupEpoch = md.GroupEpoch
	cg.assignmentEpoch = md.AssignmentEpoch
	cg.assignor = md.Assignor
	cg.subscribedPartitions = maps2(md.SubscribedPartitions)
	g.generation = md.GroupEpoch
	g.stateTimestamp = time.Time{}
	if md.StateTimestamp >= 0 {
		g.stateTimestamp = time.UnixMilli(md.StateTimestamp)
	}
	g.persistedGroup = string(encodeConsumerGroupValue(md))
	g.settleReplayedConsumer()
}

// ReplayConsumerMember applies a consumer group member record (nil: its
// tombstone) read back from the log. The member's session (and a pending
// revocation's deadline) starts now, as in Kafka after a failover.
func (g *Group) ReplayConsumerMember(now time.Time, id string, mm *ConsumerMemberMetadata) {
	if mm == nil {
		if g.consumer != nil {
			delete(g.consumer.members, id)
			delete(g.consumer.target, id)
			delete(g.persistedMembers, id)
			g.settleReplayedConsumer()
		}
		return
	}
	g.replayConsumerGroup(now)
	if g.persistedMembers == nil {
		g.persistedMembers = map[string]string{}
	}
	cg := g.consumer
	m := &consumerMember{
		id:               id,
		instanceID:       cloneString(mm.InstanceID),
		rackID:           cloneString(mm.RackID),
		clientID:         mm.ClientID,
		clientHost:       mm.ClientHost,
		rebalanceTimeout: time.Duration(mm.RebalanceTimeoutMs) * time.Millisecond,
		subscribedNames:  slices.Clone(mm.SubscribedNames),
		subscribedRegex:  mm.SubscribedRegex,
		assignor:         mm.Assignor,
		epoch:            mm.Epoch,
		previousEpoch:    mm.PreviousEpoch,
		state:            reconcileState(mm.State),
		assigned:         map[TopicPartition]bool{},
		revoking:         map[TopicPartition]bool{},
		sessionDeadline:  now.Add(g.consumerSessionTimeout()),
	}
	if m.subscribedRegex != "" {
		m.regex = regexp.MustCompile("^(?:" + m.subscribedRegex + ")$") // checked by the decoder
	}
	for _, tp := range mm.Assigned {
		m.assigned[tp] = true
	}
	for _, tp := range mm.Revoking {
		m.revoking[tp] = true
	}
	if m.state == memberUnrevoked {
		timeout := m.rebalanceTimeout
		if timeout <= 0 {
			timeout = g.consumerSessionTimeout()
		}
		m.revocationDeadline = now.Add(timeout)
	}
	target := map[TopicPartition]bool{}
	for _, tp := range mm.Target {
		target[tp] = true
	}
	cg.members[id] = m
	cg.target[id] = target
	g.persistedMembers[id] = string(encodeConsumerMemberValue(mm))
	g.settleReplayedConsumer()
}

// settleReplayedConsumer rebuilds what is derived from the members.
func (g *Group) settleReplayedConsumer() {
	cg := g.consumer
	cg.owner = map[TopicPartition]string{}
	cg.staticMembers = map[string]string{}
	ids := cg.sortedMemberIDs()
	for _, id := range ids {
		m := cg.members[id]
		for tp := range m.assigned {
			cg.owner[tp] = id
		}
		for tp := range m.revoking {
			cg.owner[tp] = id
		}
		if m.instanceID != nil {
			cg.staticMembers[*m.instanceID] = id
		}
	}
	g.state = Empty
	if len(cg.members) > 0 {
		g.state = Stable
	}
}
