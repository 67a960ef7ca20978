package cluster

import (
	"errors"
	"reflect"
	"testing"
)

func oneReplica(ids ...int32) []PartitionAssignment {
	out := make([]PartitionAssignment, len(ids))
	for i, id := range ids {
		out[i] = PartitionAssignment{Replicas: []int32{id}}
	}
	return out
}

// TestTopicBatchPerRecordOutcomes: each record of a batch applies on its
// own against what the earlier ones left; rejected ones are skipped with
// their reason and the state before the batch never changes.
func TestTopicBatchPerRecordOutcomes(t *testing.T) {
	s := scenarioState(t)
	before := s.Topics["orders"]
	batch := TopicBatch{Records: []Record{
		CreateTopic{Name: "a", ID: TopicID{1}, Partitions: oneReplica(1, 2)},
		CreateTopic{Name: "orders", ID: TopicID{2}, Partitions: oneReplica(1)},                                                       // exists
		CreateTopic{Name: "b", ID: TopicID{1}, Partitions: oneReplica(1)},                                                            // id used by a (earlier in the batch)
		CreateTopic{Name: "a", ID: TopicID{3}, Partitions: oneReplica(1)},                                                            // a exists now
		CreatePartitions{Topic: "a", Partitions: oneReplica(3)},                                                                      // grows the new topic
		CreatePartitions{Topic: "orders", Partitions: oneReplica(1)},                                                                 // rf 3 topic: one replica refused
		CreateTopic{Name: "c", ID: TopicID{4}, Partitions: []PartitionAssignment{{Replicas: []int32{1}}, {Replicas: []int32{1, 2}}}}, // rf differs
		DeleteTopic{Name: "missing"},
		DeleteTopic{Name: "orders", ID: TopicID{9}},
		CreateTopic{Name: "orders", ID: TopicID{5}, Partitions: oneReplica(2)}, // recreated after its deletion
	}}
	next, errs := ApplyTopicBatch(s, batch)
	want := []error{nil, ErrTopicExists, ErrTopicIDExists, ErrTopicExists, nil, ErrReplicaCountDiffering, ErrReplicaCountDiffering, ErrTopicNotFound, nil, nil}
	if len(errs) != len(want) {
		t.Fatalf("%d outcomes for %d records", len(errs), len(want))
	}
	for i, w := range want {
		if w == nil && errs[i] != nil || w != nil && !errors.Is(errs[i], w) {
			t.Errorf("record %d: %v, want %v", i, errs[i], w)
		}
		if errs[i] != nil && !errors.Is(errs[i], ErrRejected) {
			t.Errorf("record %d: %v does not wrap ErrRejected", i, errs[i])
		}
	}
	if a := next.Topics["a"]; len(a.Partitions) != 3 || a.Partitions[2].Leader != 3 {
		t.Errorf("topic a: %+v", a)
	}
	if o := next.Topics["orders"]; o.ID != (TopicID{5}) || len(o.Partitions) != 1 || next.TopicIDs[TopicID{9}] != "" {
		t.Errorf("orders: %+v, ids %v", o, next.TopicIDs)
	}
	if _, ok := next.Topics["b"]; ok {
		t.Error("b was created with a used id")
	}
	if !reflect.DeepEqual(s.Topics["orders"], before) || len(s.Topics) != 1 {
		t.Errorf("the state before the batch changed: %v", s.Topics)
	}
	// Apply gives the same state, with no error for the batch as a whole.
	viaApply, err := Apply(s, batch)
	if err != nil || !reflect.DeepEqual(viaApply, next) {
		t.Errorf("Apply: %v, state differs: %v", err, !reflect.DeepEqual(viaApply, next))
	}
}

// TestTopicBatchEqualsRecordByRecord: a batch whose records all apply
// leaves the state the same records applied one by one leave.
func TestTopicBatchEqualsRecordByRecord(t *testing.T) {
	s := scenarioState(t)
	var recs []Record
	for i := range 50 {
		recs = append(recs, CreateTopic{Name: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26)), ID: TopicID{byte(i + 10)}, Partitions: oneReplica(1, 2, 3), Configs: map[string]string{"retention.ms": "5"}})
	}
	recs = append(recs, CreatePartitions{Topic: "taa", Partitions: oneReplica(2)}, DeleteTopic{Name: "tba"})
	one, err := ApplyAll(s, recs...)
	if err != nil {
		t.Fatal(err)
	}
	batched, errs := ApplyTopicBatch(s, TopicBatch{Records: recs})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if !reflect.DeepEqual(one, batched) {
		t.Error("batched state differs from the record-by-record state")
	}
}

// TestTopicBatchAllRejected: nothing applies, the state is unchanged.
func TestTopicBatchAllRejected(t *testing.T) {
	s := scenarioState(t)
	next, errs := ApplyTopicBatch(s, TopicBatch{Records: []Record{DeleteTopic{Name: "nope"}}})
	if !errors.Is(errs[0], ErrTopicNotFound) || !reflect.DeepEqual(next, s) {
		t.Fatalf("%v; state changed: %v", errs, !reflect.DeepEqual(next, s))
	}
	if _, errs := ApplyTopicBatch(s, TopicBatch{Records: []Record{AllocateProducerIDs{N: 1}}}); !errors.Is(errs[0], ErrInvalid) {
		t.Fatalf("unbatchable record: %v", errs[0])
	}
}

// TestAssignerPlansLikeAppliedTopics: planning two topics with one
// Assigner places the second as PlanAssignment would once the first is
// applied.
func TestAssignerPlansLikeAppliedTopics(t *testing.T) {
	s := scenarioState(t)
	a := NewAssigner(s)
	first, err := a.Plan(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Plan(5, 2)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := Apply(s, CreateTopic{Name: "first", ID: TopicID{77}, Partitions: first})
	if err != nil {
		t.Fatal(err)
	}
	want, err := PlanAssignment(applied, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(second, want) {
		t.Errorf("second topic: %v, want %v", second, want)
	}
}
