package metadata

import (
	"testing"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// Right after a controller change every broker's last committed heartbeat
// is as old as the election; the new controller fences only a broker still
// silent takeoverGrace after it took over.
func TestFencingViewAfterTakeover(t *testing.T) {
	session := 1500 * time.Millisecond
	t0 := time.UnixMilli(1_700_000_000_000)
	st := cluster.State{Brokers: map[int32]cluster.Broker{
		1: {NodeID: 1, IncarnationID: "a", Addr: "h:1", LastHeartbeatMs: t0.Add(-2 * time.Second).UnixMilli()},
	}}
	run := &controllerRun{}
	fenced := func(now time.Time) bool {
		return len(cluster.PlanFencing(run.fencingView(st, session, nil), now.UnixMilli(), session.Milliseconds())) > 0
	}
	if !fenced(t0) {
		t.Fatal("without a takeover a broker silent for 2 s must be fenced")
	}
	run.tookOver(t0)
	grace := takeoverGrace(session)
	if fenced(t0.Add(grace - time.Millisecond)) {
		t.Errorf("fenced within %v of the takeover", grace)
	}
	if !fenced(t0.Add(grace + 10*time.Millisecond)) {
		t.Errorf("not fenced %v after the takeover", grace)
	}
	if st.Brokers[1].LastHeartbeatMs != t0.Add(-2*time.Second).UnixMilli() {
		t.Error("fencingView modified the state")
	}
}

// A voter that keeps talking raft is not fenced while its heartbeat records
// are slow to commit; one that falls silent is, a session later.
func TestFencingViewHeardOnRaft(t *testing.T) {
	session := 1500 * time.Millisecond
	t0 := time.UnixMilli(1_700_000_000_000)
	st := cluster.State{Brokers: map[int32]cluster.Broker{
		2: {NodeID: 2, IncarnationID: "a", Addr: "h:2", LastHeartbeatMs: t0.Add(-5 * time.Second).UnixMilli()},
	}}
	var heardAt int64
	heard := func(id int32) int64 {
		if id == 2 {
			return heardAt
		}
		return 0
	}
	fenced := func(now time.Time) bool {
		return len(cluster.PlanFencing((*controllerRun)(nil).fencingView(st, session, heard), now.UnixMilli(), session.Milliseconds())) > 0
	}
	heardAt = t0.Add(-100 * time.Millisecond).UnixMilli()
	if fenced(t0) {
		t.Error("fenced although raft messages arrive")
	}
	if !fenced(t0.Add(session)) {
		t.Error("not fenced a session after its last raft message")
	}
}
