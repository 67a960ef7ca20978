package groups

import (
	"bytes"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestFirstJoinRequiresMemberIDAndWaitsForInitialDelay(t *testing.T) {
	s := newScenario(t)
	id := s.newMember("a", consumerMeta("t"))
	s.wantState(PreparingRebalance)
	s.advance(testDelay - time.Millisecond)
	s.waiting("a")
	s.advance(time.Millisecond)
	res := s.joined("a")
	if res.Err != nil || res.MemberID != id || res.LeaderID != id || res.Generation != 1 || res.Protocol != "range" || res.ProtocolType != "consumer" {
		t.Fatalf("join result %+v", res)
	}
	if len(res.Members) != 1 || res.Members[0].MemberID != id || !bytes.Equal(res.Members[0].Metadata, consumerMeta("t")) {
		t.Fatalf("leader's members %+v", res.Members)
	}
	s.wantState(CompletingRebalance)
	s.sync("a-sync", id, 1, Assignment{MemberID: id, Assignment: []byte("plan")})
	if got := s.synced("a-sync"); got.Err != nil || string(got.Assignment) != "plan" || got.Protocol != "range" {
		t.Fatalf("sync %+v", got)
	}
	s.wantState(Stable)
	wantErr(t, "heartbeat", s.heartbeat(id, 1), nil)
	// The assignment was persisted before the sync was answered.
	last := s.records[len(s.records)-1]
	if last.Metadata == nil || last.Metadata.Generation != 1 || len(last.Metadata.Members) != 1 || string(last.Metadata.Members[0].Assignment) != "plan" {
		t.Fatalf("last record %+v", last)
	}
}

func TestWithoutRequireKnownMemberIDJoinsAtOnce(t *testing.T) {
	s := newScenario(t, func(c *Config) { c.InitialRebalanceDelay = 0 })
	req := joinReq("", nil)
	req.RequireKnownMemberID = false // JoinGroup v0–v3
	s.join("a", req)
	res := s.joined("a")
	if res.Err != nil || res.Generation != 1 || res.MemberID != "client-1" {
		t.Fatalf("join %+v", res)
	}
}

func TestInitialDelayExtendsWhileMembersArrive(t *testing.T) {
	s := newScenario(t)
	s.newMember("a", nil)
	s.advance(2 * time.Second)
	s.newMember("b", nil) // a new member during the delay extends it
	s.advance(testDelay - 2*time.Second)
	s.waiting("a")
	s.advance(testDelay)
	a, b := s.joined("a"), s.joined("b")
	if a.Generation != 1 || b.Generation != 1 || a.LeaderID != b.LeaderID {
		t.Fatalf("joins %+v %+v", a, b)
	}
	if len(a.Members) != 2 || len(b.Members) != 0 {
		t.Fatalf("only the leader gets the members: %d %d", len(a.Members), len(b.Members))
	}
}

func TestFollowerSyncWaitsForLeader(t *testing.T) {
	s := newScenario(t)
	a := s.newMember("a", nil)
	b := s.newMember("b", nil)
	s.completeInitialDelay()
	s.joined("a")
	s.joined("b")
	s.sync("b-sync", b, 1)
	s.waiting("b-sync")
	s.sync("a-sync", a, 1, Assignment{MemberID: a, Assignment: []byte("A")}, Assignment{MemberID: b, Assignment: []byte("B")})
	if got := s.synced("b-sync"); string(got.Assignment) != "B" {
		t.Fatalf("follower got %q", got.Assignment)
	}
	if got := s.synced("a-sync"); string(got.Assignment) != "A" {
		t.Fatalf("leader got %q", got.Assignment)
	}
	// A member missing from the plan gets an empty assignment.
	s.wantState(Stable)
}

func TestNewMemberTriggersRebalance(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(2, consumerMeta("t"))
	c := s.newMember("c", consumerMeta("t"))
	s.wantState(PreparingRebalance)
	// Existing members learn of it through their heartbeats.
	wantErr(t, "heartbeat", s.heartbeat(ids[0], 1), kerr.RebalanceInProgress)
	// Commits of the old generation are still accepted while rebalancing.
	wantErr(t, "commit during rebalance", s.commit(CommitRequest{MemberID: ids[0], Generation: 1, Offsets: []CommitOffset{offset("t", 0, 5)}}), nil)
	s.join("a2", joinReq(ids[0], consumerMeta("t")))
	s.waiting("c")
	s.join("b2", joinReq(ids[1], consumerMeta("t")))
	for _, caller := range []string{"a2", "b2", "c"} {
		if res := s.joined(caller); res.Err != nil || res.Generation != 2 {
			t.Fatalf("%s: %+v", caller, res)
		}
	}
	s.wantState(CompletingRebalance)
	// Heartbeats of the new generation are fine before the sync;
	// commits are not.
	wantErr(t, "heartbeat before sync", s.heartbeat(c, 2), nil)
	wantErr(t, "commit before sync", s.commit(CommitRequest{MemberID: c, Generation: 2, Offsets: []CommitOffset{offset("t", 0, 6)}}), kerr.RebalanceInProgress)
	wantErr(t, "old generation", s.heartbeat(ids[0], 1), kerr.IllegalGeneration)
}

func TestRebalanceTimeoutRemovesMembersThatDoNotRejoin(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(2, nil)
	s.newMember("c", nil)
	s.join("a2", joinReq(ids[0], nil))
	// b keeps heartbeating but never rejoins.
	for range 5 {
		s.advance(5 * time.Second)
		wantErr(t, "b heartbeat", s.heartbeat(ids[1], 1), kerr.RebalanceInProgress)
	}
	s.advance(testRebalance - 25*time.Second)
	a := s.joined("a2")
	s.joined("c")
	if a.Generation != 2 || len(a.Members) != 2 {
		t.Fatalf("join %+v", a)
	}
	wantErr(t, "removed member", s.heartbeat(ids[1], 1), kerr.UnknownMemberID)
}

func TestLeaderThatDoesNotRejoinIsReplaced(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(2, nil) // a leads
	if s.g.Leader() != ids[0] {
		t.Fatalf("leader %s", s.g.Leader())
	}
	s.join("b2", joinReq(ids[1], []byte("new"))) // b's new metadata forces a rebalance
	s.advance(testRebalance)
	b := s.joined("b2")
	if b.LeaderID != ids[1] || len(b.Members) != 1 || b.Generation != 2 {
		t.Fatalf("join %+v", b)
	}
}

func TestSessionExpiryRemovesMemberAndRebalances(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(2, nil)
	s.advance(testSession / 2)
	wantErr(t, "a heartbeat", s.heartbeat(ids[0], 1), nil)
	s.advance(testSession/2 - time.Millisecond)
	s.wantState(Stable)
	// b's last sign of life (its sync) is a session ago.
	s.advance(time.Millisecond)
	s.wantState(PreparingRebalance)
	wantErr(t, "expired member", s.heartbeat(ids[1], 1), kerr.UnknownMemberID)
	wantErr(t, "a heartbeat", s.heartbeat(ids[0], 1), kerr.RebalanceInProgress)
	s.join("a2", joinReq(ids[0], nil))
	if res := s.joined("a2"); res.Generation != 2 || len(res.Members) != 1 {
		t.Fatalf("join %+v", res)
	}
}

func TestLeaveRebalancesAndLastLeaveEmptiesGroup(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(2, nil)
	if errs := s.leave(ids[1]); errs[0] != nil {
		t.Fatal(errs[0])
	}
	wantErr(t, "a heartbeat", s.heartbeat(ids[0], 1), kerr.RebalanceInProgress)
	s.join("a2", joinReq(ids[0], nil))
	s.joined("a2")
	if errs := s.leave(ids[0], "nobody"); errs[0] != nil || errs[1] != kerr.UnknownMemberID {
		t.Fatalf("leave errors %v", errs)
	}
	s.wantState(Empty)
	if s.g.Generation() != 3 {
		t.Fatalf("generation %d, want 3 (emptying is a generation)", s.g.Generation())
	}
	last := s.records[len(s.records)-1]
	if last.Metadata == nil || len(last.Metadata.Members) != 0 || last.Metadata.Generation != 3 {
		t.Fatalf("empty group record %+v", last)
	}
}

func TestLeaveAnswersWaitingJoinAndSync(t *testing.T) {
	s := newScenario(t)
	a := s.newMember("a", nil)
	s.leave(a)
	if res := s.joined("a"); res.Err != kerr.UnknownMemberID {
		t.Fatalf("waiting join after leave: %+v", res)
	}
}

func TestPendingMemberHoldsRebalanceUntilItExpires(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(1, nil)
	s.join("b-probe", joinReq("", nil)) // b never comes back with its id
	if res := s.joined("b-probe"); res.Err != kerr.MemberIDRequired {
		t.Fatal(res.Err)
	}
	s.join("a2", joinReq(ids[0], []byte("x")))
	s.advance(testSession - time.Millisecond)
	s.waiting("a2")
	s.advance(time.Millisecond)
	if res := s.joined("a2"); res.Generation != 2 {
		t.Fatalf("join %+v", res)
	}
}

func TestPendingSyncTimeoutRemovesMembersThatNeverSync(t *testing.T) {
	s := newScenario(t)
	a := s.newMember("a", nil)
	b := s.newMember("b", nil)
	s.completeInitialDelay()
	s.joined("a")
	s.joined("b")
	s.sync("a-sync", a, 1, Assignment{MemberID: a, Assignment: []byte("A")})
	s.synced("a-sync")
	for range 6 {
		s.advance(5 * time.Second)
		s.heartbeat(a, 1)
		s.heartbeat(b, 1) // heartbeats alone do not count as a sync
	}
	s.wantState(PreparingRebalance)
	wantErr(t, "b after pending-sync timeout", s.heartbeat(b, 1), kerr.UnknownMemberID)
}

func TestIllegalGenerationAndUnknownMember(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(1, nil)
	wantErr(t, "heartbeat old generation", s.heartbeat(ids[0], 0), kerr.IllegalGeneration)
	wantErr(t, "heartbeat unknown member", s.heartbeat("ghost", 1), kerr.UnknownMemberID)
	s.sync("old-sync", ids[0], 7)
	wantErr(t, "sync other generation", s.synced("old-sync").Err, kerr.IllegalGeneration)
	s.sync("ghost-sync", "ghost", 1)
	wantErr(t, "sync unknown member", s.synced("ghost-sync").Err, kerr.UnknownMemberID)
	wantErr(t, "commit old generation", s.commit(CommitRequest{MemberID: ids[0], Generation: 0, Offsets: []CommitOffset{offset("t", 0, 1)}}), kerr.IllegalGeneration)
	s.join("ghost-join", joinReq("ghost", nil))
	wantErr(t, "join unknown member", s.joined("ghost-join").Err, kerr.UnknownMemberID)
	// SyncGroup v5 checks the protocol type and name.
	typ, name := "connect", "range"
	s.collect(s.g.Sync(s.now, SyncRequest{MemberID: ids[0], Generation: 1, ProtocolType: &typ, Protocol: &name}, "typed"))
	wantErr(t, "sync wrong protocol type", s.synced("typed").Err, kerr.InconsistentGroupProtocol)
}

func TestProtocolChecksAndSelection(t *testing.T) {
	s := newScenario(t, func(c *Config) { c.InitialRebalanceDelay = 0 })
	req := func(id string, names ...string) JoinRequest {
		r := joinReq(id, nil)
		r.RequireKnownMemberID = false
		r.Protocols = nil
		for _, n := range names {
			r.Protocols = append(r.Protocols, Protocol{Name: n, Metadata: []byte(n)})
		}
		return r
	}
	empty := req("")
	s.join("none", empty)
	wantErr(t, "no protocols", s.joined("none").Err, kerr.InconsistentGroupProtocol)

	bad := req("", "range")
	bad.SessionTimeout = time.Second
	s.join("short", bad)
	wantErr(t, "short session", s.joined("short").Err, kerr.InvalidSessionTimeout)

	s.join("a", req("", "range", "roundrobin"))
	a := s.joined("a")
	s.join("other-type", func() JoinRequest { r := req("", "range"); r.ProtocolType = "connect"; return r }())
	wantErr(t, "other protocol type", s.joined("other-type").Err, kerr.InconsistentGroupProtocol)
	s.join("disjoint", req("", "sticky"))
	wantErr(t, "no common protocol", s.joined("disjoint").Err, kerr.InconsistentGroupProtocol)

	// b and c prefer roundrobin, a prefers range: roundrobin wins 2–1.
	s.join("b", req("", "roundrobin", "range"))
	s.join("c", req("", "roundrobin", "range"))
	s.join("a2", req(a.MemberID, "range", "roundrobin"))
	for _, c := range []string{"a2", "b", "c"} {
		if res := s.joined(c); res.Protocol != "roundrobin" {
			t.Fatalf("%s: protocol %q", c, res.Protocol)
		}
	}
	if d := s.g.Describe(); d.State != CompletingRebalance || d.Protocol != "" || d.Members[0].Metadata != nil {
		t.Fatalf("describe before Stable shows no protocol or metadata: %+v", d)
	}
	// Metadata is passed through per selected protocol.
	s.sync("a-sync", a.MemberID, s.g.Generation())
	if d := s.g.Describe(); d.State != Stable || d.Protocol != "roundrobin" || string(d.Members[1].Metadata) != "roundrobin" {
		t.Fatalf("describe %+v", d)
	}
}

func TestCooperativeRejoinWhileStable(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(2, []byte("owned:none"))
	// A follower rejoining with the same metadata gets the current
	// generation back without a rebalance.
	s.join("b-same", joinReq(ids[1], []byte("owned:none")))
	if res := s.joined("b-same"); res.Err != nil || res.Generation != 1 || len(res.Members) != 0 {
		t.Fatalf("same-metadata rejoin %+v", res)
	}
	s.wantState(Stable)
	// New metadata (a cooperative member after revoking) rebalances; the
	// bytes reach the leader untouched.
	s.join("b-new", joinReq(ids[1], []byte("owned:p1")))
	s.wantState(PreparingRebalance)
	s.join("a-new", joinReq(ids[0], []byte("owned:p0")))
	a := s.joined("a-new")
	s.joined("b-new")
	if a.Generation != 2 || len(a.Members) != 2 || string(a.Members[1].Metadata) != "owned:p1" {
		t.Fatalf("leader's join %+v", a)
	}
	// The leader rejoining while Stable always rebalances.
	s.sync("a-sync", ids[0], 2, Assignment{MemberID: ids[0]}, Assignment{MemberID: ids[1]})
	s.sync("b-sync", ids[1], 2)
	s.synced("a-sync")
	s.synced("b-sync")
	s.join("a-again", joinReq(ids[0], []byte("owned:p0")))
	s.wantState(PreparingRebalance)
}

func TestSupersededJoinIsAnswered(t *testing.T) {
	s := newScenario(t)
	a := s.newMember("a", nil)
	s.join("a-retry", joinReq(a, nil))
	if res := s.joined("a"); res.Err != kerr.RebalanceInProgress {
		t.Fatalf("superseded join %+v", res)
	}
	s.advance(testDelay)
	if res := s.joined("a-retry"); res.Err != nil || res.Generation != 1 {
		t.Fatalf("retry %+v", res)
	}
}

func TestUnloadAnswersWaitingRequests(t *testing.T) {
	s := newScenario(t)
	s.newMember("a", nil)
	s.collect(s.g.Unload())
	wantErr(t, "unloaded join", s.joined("a").Err, kerr.NotCoordinator)
}

func TestGroupMaxSize(t *testing.T) {
	s := newScenario(t, func(c *Config) { c.MaxSize = 1 })
	s.stableGroup(1, nil)
	s.join("b", joinReq("", nil))
	wantErr(t, "full group", s.joined("b").Err, kerr.GroupMaxSizeReached)
}

func TestNextDeadlineDrivesTimers(t *testing.T) {
	s := newScenario(t)
	if !s.g.NextDeadline().IsZero() {
		t.Fatal("an empty group has no deadline")
	}
	s.newMember("a", nil)
	if got, want := s.g.NextDeadline(), s.now.Add(testDelay); !got.Equal(want) {
		t.Fatalf("deadline %v, want %v", got, want)
	}
	s.now = s.g.NextDeadline()
	s.collect(s.g.Tick(s.now))
	s.joined("a")
	if got, want := s.g.NextDeadline(), s.now.Add(testSession); !got.Equal(want) {
		t.Fatalf("after join: deadline %v, want the session timeout %v", got, want)
	}
}
