package groups

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// consumerScenario drives one consumer (KIP-848) group with an injected
// clock over a fixed set of topics.
type consumerScenario struct {
	t      *testing.T
	cfg    Config
	g      *Group
	now    time.Time
	topics TopicCatalog
	// records are every record the group emitted, in order; after each
	// call, replaying them into a fresh group must rebuild its state.
	records []Record
}

func newConsumerScenario(t *testing.T, topics ...TopicInfo) *consumerScenario {
	s := &consumerScenario{t: t, now: time.UnixMilli(1_700_000_000_000)}
	s.cfg = DefaultConfig()
	s.cfg.ConsumerSessionTimeout = 10 * time.Second
	s.g = New("group", &s.cfg, s.now)
	for i := range topics {
		topics[i].ID = [16]byte{byte(i + 1)}
	}
	s.topics = NewTopicCatalog(topics)
	return s
}

func (s *consumerScenario) heartbeat(req ConsumerHeartbeatRequest) ConsumerHeartbeatResult {
	s.t.Helper()
	if req.RebalanceTimeout == 0 {
		req.RebalanceTimeout = 30 * time.Second
	}
	res, eff := s.g.ConsumerHeartbeat(s.now, req, s.topics)
	if len(eff.Replies) != 0 {
		s.t.Fatalf("consumer heartbeat produced replies %+v", eff)
	}
	s.collect(eff)
	return res
}

func (s *consumerScenario) join(id, assignor string, topics ...string) ConsumerHeartbeatResult {
	s.t.Helper()
	res := s.heartbeat(ConsumerHeartbeatRequest{MemberID: id, MemberEpoch: 0, SubscribedTopicNames: topics, ServerAssignor: &assignor, Owned: []TopicPartitions{}})
	if res.Err != nil {
		s.t.Fatalf("join %s: %v", id, res.Err)
	}
	return res
}

// report heartbeats a member's epoch and the partitions it owns (nil: a
// keepalive that does not report them).
func (s *consumerScenario) report(id string, epoch int32, owned []TopicPartitions) ConsumerHeartbeatResult {
	s.t.Helper()
	return s.heartbeat(ConsumerHeartbeatRequest{MemberID: id, MemberEpoch: epoch, RebalanceTimeout: -1, Owned: owned})
}

func flatten(a []TopicPartitions) []string {
	var out []string
	for _, t := range a {
		for _, p := range t.Partitions {
			out = append(out, fmt.Sprintf("%s-%d", t.Topic, p))
		}
	}
	return out
}

// checkExclusive fails if two members hold (or revoke) one partition.
func (s *consumerScenario) checkExclusive() {
	s.t.Helper()
	held := map[TopicPartition]string{}
	for id, m := range s.g.consumer.members {
		for _, set := range []map[TopicPartition]bool{m.assigned, m.revoking} {
			for tp := range set {
				if other, dup := held[tp]; dup {
					s.t.Fatalf("%v held by %s and %s", tp, other, id)
				}
				held[tp] = id
			}
		}
	}
}

func TestConsumerAssignors(t *testing.T) {
	spec := assignorSpec{
		members:    []string{"a", "b", "c"},
		subscribed: map[string][]string{"a": {"t"}, "b": {"t"}, "c": {"t", "u"}},
		partitions: map[string]int32{"t": 7, "u": 2},
	}
	for _, tc := range []struct {
		assignor string
		want     map[string]int
	}{
		{RangeAssignor, map[string]int{"a": 3, "b": 2, "c": 4}},
		{UniformAssignor, map[string]int{"a": 3, "b": 3, "c": 3}},
	} {
		got := assign(tc.assignor, spec)
		seen := map[TopicPartition]int{}
		for id, set := range got {
			if len(set) != tc.want[id] {
				t.Errorf("%s: %s got %d partitions, want %d", tc.assignor, id, len(set), tc.want[id])
			}
			for tp := range set {
				seen[tp]++
				if tp.Topic == "u" && id != "c" {
					t.Errorf("%s: %s got %v it does not subscribe to", tc.assignor, id, tp)
				}
			}
		}
		if len(seen) != 9 {
			t.Errorf("%s: %d partitions assigned, want 9", tc.assignor, len(seen))
		}
		for tp, n := range seen {
			if n != 1 {
				t.Errorf("%s: %v assigned %d times", tc.assignor, tp, n)
			}
		}
	}
}

