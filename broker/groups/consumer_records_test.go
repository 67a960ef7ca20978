package groups

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// collect keeps the records of a call and checks that replaying every
// record so far rebuilds the group.
func (s *consumerScenario) collect(eff Effects) {
	s.t.Helper()
	s.records = append(s.records, eff.Records...)
	s.checkReplay()
}

// replayed is a fresh group rebuilt from the scenario's records, each
// encoded and decoded as the broker does, at time at.
func (s *consumerScenario) replayed(at time.Time) *Group {
	s.t.Helper()
	r := New(s.g.ID(), &s.cfg, at)
	for _, rec := range s.records {
		key, value := EncodeRecord(rec)
		back, known, err := DecodeRecord(key, value)
		if err != nil || !known {
			s.t.Fatalf("decode %+v: known %v, %v", rec, known, err)
		}
		if k2, v2 := EncodeRecord(back); !bytes.Equal(k2, key) || !bytes.Equal(v2, value) || (value == nil) != (v2 == nil) {
			s.t.Fatalf("record %+v does not round-trip", rec)
		}
		r.Replay(at, back)
	}
	return r
}

// checkReplay compares the group with its replay.
func (s *consumerScenario) checkReplay() {
	s.t.Helper()
	later := s.now.Add(time.Minute) // a restart a minute later
	r := s.replayed(later)
	if gone(s.g) {
		if !gone(r) {
			s.t.Fatalf("group gone, replay has\n%s", consumerSnapshot(r))
		}
		return
	}
	if got, want := consumerSnapshot(r), consumerSnapshot(s.g); got != want {
		s.t.Fatalf("replay differs\n got: %s\nwant: %s", got, want)
	}
	// Sessions (and pending revocations) restart from the load.
	for id, m := range r.consumer.members {
		if !m.sessionDeadline.Equal(later.Add(s.cfg.ConsumerSessionTimeout)) {
			s.t.Fatalf("%s: session deadline %v after a load at %v", id, m.sessionDeadline, later)
		}
		if (m.state == memberUnrevoked) != !m.revocationDeadline.IsZero() || (!m.revocationDeadline.IsZero() && m.revocationDeadline.Before(later)) {
			s.t.Fatalf("%s: revocation deadline %v after a load at %v", id, m.revocationDeadline, later)
		}
	}
	// Nothing to write after a replay.
	if eff := r.take(); len(eff.Records) != 0 {
		s.t.Fatalf("replayed group writes %+v", eff.Records)
	}
}

// gone reports a group the broker would drop: dead, or holding nothing.
func gone(g *Group) bool {
	return g.State() == Dead || g.IsPristine() || (g.consumer == nil && len(g.members) == 0 && len(g.offsets) == 0)
}

