package cluster

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

// shutdownState is scenarioState plus topic "solo" whose only ISR member
// is broker 1.
func shutdownState(t *testing.T) State {
	t.Helper()
	s := mustApply(t, scenarioState(t),
		CreateTopic{Name: "solo", ID: TopicID{5}, Partitions: []PartitionAssignment{{Replicas: []int32{1, 2}}}},
		AlterPartition{Topic: "solo", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 0, NewISR: []int32{1}},
	)
	wantPartition(t, part(t, s, "solo", 0), 1, []int32{1}, 0, 1)
	return s
}

func TestControlledShutdownRejections(t *testing.T) {
	s := shutdownState(t)
	for _, tc := range []struct {
		name string
		rec  ControlledShutdown
		want error
	}{
		{"unknown broker", ControlledShutdown{NodeID: 7, IncarnationID: "x"}, ErrBrokerNotRegistered},
		{"stale incarnation", ControlledShutdown{NodeID: 1, IncarnationID: "old"}, ErrStaleIncarnation},
	} {
		got, err := Apply(s, tc.rec)
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrRejected) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("%s: rejected record changed the state", tc.name)
		}
	}
}

func TestControlledShutdownMovesLeadershipsAndISRPlaces(t *testing.T) {
	s := shutdownState(t)
	if s.LeadersOn(1) != 2 || s.LeadersOn(2) != 1 || s.LeadersOn(3) != 0 {
		t.Fatalf("leaders before: 1:%d 2:%d 3:%d", s.LeadersOn(1), s.LeadersOn(2), s.LeadersOn(3))
	}
	s = mustApply(t, s, ControlledShutdown{NodeID: 1, IncarnationID: "a1"})
	if b := s.Brokers[1]; !b.ShuttingDown || b.Fenced {
		t.Fatalf("broker 1: %+v", b)
	}
	if s.Eligible(1) || !s.Live(1) || !s.Eligible(2) {
		t.Fatalf("eligible(1)=%v live(1)=%v eligible(2)=%v", s.Eligible(1), s.Live(1), s.Eligible(2))
	}
	// Its leadership of orders-0 moves to the next ISR member; it leaves both ISRs.
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3}, 1, 1)
	wantPartition(t, part(t, s, "orders", 1), 2, []int32{2, 3}, 0, 1)
	// The last ISR member keeps its leadership (and its place), epochs untouched.
	wantPartition(t, part(t, s, "solo", 0), 1, []int32{1}, 0, 1)
	if got := s.LeadersOn(1); got != 1 {
		t.Fatalf("LeadersOn(1) = %d, want 1", got)
	}
	// The controller does not take it away either (nobody could lead).
	if recs := PlanElections(s); len(recs) != 0 {
		t.Fatalf("elections: %v", recs)
	}

	// A shutting-down broker rejoins no ISR and takes no new leadership.
	if _, err := Apply(s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 1, NewISR: []int32{2, 3, 1}}); !errors.Is(err, ErrIneligibleReplica) {
		t.Fatalf("shutting-down broker joins an isr: %v", err)
	}
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 1, PartitionEpoch: 1, LeaderEpoch: 0, NewISR: []int32{2, 3}, Leader: ptr(int32(3))})
	if _, err := Apply(s, AlterPartition{Topic: "solo", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 0, NewISR: []int32{1}, Leader: ptr(int32(1))}); err != nil {
		t.Fatalf("the current shutting-down leader re-asserting itself: %v", err)
	}
	if s2 := mustApply(t, s, ElectLeader{Topic: "solo", Partition: 0, Preferred: true}); !reflect.DeepEqual(s2, s) {
		t.Fatal("preferred election changed a partition with no eligible alternative")
	}
	if plan, err := PlanAssignment(s, 3, 2); err != nil {
		t.Fatal(err)
	} else {
		for _, a := range plan {
			if slices.Contains(a.Replicas, 1) {
				t.Fatalf("shutting-down broker assigned: %v", plan)
			}
		}
	}
	if _, err := PlanAssignment(s, 1, 3); !errors.Is(err, ErrInsufficientReplicas) {
		t.Fatalf("rf 3 with 2 eligible brokers: %v", err)
	}

	// Once broker 2 is back in solo's ISR, the controller moves the
	// leadership; a repeated shutdown request takes the ISR place too.
	s = mustApply(t, s, AlterPartition{Topic: "solo", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 0, NewISR: []int32{1, 2}})
	recs := PlanElections(s)
	if !reflect.DeepEqual(recs, []Record{ElectLeader{Topic: "solo", Partition: 0}}) {
		t.Fatalf("elections: %#v", recs)
	}
	s2 := mustApply(t, s, recs...)
	wantPartition(t, part(t, s2, "solo", 0), 2, []int32{1, 2}, 1, 3)
	s2 = mustApply(t, s2, ControlledShutdown{NodeID: 1, IncarnationID: "a1"})
	wantPartition(t, part(t, s2, "solo", 0), 2, []int32{2}, 1, 4)
	if s2.LeadersOn(1) != 0 {
		t.Fatalf("LeadersOn(1) = %d", s2.LeadersOn(1))
	}
	// The repeated request straight away does the same in one step.
	s3 := mustApply(t, s, ControlledShutdown{NodeID: 1, IncarnationID: "a1"})
	wantPartition(t, part(t, s3, "solo", 0), 2, []int32{2}, 1, 3)
	if again := mustApply(t, s3, ControlledShutdown{NodeID: 1, IncarnationID: "a1"}); !reflect.DeepEqual(again, s3) {
		t.Fatal("a repeated shutdown with nothing left to move changed the state")
	}
}