func TestConsumerGroupReconciliation(t *testing.T) {
	s := newConsumerScenario(t, TopicInfo{Name: "t", Partitions: 4})
	a := s.join("a", "range", "t")
	if a.MemberEpoch != 1 || len(flatten(a.Assignment)) != 4 {
		t.Fatalf("a joined with %+v", a)
	}
	// b joins: it gets its target only once a has revoked.
	b := s.join("b", "range", "t")
	if b.MemberEpoch != 2 || len(flatten(b.Assignment)) != 0 {
		t.Fatalf("b joined with %+v: partitions a still owns were given away", b)
	}
	if got := s.g.StateName(); got != "Reconciling" {
		t.Fatalf("state %s", got)
	}
	// a is told to revoke t-2 and t-3 and stays at epoch 1.
	a = s.report("a", 1, a.Assignment)
	if a.MemberEpoch != 1 || fmt.Sprint(flatten(a.Assignment)) != "[t-0 t-1]" {
		t.Fatalf("a asked to revoke with %+v", a)
	}
	s.checkExclusive()
	// Still unreleased for b.
	if b = s.report("b", 2, b.Assignment); len(flatten(b.Assignment)) != 0 {
		t.Fatalf("b got %v before a revoked", flatten(b.Assignment))
	}
	// a reports the revocation and moves to epoch 2; b then gets t-2, t-3.
	a = s.report("a", 1, a.Assignment)
	if a.MemberEpoch != 2 {
		t.Fatalf("a after revoking: %+v", a)
	}
	b = s.report("b", 2, b.Assignment)
	if fmt.Sprint(flatten(b.Assignment)) != "[t-2 t-3]" {
		t.Fatalf("b after a revoked: %+v", b)
	}
	s.checkExclusive()
	if got := s.g.StateName(); got != "Stable" {
		t.Fatalf("state %s", got)
	}
	// Fencing: a future epoch, an old one, an unknown member.
	for _, tc := range []struct {
		id    string
		epoch int32
		want  *kerr.Error
	}{
		{"a", 3, kerr.FencedMemberEpoch},
		{"a", 1, nil}, // the previous epoch, owning no more than assigned: a lost response
		{"b", 1, kerr.FencedMemberEpoch},
		{"z", 2, kerr.UnknownMemberID},
	} {
		owned := []TopicPartitions{}
		if tc.id == "a" {
			owned = a.Assignment
		}
		if got := s.report(tc.id, tc.epoch, owned); got.Err != tc.want {
			t.Errorf("%s at epoch %d: %v, want %v", tc.id, tc.epoch, got.Err, tc.want)
		}
	}
	// Commits are fenced by member epoch.
	commit := func(id string, epoch int32) *kerr.Error {
		err, eff := s.g.Commit(s.now, CommitRequest{MemberID: id, Generation: epoch, Offsets: []CommitOffset{{TopicPartition: TopicPartition{Topic: "t", Partition: 0}, OffsetAndMetadata: OffsetAndMetadata{LeaderEpoch: -1, ExpireTimestamp: -1}}}})
		s.collect(eff)
		return err
	}
	if err := commit("a", 2); err != nil {
		t.Errorf("commit at the member epoch: %v", err)
	}
	if err := commit("a", 1); err != kerr.StaleMemberEpoch {
		t.Errorf("commit at an older epoch: %v", err)
	}
	if err := commit("a", 3); err != kerr.FencedMemberEpoch {
		t.Errorf("commit at a newer epoch: %v", err)
	}
	if err := commit("x", 2); err != kerr.UnknownMemberID {
		t.Errorf("commit of an unknown member: %v", err)
	}
	// Classic members cannot join.
	var replies []Reply
	eff := s.g.Join(s.now, JoinRequest{ProtocolType: "consumer", SessionTimeout: 10 * time.Second, Protocols: []Protocol{{Name: "range"}}}, "c")
	replies = append(replies, eff.Replies...)
	s.collect(eff)
	if len(replies) != 1 || replies[0].Join.Err != kerr.InconsistentGroupProtocol {
		t.Fatalf("classic join: %+v", replies)
	}
	// b leaves: a gets everything at the next epoch.
	if res := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "b", MemberEpoch: LeaveEpoch, RebalanceTimeout: -1}); res.Err != nil || res.MemberEpoch != -1 {
		t.Fatalf("leave: %+v", res)
	}
	a = s.report("a", 2, a.Assignment)
	if a.MemberEpoch != 3 || len(flatten(a.Assignment)) != 4 {
		t.Fatalf("a after b left: %+v", a)
	}
}