// consumerSnapshot is everything of a group's state that persistence
// covers (not timers, nor whether the last response carried the
// assignment).
func consumerSnapshot(g *Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "type=%s state=%s/%s gen=%d ptype=%q ts=%d offsets=%v", g.GroupType(), g.State(), g.StateName(), g.Generation(), g.ProtocolType(), g.stateTimestamp.UnixMilli(), g.Offsets())
	cg := g.consumer
	if cg == nil {
		return b.String()
	}
	fmt.Fprintf(&b, " epoch=%d assignmentEpoch=%d assignor=%q parts=%v static=%v", cg.groupEpoch, cg.assignmentEpoch, cg.assignor, cg.subscribedPartitions, cg.staticMembers)
	owners := make([]string, 0, len(cg.owner))
	for tp, id := range cg.owner {
		owners = append(owners, fmt.Sprintf("%s-%d:%s", tp.Topic, tp.Partition, id))
	}
	sort.Strings(owners)
	fmt.Fprintf(&b, " owner=%v", owners)
	ids := make([]string, 0, len(cg.members))
	for id := range cg.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := cg.members[id]
		re := ""
		if m.regex != nil {
			re = m.regex.String()
		}
		fmt.Fprintf(&b, "\n  member %s instance=%v rack=%v client=%s/%s rebalance=%v names=%v regex=%q/%q assignor=%q epoch=%d prev=%d state=%d assigned=%v revoking=%v target=%v",
			id, deref(m.instanceID), deref(m.rackID), m.clientID, m.clientHost, m.rebalanceTimeout, m.subscribedNames, m.subscribedRegex, re, m.assignor,
			m.epoch, m.previousEpoch, m.state, sortedSet(m.assigned), sortedSet(m.revoking), sortedSet(cg.target[id]))
	}
	for id := range cg.target {
		if cg.members[id] == nil {
			fmt.Fprintf(&b, "\n  target of non-member %s: %v", id, sortedSet(cg.target[id]))
		}
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestConsumerRecordsRoundTrip(t *testing.T) {
	inst, rack := "i-1", "r1"
	md := &ConsumerGroupMetadata{GroupEpoch: 7, AssignmentEpoch: 6, Assignor: "range", StateTimestamp: 1234, SubscribedPartitions: map[string]int32{"a": 3, "b": 1}}
	mm := &ConsumerMemberMetadata{
		InstanceID: &inst, RackID: &rack, ClientID: "cl", ClientHost: "/127.0.0.1", RebalanceTimeoutMs: 45000,
		SubscribedNames: []string{"a", "b"}, SubscribedRegex: "c.*", Assignor: "uniform",
		Epoch: 6, PreviousEpoch: 5, State: int8(memberUnrevoked),
		Assigned: []TopicPartition{{"a", 0}, {"a", 2}}, Revoking: []TopicPartition{{"b", 0}}, Target: []TopicPartition{{"a", 0}, {"a", 2}},
	}
	for _, rec := range []Record{
		{Group: "g", IsConsumerGroup: true, ConsumerGroup: md},
		{Group: "g", IsConsumerGroup: true},
		{Group: "g", IsConsumerMember: true, MemberID: "m", ConsumerMember: mm},
		{Group: "g", IsConsumerMember: true, MemberID: "m", ConsumerMember: &ConsumerMemberMetadata{}},
		{Group: "g", IsConsumerMember: true, MemberID: "m"},
	} {
		key, value := EncodeRecord(rec)
		back, known, err := DecodeRecord(key, value)
		if err != nil || !known {
			t.Fatalf("%+v: known %v, %v", rec, known, err)
		}
		k2, v2 := EncodeRecord(back)
		if !bytes.Equal(key, k2) || !bytes.Equal(value, v2) || (value == nil) != (v2 == nil) {
			t.Fatalf("%+v: round trip gives %+v", rec, back)
		}
		if rec.ConsumerMember == mm && !reflect.DeepEqual(back.ConsumerMember, mm) {
			t.Fatalf("member: got %+v want %+v", back.ConsumerMember, mm)
		}
		if rec.ConsumerGroup == md && !reflect.DeepEqual(back.ConsumerGroup, md) {
			t.Fatalf("group: got %+v want %+v", back.ConsumerGroup, md)
		}
		// Every truncation (and trailing garbage) is an error, not a panic.
		for n := 0; value != nil && n < len(value); n++ {
			if _, _, err := DecodeRecord(key, value[:n]); !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("%+v truncated to %d: %v", rec, n, err)
			}
		}
		if value != nil {
			if _, _, err := DecodeRecord(key, append(value[:len(value):len(value)], 0)); !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("%+v with trailing byte: %v", rec, err)
			}
		}
	}
}

