package cluster

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

const sessionTimeoutMs = 9000

// scenarioState is three live brokers (heartbeats at 1000 ms) and topic
// "orders" with two partitions replicated on all three.
func scenarioState(t testing.TB) State {
	t.Helper()
	s, err := ApplyAll(State{},
		InitCluster{ClusterID: "test-cluster"},
		RegisterBroker{NodeID: 1, IncarnationID: "a1", Addr: "h1:9092", TimeMs: 1000},
		RegisterBroker{NodeID: 2, IncarnationID: "a2", Addr: "h2:9092", TimeMs: 1000},
		RegisterBroker{NodeID: 3, IncarnationID: "a3", Addr: "h3:9092", TimeMs: 1000},
		CreateTopic{Name: "orders", ID: TopicID{9}, Partitions: []PartitionAssignment{
			{Replicas: []int32{1, 2, 3}}, {Replicas: []int32{2, 3, 1}},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func part(t *testing.T, s State, topic string, i int) Partition {
	t.Helper()
	tp, ok := s.Topic(topic)
	if !ok || i >= len(tp.Partitions) {
		t.Fatalf("no partition %s-%d", topic, i)
	}
	return tp.Partitions[i]
}

func mustApply(t *testing.T, s State, recs ...Record) State {
	t.Helper()
	s, err := ApplyAll(s, recs...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantPartition(t *testing.T, got Partition, leader int32, isr []int32, leaderEpoch, partitionEpoch int32) {
	t.Helper()
	if got.Leader != leader || !slices.Equal(got.ISR, isr) || got.LeaderEpoch != leaderEpoch || got.PartitionEpoch != partitionEpoch {
		t.Fatalf("partition = leader %d isr %v leader epoch %d partition epoch %d; want leader %d isr %v leader epoch %d partition epoch %d",
			got.Leader, got.ISR, got.LeaderEpoch, got.PartitionEpoch, leader, isr, leaderEpoch, partitionEpoch)
	}
}

func TestCreateTopicStartsWithPreferredLeader(t *testing.T) {
	s := scenarioState(t)
	wantPartition(t, part(t, s, "orders", 0), 1, []int32{1, 2, 3}, 0, 0)
	wantPartition(t, part(t, s, "orders", 1), 2, []int32{2, 3, 1}, 0, 0)
	if s.ClusterID != "test-cluster" {
		t.Fatalf("cluster id %q", s.ClusterID)
	}
	if _, err := Apply(s, InitCluster{ClusterID: "other"}); !errors.Is(err, ErrClusterInitialized) {
		t.Fatalf("second cluster id: %v", err)
	}
}

func TestRegistrationAndHeartbeats(t *testing.T) {
	s := scenarioState(t)
	for _, tc := range []struct {
		name string
		rec  Record
		want error
	}{
		{"unknown broker", BrokerHeartbeat{NodeID: 7, IncarnationID: "x", TimeMs: 2000}, ErrBrokerNotRegistered},
		{"stale incarnation", BrokerHeartbeat{NodeID: 1, IncarnationID: "old", TimeMs: 2000}, ErrStaleIncarnation},
		{"fence unknown", FenceBroker{NodeID: 7}, ErrBrokerNotRegistered},
		{"unfence unknown", UnfenceBroker{NodeID: 7}, ErrBrokerNotRegistered},
	} {
		got, err := Apply(s, tc.rec)
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrRejected) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("%s: rejected record changed the state", tc.name)
		}
	}

	s = mustApply(t, s, BrokerHeartbeat{NodeID: 1, IncarnationID: "a1", TimeMs: 5000})
	if s.Brokers[1].LastHeartbeatMs != 5000 {
		t.Fatalf("heartbeat not recorded: %+v", s.Brokers[1])
	}
	// An older heartbeat (reordered) never moves time back.
	s = mustApply(t, s, BrokerHeartbeat{NodeID: 1, IncarnationID: "a1", TimeMs: 4000})
	if s.Brokers[1].LastHeartbeatMs != 5000 {
		t.Fatalf("heartbeat went back: %+v", s.Brokers[1])
	}
	// Same incarnation re-registering (a retry) changes nothing else.
	s = mustApply(t, s, RegisterBroker{NodeID: 1, IncarnationID: "a1", Addr: "h1:9092", TimeMs: 5100})
	wantPartition(t, part(t, s, "orders", 0), 1, []int32{1, 2, 3}, 0, 0)

	// A restart (new incarnation) takes node 1 out of the ISRs and its leadership away.
	s = mustApply(t, s, RegisterBroker{NodeID: 1, IncarnationID: "b1", Addr: "h1:9094", TimeMs: 6000})
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3}, 1, 1)
	wantPartition(t, part(t, s, "orders", 1), 2, []int32{2, 3}, 0, 1)
	if b := s.Brokers[1]; b.IncarnationID != "b1" || b.Addr != "h1:9094" || b.Fenced {
		t.Fatalf("re-registration: %+v", b)
	}
	if _, err := Apply(s, BrokerHeartbeat{NodeID: 1, IncarnationID: "a1", TimeMs: 7000}); !errors.Is(err, ErrStaleIncarnation) {
		t.Fatalf("old incarnation heartbeat: %v", err)
	}
}

func TestFencingByControllerDecision(t *testing.T) {
	s := scenarioState(t)
	// Brokers 2 and 3 heartbeat; broker 1 goes quiet.
	s = mustApply(t, s,
		BrokerHeartbeat{NodeID: 2, IncarnationID: "a2", TimeMs: 9000},
		BrokerHeartbeat{NodeID: 3, IncarnationID: "a3", TimeMs: 9000})
	if recs := PlanFencing(s, 1000+sessionTimeoutMs, sessionTimeoutMs); len(recs) != 0 {
		t.Fatalf("fenced at exactly the timeout: %v", recs)
	}
	recs := PlanFencing(s, 1001+sessionTimeoutMs, sessionTimeoutMs)
	if !reflect.DeepEqual(recs, []Record{FenceBroker{NodeID: 1}}) {
		t.Fatalf("plan: %#v", recs)
	}
	s = mustApply(t, s, recs...)
	if !s.Brokers[1].Fenced || s.Live(1) {
		t.Fatal("broker 1 not fenced")
	}
	// It loses its leadership of partition 0 to the next ISR member in
	// replica order, and leaves both ISRs.
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3}, 1, 1)
	wantPartition(t, part(t, s, "orders", 1), 2, []int32{2, 3}, 0, 1)
	if again := PlanFencing(s, 1001+sessionTimeoutMs, sessionTimeoutMs); len(again) != 0 {
		t.Fatalf("fenced twice: %v", again)
	}
	// Fencing is idempotent.
	if s2 := mustApply(t, s, FenceBroker{NodeID: 1}); !reflect.DeepEqual(s2, s) {
		t.Fatal("second fence changed the state")
	}

	// 2 and 3 go quiet too. The last ISR member stays in the ISR; with no
	// live member there is no leader (unclean election is off).
	s = mustApply(t, s, PlanFencing(s, 9001+sessionTimeoutMs, sessionTimeoutMs)...)
	wantPartition(t, part(t, s, "orders", 0), NoLeader, []int32{3}, 3, 3)
	if recs := PlanElections(s); len(recs) != 0 {
		t.Fatalf("elections with no live ISR member: %v", recs)
	}

	// Broker 3 heartbeats again: the controller unfences it, then elects it.
	s = mustApply(t, s, BrokerHeartbeat{NodeID: 3, IncarnationID: "a3", TimeMs: 20000})
	recs = PlanFencing(s, 20001, sessionTimeoutMs)
	if !reflect.DeepEqual(recs, []Record{UnfenceBroker{NodeID: 3}}) {
		t.Fatalf("unfence plan: %#v", recs)
	}
	s = mustApply(t, s, recs...)
	elections := PlanElections(s)
	if len(elections) != 2 {
		t.Fatalf("elections: %#v", elections)
	}
	s = mustApply(t, s, elections...)
	wantPartition(t, part(t, s, "orders", 0), 3, []int32{3}, 4, 4)
	if len(PlanElections(s)) != 0 {
		t.Fatal("elections planned after electing")
	}
}

