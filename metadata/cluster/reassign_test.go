package cluster

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

// reassignState is scenarioState plus live brokers 4 and 5.
func reassignState(t *testing.T) State {
	t.Helper()
	return mustApply(t, scenarioState(t),
		RegisterBroker{NodeID: 4, IncarnationID: "a4", Addr: "h4:9092", TimeMs: 1000},
		RegisterBroker{NodeID: 5, IncarnationID: "a5", Addr: "h5:9092", TimeMs: 1000})
}

func wantReplicas(t *testing.T, got Partition, replicas, adding, removing []int32) {
	t.Helper()
	if !slices.Equal(got.Replicas, replicas) || !slices.Equal(got.AddingReplicas, adding) || !slices.Equal(got.RemovingReplicas, removing) {
		t.Fatalf("replicas %v adding %v removing %v; want %v %v %v",
			got.Replicas, got.AddingReplicas, got.RemovingReplicas, replicas, adding, removing)
	}
	if got.Reassigning() != (len(adding) > 0 || len(removing) > 0) {
		t.Fatalf("Reassigning() = %v", got.Reassigning())
	}
}

func TestReassignmentRejections(t *testing.T) {
	s := reassignState(t)
	for _, tc := range []struct {
		name  string
		rec   ReassignPartition
		wants []error
	}{
		{"unregistered broker", ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{1, 9}}, []error{ErrInvalidReplicaAssignment, ErrRejected}},
		{"duplicate broker", ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{1, 2, 1}}, []error{ErrInvalidReplicaAssignment, ErrInvalid}},
		{"negative broker", ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{-3}}, []error{ErrInvalidReplicaAssignment, ErrInvalid}},
		{"cancel with none", ReassignPartition{Topic: "orders", Partition: 0}, []error{ErrNoReassignmentInProgress, ErrRejected}},
		{"cancel with empty target", ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{}}, []error{ErrNoReassignmentInProgress}},
		{"no topic", ReassignPartition{Topic: "nope", Partition: 0, Target: []int32{1}}, []error{ErrTopicNotFound}},
		{"no partition", ReassignPartition{Topic: "orders", Partition: 7, Target: []int32{1}}, []error{ErrPartitionNotFound}},
	} {
		got, err := Apply(s, tc.rec)
		for _, want := range tc.wants {
			if !errors.Is(err, want) {
				t.Errorf("%s: err %v, want %v", tc.name, err, want)
			}
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("%s: rejected record changed the state", tc.name)
		}
	}
}

func TestReassignmentCompletesWhenAddedReplicasJoinISR(t *testing.T) {
	s := reassignState(t)
	// orders-0: [1 2 3] → [4 1 2]: 4 is added, 3 removed.
	s = mustApply(t, s, ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{4, 1, 2}})
	p := part(t, s, "orders", 0)
	wantReplicas(t, p, []int32{4, 1, 2, 3}, []int32{4}, []int32{3})
	wantPartition(t, p, 1, []int32{1, 2, 3}, 0, 1)

	// The controller has nothing to elect, and a preferred election does
	// not pick the new replica before it is in sync.
	if recs := PlanElections(s); len(recs) != 0 {
		t.Fatalf("elections: %v", recs)
	}
	if recs := PlanPreferredElections(s); len(recs) != 0 {
		t.Fatalf("preferred elections: %v", recs)
	}
	// An ISR change without 4 leaves the reassignment running.
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 0, NewISR: []int32{1, 2}})
	p = part(t, s, "orders", 0)
	wantReplicas(t, p, []int32{4, 1, 2, 3}, []int32{4}, []int32{3})
	wantPartition(t, p, 1, []int32{1, 2}, 0, 2)

	// 4 catches up and joins: the reassignment completes in the same record.
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 2, LeaderEpoch: 0, NewISR: []int32{1, 2, 4}})
	p = part(t, s, "orders", 0)
	wantReplicas(t, p, []int32{4, 1, 2}, nil, nil)
	wantPartition(t, p, 1, []int32{1, 2, 4}, 0, 3)
	// Now 4 is the preferred leader.
	recs := PlanPreferredElections(s)
	if !reflect.DeepEqual(recs, []Record{ElectLeader{Topic: "orders", Partition: 0, Preferred: true}}) {
		t.Fatalf("preferred: %#v", recs)
	}
	s = mustApply(t, s, recs...)
	wantPartition(t, part(t, s, "orders", 0), 4, []int32{1, 2, 4}, 1, 4)
}

func TestReassignmentRemovingTheLeader(t *testing.T) {
	s := reassignState(t)
	s = mustApply(t, s, ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{5, 2, 3}},
		AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 0, NewISR: []int32{1, 2, 3, 5}})
	p := part(t, s, "orders", 0)
	wantReplicas(t, p, []int32{5, 2, 3}, nil, nil)
	// Leader 1 was removed: the first eligible ISR member in replica order leads.
	wantPartition(t, p, 5, []int32{2, 3, 5}, 1, 2)
	if s.LeadersOn(1) != 0 {
		t.Fatalf("LeadersOn(1) = %d", s.LeadersOn(1))
	}
}