func TestControlledShutdownThenFenceOrReregister(t *testing.T) {
	s := mustApply(t, shutdownState(t), ControlledShutdown{NodeID: 1, IncarnationID: "a1"})

	// Fencing a shutting-down broker works as always: no eligible member, no leader.
	fenced := mustApply(t, s, FenceBroker{NodeID: 1})
	if b := fenced.Brokers[1]; !b.Fenced || !b.ShuttingDown {
		t.Fatalf("fenced: %+v", b)
	}
	wantPartition(t, part(t, fenced, "solo", 0), NoLeader, []int32{1}, 1, 2)

	// The same incarnation registering again (a retry) stays shutting down.
	retry := mustApply(t, s, RegisterBroker{NodeID: 1, IncarnationID: "a1", Addr: "h1:9092", TimeMs: 2000})
	if !retry.Brokers[1].ShuttingDown {
		t.Fatal("retried registration cleared ShuttingDown")
	}

	// A new incarnation starts eligible; the old one's leadership is gone.
	s = mustApply(t, s, RegisterBroker{NodeID: 1, IncarnationID: "b1", Addr: "h1:9092", TimeMs: 3000})
	if b := s.Brokers[1]; b.ShuttingDown || !s.Eligible(1) {
		t.Fatalf("re-registered: %+v", b)
	}
	wantPartition(t, part(t, s, "solo", 0), NoLeader, []int32{1}, 1, 2)
	if _, err := Apply(s, ControlledShutdown{NodeID: 1, IncarnationID: "a1"}); !errors.Is(err, ErrStaleIncarnation) {
		t.Fatalf("old incarnation's shutdown: %v", err)
	}
	// It can rejoin and lead again.
	s = mustApply(t, s, PlanElections(s)...)
	wantPartition(t, part(t, s, "solo", 0), 1, []int32{1}, 2, 3)
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 1, NewISR: []int32{2, 3, 1}})
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3, 1}, 1, 2)
}

func TestPreferredElectionsRestoreReplicaZero(t *testing.T) {
	s := scenarioState(t)
	if recs := PlanPreferredElections(s); len(recs) != 0 {
		t.Fatalf("balanced cluster: %v", recs)
	}
	s = mustApply(t, s, FenceBroker{NodeID: 1})
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3}, 1, 1)
	if recs := PlanPreferredElections(s); len(recs) != 0 {
		t.Fatalf("fenced preferred replica: %v", recs)
	}
	s = mustApply(t, s, UnfenceBroker{NodeID: 1})
	if recs := PlanPreferredElections(s); len(recs) != 0 {
		t.Fatalf("preferred replica out of the isr: %v", recs)
	}
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 1, NewISR: []int32{2, 3, 1}})
	recs := PlanPreferredElections(s)
	if !reflect.DeepEqual(recs, []Record{ElectLeader{Topic: "orders", Partition: 0, Preferred: true}}) {
		t.Fatalf("plan: %#v", recs)
	}
	// While replica 0 shuts down it gets nothing back.
	if got := PlanPreferredElections(mustApply(t, s, ControlledShutdown{NodeID: 1, IncarnationID: "a1"})); len(got) != 0 {
		t.Fatalf("shutting-down preferred replica: %v", got)
	}
	s = mustApply(t, s, recs...)
	wantPartition(t, part(t, s, "orders", 0), 1, []int32{2, 3, 1}, 2, 3)
	if recs := PlanPreferredElections(s); len(recs) != 0 {
		t.Fatalf("after restoring: %v", recs)
	}
}

func TestStateEncodeRoundTripNewFields(t *testing.T) {
	s := mustApply(t, scenarioState(t),
		RegisterBroker{NodeID: 4, IncarnationID: "a4", Addr: "h4:9092", TimeMs: 1000},
		ControlledShutdown{NodeID: 3, IncarnationID: "a3"},
		ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{4, 1, 2}})
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
	if !got.Brokers[3].ShuttingDown || !part(t, got, "orders", 0).Reassigning() {
		t.Fatal("new fields lost")
	}
	// A state written before these fields existed still decodes.
	old := `{"next_producer_id":0,"brokers":{"1":{"node_id":1,"incarnation_id":"x","addr":"h:1","last_heartbeat_ms":0}},` +
		`"topics":{"t":{"name":"t","id":"AQAAAAAAAAAAAAAAAAAAAA","partitions":[{"replicas":[1],"isr":[1],"leader":1,"leader_epoch":0,"partition_epoch":0}]}}}`
	prev, err := DecodeState([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if prev.Brokers[1].ShuttingDown || prev.Topics["t"].Partitions[0].Reassigning() || !prev.Eligible(1) {
		t.Fatalf("old state: %+v", prev)
	}
}