func TestUncleanElectionOnlyWhenEnabled(t *testing.T) {
	s := scenarioState(t)
	// ISR of partition 0 shrinks to {1}; then 1 is fenced.
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 0, NewISR: []int32{1}})
	s = mustApply(t, s, FenceBroker{NodeID: 1})
	wantPartition(t, part(t, s, "orders", 0), NoLeader, []int32{1}, 1, 2)
	for _, r := range PlanElections(s) {
		if r.(ElectLeader).Partition == 0 {
			t.Fatalf("clean election planned with no live ISR member: %v", r)
		}
	}
	if s2 := mustApply(t, s, ElectLeader{Topic: "orders", Partition: 0}); !reflect.DeepEqual(s2, s) {
		t.Fatal("election without live ISR member changed the state")
	}
	// Enabling unclean election lets a live out-of-sync replica lead.
	s = mustApply(t, s, AlterConfigs{Topic: "orders", Configs: map[string]string{UncleanLeaderElectionConfig: "true"}})
	recs := PlanElections(s)
	if len(recs) != 1 {
		t.Fatalf("plan: %v", recs)
	}
	s = mustApply(t, s, recs...)
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2}, 2, 3)
	// An explicit unclean election works without the config as well.
	s = scenarioState(t)
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 0, NewISR: []int32{1}}, FenceBroker{NodeID: 1},
		ElectLeader{Topic: "orders", Partition: 0, Unclean: true})
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2}, 2, 3)
}