func TestReassignmentWithoutNewReplicasCompletesAtOnce(t *testing.T) {
	s := reassignState(t)
	// Shrink to [2 1]: nothing to add.
	s2 := mustApply(t, s, ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{2, 1}})
	p := part(t, s2, "orders", 0)
	wantReplicas(t, p, []int32{2, 1}, nil, nil)
	wantPartition(t, p, 1, []int32{1, 2}, 0, 1)
	// Reorder: only the preferred leader changes.
	s3 := mustApply(t, s, ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{3, 2, 1}})
	p = part(t, s3, "orders", 0)
	wantReplicas(t, p, []int32{3, 2, 1}, nil, nil)
	wantPartition(t, p, 1, []int32{1, 2, 3}, 0, 1)
	if recs := PlanPreferredElections(s3); !reflect.DeepEqual(recs, []Record{ElectLeader{Topic: "orders", Partition: 0, Preferred: true}}) {
		t.Fatalf("preferred: %#v", recs)
	}
	// A later partition of a topic whose first partition shrank uses the new count.
	s2 = mustApply(t, s2, CreatePartitions{Topic: "orders", Partitions: []PartitionAssignment{{Replicas: []int32{4, 5}}}})
	if _, err := Apply(s2, CreatePartitions{Topic: "orders", Partitions: []PartitionAssignment{{Replicas: []int32{1, 4, 5}}}}); !errors.Is(err, ErrReplicaCountDiffering) {
		t.Fatalf("rf 3 after shrinking to 2: %v", err)
	}
}

func TestReassignmentWaitsForANonEmptyISR(t *testing.T) {
	s := reassignState(t)
	// orders-0's ISR is {1} alone; moving to [2 3] would empty it.
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 0, LeaderEpoch: 0, NewISR: []int32{1}},
		ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{2, 3}})
	p := part(t, s, "orders", 0)
	wantReplicas(t, p, []int32{2, 3, 1}, nil, []int32{1})
	wantPartition(t, p, 1, []int32{1}, 0, 2)
	// 2 rejoins: done.
	s = mustApply(t, s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 2, LeaderEpoch: 0, NewISR: []int32{1, 2}})
	p = part(t, s, "orders", 0)
	wantReplicas(t, p, []int32{2, 3}, nil, nil)
	wantPartition(t, p, 2, []int32{2}, 1, 3)
}

func TestReassignmentCancel(t *testing.T) {
	s := reassignState(t)
	// Cancel before anything joined: back to the original replicas.
	s1 := mustApply(t, s, ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{4, 1, 2}},
		ReassignPartition{Topic: "orders", Partition: 0})
	p := part(t, s1, "orders", 0)
	wantReplicas(t, p, []int32{1, 2, 3}, nil, nil)
	wantPartition(t, p, 1, []int32{1, 2, 3}, 0, 2)

	// [1 2 3] → [4 5]; 4 joins and becomes leader, 5 has not; cancel: 4
	// leaves the ISR and the leadership returns to an original replica.
	s2 := mustApply(t, s, ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{4, 5}},
		AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 1, LeaderEpoch: 0, NewISR: []int32{1, 2, 3, 4}, Leader: ptr(int32(4))})
	p = part(t, s2, "orders", 0)
	wantReplicas(t, p, []int32{4, 5, 1, 2, 3}, []int32{4, 5}, []int32{1, 2, 3})
	wantPartition(t, p, 4, []int32{1, 2, 3, 4}, 1, 2)
	s3 := mustApply(t, s2, ReassignPartition{Topic: "orders", Partition: 0})
	p = part(t, s3, "orders", 0)
	wantReplicas(t, p, []int32{1, 2, 3}, nil, nil)
	wantPartition(t, p, 1, []int32{1, 2, 3}, 2, 3)

	// If only the added leader is in sync, a cancel keeps it (ISR never empty).
	s4 := mustApply(t, s2, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 2, LeaderEpoch: 1, NewISR: []int32{4}},
		ReassignPartition{Topic: "orders", Partition: 0})
	p = part(t, s4, "orders", 0)
	wantReplicas(t, p, []int32{1, 2, 3, 4}, nil, nil)
	wantPartition(t, p, 4, []int32{4}, 1, 4)

	// A new target replaces one in progress, starting from the original replicas.
	s5 := mustApply(t, s2, ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{5, 1, 2}})
	p = part(t, s5, "orders", 0)
	wantReplicas(t, p, []int32{5, 1, 2, 3}, []int32{5}, []int32{3})
	wantPartition(t, p, 1, []int32{1, 2, 3}, 2, 3)
}

func TestReassignmentWithFencing(t *testing.T) {
	s := reassignState(t)
	s = mustApply(t, s, ReassignPartition{Topic: "orders", Partition: 0, Target: []int32{4, 1, 2}}, FenceBroker{NodeID: 1})
	p := part(t, s, "orders", 0)
	wantReplicas(t, p, []int32{4, 1, 2, 3}, []int32{4}, []int32{3})
	wantPartition(t, p, 2, []int32{2, 3}, 1, 2)
	// A fenced target replica cannot join; an unfenced one completes the move.
	s = mustApply(t, s, FenceBroker{NodeID: 4})
	if _, err := Apply(s, AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 2, LeaderEpoch: 1, NewISR: []int32{2, 3, 4}}); !errors.Is(err, ErrIneligibleReplica) {
		t.Fatalf("fenced adding replica joined: %v", err)
	}
	s = mustApply(t, s, UnfenceBroker{NodeID: 4},
		AlterPartition{Topic: "orders", Partition: 0, PartitionEpoch: 2, LeaderEpoch: 1, NewISR: []int32{2, 3, 4}})
	p = part(t, s, "orders", 0)
	wantReplicas(t, p, []int32{4, 1, 2}, nil, nil)
	wantPartition(t, p, 2, []int32{2, 4}, 1, 3)
	// Assignment of new partitions counts the moved replicas.
	plan, err := PlanAssignment(s, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := plan[0].Replicas[0]; got != 3 && got != 5 {
		t.Fatalf("new partition led by %d; 3 and 5 lead nothing", got)
	}
}
