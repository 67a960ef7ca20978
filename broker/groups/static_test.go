package groups

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func staticReq(memberID, instance string, meta []byte) JoinRequest {
	r := joinReq(memberID, meta)
	r.InstanceID = &instance
	return r
}

// staticGroup brings static members "ia" and "ib" to a Stable generation 1.
func staticGroup(s *scenario, meta []byte) (a, b string) {
	s.t.Helper()
	s.join("a", staticReq("", "ia", meta))
	s.join("b", staticReq("", "ib", meta))
	s.completeInitialDelay()
	ra, rb := s.joined("a"), s.joined("b")
	if ra.Err != nil || rb.Err != nil {
		s.t.Fatalf("joins %v %v", ra.Err, rb.Err)
	}
	a, b = ra.MemberID, rb.MemberID
	if !strings.HasPrefix(a, "ia-") {
		s.t.Fatalf("static member id %q is not prefixed with its instance id", a)
	}
	s.sync("a-sync", a, 1, Assignment{MemberID: a, Assignment: []byte("A")}, Assignment{MemberID: b, Assignment: []byte("B")})
	s.sync("b-sync", b, 1)
	s.synced("a-sync")
	s.synced("b-sync")
	s.wantState(Stable)
	return a, b
}

func TestStaticMemberRejoinReplacesIDWithoutRebalance(t *testing.T) {
	s := newScenario(t)
	meta := consumerMeta("t")
	_, oldB := staticGroup(s, meta)
	records := len(s.records)

	// b restarts: it joins with its instance id and no member id.
	s.join("b-restart", staticReq("", "ib", meta))
	res := s.joined("b-restart")
	if res.Err != nil || res.Generation != 1 || res.MemberID == oldB || !strings.HasPrefix(res.MemberID, "ib-") {
		t.Fatalf("rejoin %+v", res)
	}
	s.wantState(Stable)
	if s.g.Generation() != 1 {
		t.Fatalf("generation moved to %d", s.g.Generation())
	}
	// The new id inherits the assignment.
	s.sync("b-sync2", res.MemberID, 1)
	if got := s.synced("b-sync2"); string(got.Assignment) != "B" {
		t.Fatalf("assignment %q", got.Assignment)
	}
	// The replacement was persisted.
	if len(s.records) != records+1 || s.records[records].Metadata == nil || s.records[records].Metadata.Members[1].MemberID != res.MemberID {
		t.Fatalf("records %+v", s.records[records:])
	}
	// The old id is fenced.
	inst := "ib"
	err, _ := s.g.Heartbeat(s.now, oldB, &inst, 1)
	wantErr(t, "old member id", err, kerr.FencedInstanceID)
	wantErr(t, "new member id", func() *kerr.Error { e, _ := s.g.Heartbeat(s.now, res.MemberID, &inst, 1); return e }(), nil)
	wantErr(t, "commit with old id", s.commit(CommitRequest{MemberID: oldB, InstanceID: &inst, Generation: 1}), kerr.FencedInstanceID)
}

func TestStaticLeaderRejoinSkipsAssignment(t *testing.T) {
	s := newScenario(t)
	meta := consumerMeta("t")
	oldA, _ := staticGroup(s, meta)

	// v9+: the restarted leader is told it leads, with the members, but
	// must not assign.
	req := staticReq("", "ia", meta)
	req.SupportsSkipAssignment = true
	s.join("a-v9", req)
	res := s.joined("a-v9")
	if res.Err != nil || res.LeaderID != res.MemberID || !res.SkipAssignment || len(res.Members) != 2 || res.Generation != 1 {
		t.Fatalf("v9 leader rejoin %+v", res)
	}
	s.wantState(Stable)

	// Before v9 it is given the previous leader id, so it does not assign.
	s.join("a-v8", staticReq("", "ia", meta))
	res8 := s.joined("a-v8")
	if res8.Err != nil || res8.LeaderID != res.MemberID || res8.MemberID == res.MemberID || res8.SkipAssignment || len(res8.Members) != 0 {
		t.Fatalf("v8 leader rejoin %+v (old ids %s, %s)", res8, oldA, res.MemberID)
	}
}

func TestStaticRejoinWithNewProtocolRebalances(t *testing.T) {
	s := newScenario(t)
	staticGroup(s, nil)
	req := staticReq("", "ib", nil)
	req.Protocols = []Protocol{{Name: "roundrobin"}, {Name: "range"}}
	s.join("b-rr", req)
	// range is still the only common protocol: no change, no rebalance.
	if res := s.joined("b-rr"); res.Err != nil || res.Generation != 1 {
		t.Fatalf("rejoin %+v", res)
	}
	s.wantState(Stable)

	// Now a prefers roundrobin too: the vote would select it, so the
	// rejoin rebalances instead of answering at once.
	reqA := staticReq("", "ia", nil)
	reqA.Protocols = []Protocol{{Name: "roundrobin"}, {Name: "range"}}
	s.join("a-rr", reqA)
	s.waiting("a-rr")
	s.wantState(PreparingRebalance)
}

func TestStaticMemberRejoinDuringRebalanceFencesOldJoin(t *testing.T) {
	s := newScenario(t)
	_, oldB := staticGroup(s, nil)
	s.join("b-rejoin", staticReq(oldB, "ib", []byte("changed")))
	s.wantState(PreparingRebalance)
	// b restarts before the rebalance ends: its old JoinGroup is fenced.
	s.join("b-restart", staticReq("", "ib", []byte("changed")))
	wantErr(t, "old join", s.joined("b-rejoin").Err, kerr.FencedInstanceID)
	s.waiting("b-restart")
}

func TestStaticMemberKeptWhenItMissesRebalance(t *testing.T) {
	s := newScenario(t)
	a, b := staticGroup(s, nil)
	s.join("a2", staticReq(a, "ia", []byte("new")))
	s.advance(testRebalance)
	// b did not rejoin but, being static, is still a member.
	res := s.joined("a2")
	if res.Generation != 2 || len(res.Members) != 2 {
		t.Fatalf("join %+v", res)
	}
	inst := "ib"
	err, _ := s.g.Heartbeat(s.now, b, &inst, 1)
	wantErr(t, "b learns of the new generation", err, kerr.IllegalGeneration)
	s.join("b2", staticReq(b, "ib", nil)) // same metadata: it gets generation 2 at once
	if res := s.joined("b2"); res.Generation != 2 {
		t.Fatalf("b rejoin %+v", res)
	}
}

func TestLeaveByInstanceID(t *testing.T) {
	s := newScenario(t)
	staticGroup(s, nil)
	inst := "ib"
	errs, eff := s.g.Leave(s.now, []LeaveMember{{InstanceID: &inst}, {InstanceID: func() *string { x := "nope"; return &x }()}})
	s.collect(eff)
	if errs[0] != nil || errs[1] != kerr.UnknownMemberID {
		t.Fatalf("errors %v", errs)
	}
	s.wantState(PreparingRebalance)
	if s.g.NumMembers() != 1 {
		t.Fatalf("members %d", s.g.NumMembers())
	}
}