func TestPreferredLeaderElection(t *testing.T) {
	s := scenarioState(t)
	s = mustApply(t, s, FenceBroker{NodeID: 1}, UnfenceBroker{NodeID: 1})
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3}, 1, 1)
	// 1 is out of the ISR: the preferred election keeps 2.
	s = mustApply(t, s, ElectLeader{Topic: "orders", Partition: 0, Preferred: true})
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3}, 1, 1)
	// Back in the ISR, 1 takes over.
	s = mustApply(t, s,
		AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 1, NewISR: []int32{2, 3, 1}},
		ElectLeader{Topic: "orders", Partition: 0, Preferred: true})
	wantPartition(t, part(t, s, "orders", 0), 1, []int32{2, 3, 1}, 2, 3)
}

func TestAlterPartition(t *testing.T) {
	s := scenarioState(t)
	for _, tc := range []struct {
		name string
		rec  AlterPartition
		want error
	}{
		{"stale partition epoch", AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 5, LeaderEpoch: 0, NewISR: []int32{1, 2}}, ErrStalePartitionEpoch},
		{"fenced leader epoch", AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 3, NewISR: []int32{1, 2}}, ErrFencedLeaderEpoch},
		{"not a replica", AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 0, NewISR: []int32{1, 4}}, ErrInvalidReplicaSubset},
		{"leader outside isr", AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 0, NewISR: []int32{1, 2}, Leader: ptr(int32(3))}, ErrInvalidLeader},
		{"no topic", AlterPartition{Topic: "nope", Partition: 0, NewISR: []int32{1}}, ErrTopicNotFound},
		{"no partition", AlterPartition{Topic: "orders", Partition: 9, NewISR: []int32{1}}, ErrPartitionNotFound},
	} {
		if _, err := Apply(s, tc.rec); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}

	// Shrink: partition epoch bumps, leader epoch does not.
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 0, NewISR: []int32{1, 2}})
	wantPartition(t, part(t, s, "orders", 0), 1, []int32{1, 2}, 0, 1)
	// The same request again is stale now (a retried or duplicated AlterPartition).
	if _, err := Apply(s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 0, NewISR: []int32{1, 2}}); !errors.Is(err, ErrStalePartitionEpoch) {
		t.Fatalf("duplicate: %v", err)
	}
	// A fenced broker cannot join the ISR.
	s = mustApply(t, s, FenceBroker{NodeID: 3})
	if _, err := Apply(s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 0, NewISR: []int32{1, 2, 3}}); !errors.Is(err, ErrIneligibleReplica) {
		t.Fatalf("fenced joins isr: %v", err)
	}
	s = mustApply(t, s, UnfenceBroker{NodeID: 3})
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 0, NewISR: []int32{1, 2, 3}})
	wantPartition(t, part(t, s, "orders", 0), 1, []int32{1, 2, 3}, 0, 2)
	// Dropping the leader from the ISR elects the next member; leader epoch bumps.
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 2, LeaderEpoch: -1, NewISR: []int32{2, 3}})
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3}, 1, 3)
	// An explicit leader.
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 3, LeaderEpoch: 1, NewISR: []int32{2, 3}, Leader: ptr(int32(3))})
	wantPartition(t, part(t, s, "orders", 0), 3, []int32{2, 3}, 2, 4)
}