// A scenario through joins, reconciliation, a static member leaving and
// being replaced, subscription and assignor changes, commits, expiry and
// deletion; every step is checked by replay (collect).
func TestConsumerGroupReplayRebuildsState(t *testing.T) {
	s := newConsumerScenario(t, TopicInfo{Name: "t", Partitions: 4}, TopicInfo{Name: "u", Partitions: 2}, TopicInfo{Name: "x1", Partitions: 1})
	inst, rack := "instance", "rack-a"
	a := s.join("a", "uniform", "t")
	res := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "s", MemberEpoch: 0, InstanceID: &inst, RackID: &rack, SubscribedTopicNames: []string{"t", "u"}, Owned: []TopicPartitions{}, ClientID: "cid", ClientHost: "/1.2.3.4"})
	re := "x.*"
	c := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "c", MemberEpoch: 0, SubscribedTopicNames: []string{}, SubscribedTopicRegex: &re, Owned: []TopicPartitions{}})
	// a is asked to revoke; mid-reconciliation state is persisted.
	a = s.report("a", a.MemberEpoch, a.Assignment)
	a = s.report("a", a.MemberEpoch, a.Assignment)
	res = s.report("s", res.MemberEpoch, res.Assignment)
	c = s.report("c", c.MemberEpoch, c.Assignment)
	for range 3 {
		a = s.report("a", a.MemberEpoch, a.Assignment)
		res = s.report("s", res.MemberEpoch, res.Assignment)
	}
	s.checkExclusive()
	// Commits by epoch.
	err, eff := s.g.Commit(s.now, CommitRequest{MemberID: "a", Generation: a.MemberEpoch, Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "t", Partition: 0}, OffsetAndMetadata: OffsetAndMetadata{Offset: 5, LeaderEpoch: -1, ExpireTimestamp: -1}}}})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	s.collect(eff)
	// The assignor changes.
	rng := RangeAssignor
	s.heartbeat(ConsumerHeartbeatRequest{MemberID: "a", MemberEpoch: a.MemberEpoch, RebalanceTimeout: -1, ServerAssignor: &rng})
	// The static member leaves temporarily and is replaced.
	if r := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "s", MemberEpoch: StaticLeaveEpoch, InstanceID: &inst, RebalanceTimeout: -1}); r.Err != nil {
		t.Fatalf("static leave: %+v", r)
	}
	s.heartbeat(ConsumerHeartbeatRequest{MemberID: "s2", MemberEpoch: 0, InstanceID: &inst, SubscribedTopicNames: []string{"t", "u"}, Owned: []TopicPartitions{}})
	// The replayed group carries on where the live one was: a member
	// heartbeating at its epoch is not fenced.
	r := s.replayed(s.now)
	ra, _ := r.ConsumerHeartbeat(s.now, ConsumerHeartbeatRequest{MemberID: "c", MemberEpoch: r.consumer.members["c"].epoch, RebalanceTimeout: -1}, s.topics)
	if ra.Err != nil {
		t.Fatalf("replayed group fences c: %+v", ra)
	}
	// c leaves; the others expire.
	s.heartbeat(ConsumerHeartbeatRequest{MemberID: "c", MemberEpoch: LeaveEpoch, RebalanceTimeout: -1})
	s.now = s.now.Add(time.Hour)
	s.collect(s.g.Tick(s.now))
	if s.g.StateName() != "Empty" || s.g.IsPristine() {
		t.Fatalf("after expiry: %s", s.g.StateName())
	}
	// Deleting the group tombstones everything.
	err, eff = s.g.Delete(s.now)
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	s.collect(eff)
	live := map[string]bool{}
	for _, rec := range s.records {
		key, value := EncodeRecord(rec)
		live[string(key)] = value != nil
	}
	for k, v := range live {
		if v {
			t.Errorf("record %q not tombstoned after deletion", k)
		}
	}
}

// An empty consumer group turned classic by a JoinGroup leaves no
// consumer records behind, and its replay is the classic group.
func TestConsumerGroupToClassicTombstones(t *testing.T) {
	s := newConsumerScenario(t, TopicInfo{Name: "t", Partitions: 1})
	s.join("a", "uniform", "t")
	s.heartbeat(ConsumerHeartbeatRequest{MemberID: "a", MemberEpoch: LeaveEpoch, RebalanceTimeout: -1})
	// (A classic group in its first rebalance has nothing persisted yet,
	// so the replay is not compared with it.)
	s.records = append(s.records, s.g.Join(s.now, JoinRequest{ProtocolType: "consumer", SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second, Protocols: []Protocol{{Name: "range"}}}, "c").Records...)
	if s.g.IsConsumerGroup() {
		t.Fatalf("still a consumer group")
	}
	live := map[string]bool{}
	for _, rec := range s.records {
		key, value := EncodeRecord(rec)
		if rec.IsConsumerGroup || rec.IsConsumerMember {
			live[string(key)] = value != nil
		}
	}
	if len(live) == 0 {
		t.Fatalf("no consumer records written")
	}
	for k, v := range live {
		if v {
			t.Errorf("consumer record %q not tombstoned", k)
		}
	}
	if r := s.replayed(s.now); r.IsConsumerGroup() || !gone(r) {
		t.Fatalf("replay: %s", consumerSnapshot(r))
	}
}
