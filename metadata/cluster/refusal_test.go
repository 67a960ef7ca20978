package cluster

import (
	"errors"
	"reflect"
	"testing"
)

// A refused connection fences a broker at once, long before its session
// expires; it stays fenced until heard from again, and an incarnation is
// fenced this way only once (a process that lives but refuses does not
// flap).
func TestRefusalFencesAtOnce(t *testing.T) {
	const session = 1500
	s := scenarioState(t)
	// Stale incarnations and unknown brokers are rejected, unchanged.
	for _, r := range []BrokerUnreachable{
		{NodeID: 1, IncarnationID: "old", ReporterID: 2, TimeMs: 1100},
		{NodeID: 9, IncarnationID: "a9", ReporterID: 2, TimeMs: 1100},
	} {
		got, err := Apply(s, r)
		if !errors.Is(err, ErrRejected) || !reflect.DeepEqual(got, s) {
			t.Fatalf("%+v: err %v, state changed %v", r, err, !reflect.DeepEqual(got, s))
		}
	}
	// A report no newer than the last heartbeat changes nothing.
	if got := mustApply(t, s, BrokerUnreachable{NodeID: 1, IncarnationID: "a1", ReporterID: 2, TimeMs: 1000}); got.Brokers[1].UnreachableMs != 0 {
		t.Fatalf("an old refusal counted: %+v", got.Brokers[1])
	}
	s = mustApply(t, s, BrokerUnreachable{NodeID: 1, IncarnationID: "a1", ReporterID: 2, TimeMs: 1100})
	// 100 ms after the last heartbeat: the session has not expired, the refusal fences.
	plan := PlanFencing(s, 1200, session)
	if !reflect.DeepEqual(plan, []Record{FenceBroker{NodeID: 1}}) {
		t.Fatalf("plan %v, want broker 1 fenced", plan)
	}
	s = mustApply(t, s, plan...)
	if b := s.Brokers[1]; !b.Fenced || !b.RefusalFenced {
		t.Fatalf("broker 1 after the fence: %+v", b)
	}
	wantPartition(t, part(t, s, "orders", 0), 2, []int32{2, 3}, 1, 1)
	// Not unfenced while nothing is heard from it, though its last
	// heartbeat is within the session.
	if plan := PlanFencing(s, 1300, session); len(plan) != 0 {
		t.Fatalf("plan %v while still unreachable", plan)
	}
	// Heard from again (a heartbeat): unfenced, and a later refusal of the
	// same incarnation no longer counts.
	s = mustApply(t, s, BrokerHeartbeat{NodeID: 1, IncarnationID: "a1", TimeMs: 1400})
	if plan := PlanFencing(s, 1450, session); !reflect.DeepEqual(plan, []Record{UnfenceBroker{NodeID: 1}}) {
		t.Fatalf("plan %v, want broker 1 unfenced", plan)
	}
	s = mustApply(t, s, UnfenceBroker{NodeID: 1})
	s = mustApply(t, s, BrokerUnreachable{NodeID: 1, IncarnationID: "a1", ReporterID: 3, TimeMs: 1500})
	if plan := PlanFencing(s, 1600, session); len(plan) != 0 {
		t.Fatalf("plan %v: a second refusal of one incarnation fenced it again", plan)
	}
	// Its session still expires as usual.
	if plan := PlanFencing(s, 1400+session+1, session); !reflect.DeepEqual(plan, []Record{FenceBroker{NodeID: 1}, FenceBroker{NodeID: 2}, FenceBroker{NodeID: 3}}) {
		t.Fatalf("plan %v at session expiry", plan)
	}
	// A new incarnation starts afresh: a refusal counts again.
	s = mustApply(t, s, RegisterBroker{NodeID: 1, IncarnationID: "b1", Addr: "h1:9092", TimeMs: 2000})
	if b := s.Brokers[1]; b.RefusalFenced || b.UnreachableMs != 0 || b.Fenced {
		t.Fatalf("new incarnation: %+v", b)
	}
	s = mustApply(t, s, BrokerUnreachable{NodeID: 1, IncarnationID: "b1", ReporterID: 2, TimeMs: 2100})
	if plan := PlanFencing(s, 2150, session); !reflect.DeepEqual(plan, []Record{FenceBroker{NodeID: 1}}) {
		t.Fatalf("plan %v for the new incarnation", plan)
	}
}