func TestTopicLifecycle(t *testing.T) {
	s := scenarioState(t)
	before, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		rec  Record
		want error
	}{
		{"exists", CreateTopic{Name: "orders", ID: TopicID{8}, Partitions: []PartitionAssignment{{Replicas: []int32{1}}}}, ErrTopicExists},
		{"id in use", CreateTopic{Name: "other", ID: TopicID{9}, Partitions: []PartitionAssignment{{Replicas: []int32{1}}}}, ErrTopicIDExists},
		{"uneven rf", CreateTopic{Name: "other", ID: TopicID{8}, Partitions: []PartitionAssignment{{Replicas: []int32{1}}, {Replicas: []int32{1, 2}}}}, ErrReplicaCountDiffering},
		{"delete missing", DeleteTopic{Name: "nope"}, ErrTopicNotFound},
		{"delete wrong id", DeleteTopic{Name: "orders", ID: TopicID{7}}, ErrTopicNotFound},
		{"grow missing", CreatePartitions{Topic: "nope", Partitions: []PartitionAssignment{{Replicas: []int32{1}}}}, ErrTopicNotFound},
		{"grow uneven rf", CreatePartitions{Topic: "orders", Partitions: []PartitionAssignment{{Replicas: []int32{1}}}}, ErrReplicaCountDiffering},
		{"configs missing", AlterConfigs{Topic: "nope"}, ErrTopicNotFound},
	} {
		if _, err := Apply(s, tc.rec); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}

	s2 := mustApply(t, s,
		CreatePartitions{Topic: "orders", Partitions: []PartitionAssignment{{Replicas: []int32{3, 1, 2}}}},
		AlterConfigs{Topic: "orders", Configs: map[string]string{"retention.ms": "5"}},
		CreateTopic{Name: "logs", ID: TopicID{4}, Partitions: []PartitionAssignment{{Replicas: []int32{2}}}},
		AllocateProducerIDs{N: 1000}, AllocateProducerIDs{N: 10},
	)
	if tp, _ := s2.Topic("orders"); len(tp.Partitions) != 3 || tp.Configs["retention.ms"] != "5" || tp.Partitions[2].Leader != 3 {
		t.Fatalf("orders: %+v", tp)
	}
	if tp, ok := s2.TopicByID(TopicID{4}); !ok || tp.Name != "logs" {
		t.Fatal("lookup by id")
	}
	if s2.NextProducerID != 1010 {
		t.Fatalf("next producer id %d", s2.NextProducerID)
	}
	s3 := mustApply(t, s2, DeleteTopic{Name: "logs", ID: TopicID{4}})
	if _, ok := s3.TopicByID(TopicID{4}); ok {
		t.Fatal("deleted topic still indexed by id")
	}
	if !reflect.DeepEqual(s3.TopicNames(), []string{"orders"}) {
		t.Fatalf("names: %v", s3.TopicNames())
	}

	// None of that touched the state it started from: states are values.
	after, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Fatalf("Apply modified its input:\n%s\n%s", before, after)
	}
	if _, ok := s2.Topic("logs"); !ok {
		t.Fatal("deleting from s3 changed s2")
	}
}