func TestConsumerGroupSessionAndRevocationTimeouts(t *testing.T) {
	s := newConsumerScenario(t, TopicInfo{Name: "t", Partitions: 2})
	a := s.join("a", "uniform", "t")
	s.join("b", "uniform", "t")
	// a never revokes: after its rebalance timeout it is fenced out.
	a = s.report("a", a.MemberEpoch, a.Assignment)
	if len(flatten(a.Assignment)) != 1 {
		t.Fatalf("a asked to revoke: %+v", a)
	}
	s.now = s.now.Add(5 * time.Second)
	if b := s.report("b", 2, []TopicPartitions{}); len(flatten(b.Assignment)) != 0 {
		t.Fatalf("b got partitions a still owns: %+v", b)
	}
	s.now = s.now.Add(26 * time.Second)
	if d := s.g.NextDeadline(); d.After(s.now) {
		t.Fatalf("next deadline %v after now %v", d, s.now)
	}
	s.collect(s.g.Tick(s.now))
	if res := s.report("a", 1, nil); res.Err != kerr.UnknownMemberID {
		t.Fatalf("a after its revocation timeout: %+v", res)
	}
	// b's session: it heartbeated 26s ago (> 10s): gone as well.
	if res := s.report("b", 2, nil); res.Err != kerr.UnknownMemberID {
		t.Fatalf("b after its session: %+v", res)
	}
	// Empty, and kept (as in Kafka) until deleted or cleaned up.
	if s.g.StateName() != "Empty" || s.g.IsPristine() {
		t.Fatalf("group %s, pristine %v: want Empty and kept", s.g.StateName(), s.g.IsPristine())
	}
}

func TestConsumerGroupStaticMemberReplacement(t *testing.T) {
	s := newConsumerScenario(t, TopicInfo{Name: "t", Partitions: 2})
	inst := "i"
	res := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "old", InstanceID: &inst, SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{}})
	epoch := res.MemberEpoch
	// Another id with the same instance while it is active.
	if got := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "new", InstanceID: &inst, SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{}}); got.Err != kerr.UnreleasedInstanceID {
		t.Fatalf("second instance: %+v", got)
	}
	if got := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "old", InstanceID: &inst, MemberEpoch: StaticLeaveEpoch, RebalanceTimeout: -1}); got.Err != nil || got.MemberEpoch != StaticLeaveEpoch {
		t.Fatalf("static leave: %+v", got)
	}
	got := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "new", InstanceID: &inst, SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{}})
	if got.Err != nil || got.MemberEpoch != epoch || len(flatten(got.Assignment)) != 2 {
		t.Fatalf("replacement: %+v (epoch before %d)", got, epoch)
	}
}

func TestConsumerHeartbeatValidation(t *testing.T) {
	s := newConsumerScenario(t, TopicInfo{Name: "t", Partitions: 1})
	bad := "nope"
	badRegex := "("
	for _, tc := range []struct {
		name string
		req  ConsumerHeartbeatRequest
		want *kerr.Error
	}{
		{"no member id", ConsumerHeartbeatRequest{SubscribedTopicNames: []string{"t"}}, kerr.InvalidRequest},
		{"no subscription", ConsumerHeartbeatRequest{MemberID: "m"}, kerr.InvalidRequest},
		{"owned at join", ConsumerHeartbeatRequest{MemberID: "m", SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{{Topic: "t", Partitions: []int32{0}}}}, kerr.InvalidRequest},
		{"epoch below -2", ConsumerHeartbeatRequest{MemberID: "m", MemberEpoch: -3}, kerr.InvalidRequest},
		{"unknown assignor", ConsumerHeartbeatRequest{MemberID: "m", SubscribedTopicNames: []string{"t"}, ServerAssignor: &bad}, kerr.UnsupportedAssignor},
		{"bad regex", ConsumerHeartbeatRequest{MemberID: "m", SubscribedTopicRegex: &badRegex}, kerr.InvalidRegularExpression},
		{"unknown member", ConsumerHeartbeatRequest{MemberID: "m", MemberEpoch: 4}, kerr.UnknownMemberID},
	} {
		if got := s.heartbeat(tc.req); got.Err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got.Err, tc.want)
		}
	}
	// A regex subscription resolves against the topics.
	re := "t.*"
	if got := s.heartbeat(ConsumerHeartbeatRequest{MemberID: "r", SubscribedTopicRegex: &re, Owned: []TopicPartitions{}}); got.Err != nil || fmt.Sprint(flatten(got.Assignment)) != "[t-0]" {
		t.Fatalf("regex: %+v", got)
	}
}