func TestStateEncodeRoundTrip(t *testing.T) {
	s := mustApply(t, scenarioState(t), FenceBroker{NodeID: 2}, AllocateProducerIDs{N: 3})
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip:\n%+v\n%+v", got, s)
	}
	if _, err := DecodeState([]byte(`{"topics":{"a":{"name":"b"}}}`)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("inconsistent state accepted: %v", err)
	}
	if _, err := DecodeState([]byte(`{`)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("bad json accepted: %v", err)
	}
}

func TestAssignmentBalance(t *testing.T) {
	s := scenarioState(t)
	s = mustApply(t, s, DeleteTopic{Name: "orders"})
	plan, err := PlanAssignment(s, 6, 2)
	if err != nil {
		t.Fatal(err)
	}
	leaders, replicas := map[int32]int{}, map[int32]int{}
	for _, p := range plan {
		if len(p.Replicas) != 2 || p.Replicas[0] == p.Replicas[1] {
			t.Fatalf("bad assignment %v", p.Replicas)
		}
		leaders[p.Replicas[0]]++
		for _, r := range p.Replicas {
			replicas[r]++
		}
	}
	for id := int32(1); id <= 3; id++ {
		if leaders[id] != 2 || replicas[id] != 4 {
			t.Fatalf("unbalanced: leaders %v replicas %v (plan %v)", leaders, replicas, plan)
		}
	}
	// A second topic balances against the first.
	s = mustApply(t, s, CreateTopic{Name: "a", ID: TopicID{1}, Partitions: plan})
	plan2, err := PlanAssignment(s, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := []int32{plan2[0].Replicas[0], plan2[1].Replicas[0], plan2[2].Replicas[0]}
	slices.Sort(got)
	if !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("second topic leaders %v", got)
	}
	// Fenced brokers get nothing; too few live brokers is an error.
	s = mustApply(t, s, FenceBroker{NodeID: 2})
	plan3, err := PlanAssignment(s, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan3 {
		if slices.Contains(p.Replicas, 2) {
			t.Fatalf("fenced broker assigned: %v", plan3)
		}
	}
	if _, err := PlanAssignment(s, 1, 3); !errors.Is(err, ErrInsufficientReplicas) {
		t.Fatalf("rf 3 on 2 live brokers: %v", err)
	}
}

func TestAssignmentRackAware(t *testing.T) {
	s := mustApply(t, State{},
		RegisterBroker{NodeID: 1, IncarnationID: "x", Addr: "h:1", Rack: "r1"},
		RegisterBroker{NodeID: 2, IncarnationID: "x", Addr: "h:2", Rack: "r1"},
		RegisterBroker{NodeID: 3, IncarnationID: "x", Addr: "h:3", Rack: "r2"},
		RegisterBroker{NodeID: 4, IncarnationID: "x", Addr: "h:4", Rack: "r2"},
	)
	plan, err := PlanAssignment(s, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int{}
	for _, p := range plan {
		if s.Brokers[p.Replicas[0]].Rack == s.Brokers[p.Replicas[1]].Rack {
			t.Fatalf("both replicas in one rack: %v", p.Replicas)
		}
		leaders[p.Replicas[0]]++
	}
	for id := int32(1); id <= 4; id++ {
		if leaders[id] != 2 {
			t.Fatalf("leaders %v", leaders)
		}
	}
}
