package groups

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// scenario drives one Group with an injected clock. Callers are strings
// naming the request ("a1": member a's first JoinGroup); replies are
// collected by caller and must be taken exactly once.
type scenario struct {
	t       *testing.T
	cfg     Config
	g       *Group
	now     time.Time
	nextID  int
	replies map[Caller][]Reply
	records []Record
}

const (
	testSession   = 10 * time.Second
	testRebalance = 30 * time.Second
	testDelay     = 3 * time.Second
)

func newScenario(t *testing.T, tune ...func(*Config)) *scenario {
	t.Helper()
	s := &scenario{t: t, now: time.UnixMilli(1_700_000_000_000), replies: map[Caller][]Reply{}}
	s.cfg = DefaultConfig()
	s.cfg.InitialRebalanceDelay = testDelay
	s.cfg.NewMemberID = func(prefix string) string {
		s.nextID++
		return fmt.Sprintf("%s-%d", prefix, s.nextID)
	}
	for _, f := range tune {
		f(&s.cfg)
	}
	s.g = New("group", &s.cfg, s.now)
	return s
}

func (s *scenario) collect(e Effects) {
	for _, r := range e.Replies {
		s.replies[r.To] = append(s.replies[r.To], r)
	}
	s.records = append(s.records, e.Records...)
}

// advance moves the clock and fires what is due.
func (s *scenario) advance(d time.Duration) {
	s.now = s.now.Add(d)
	s.collect(s.g.Tick(s.now))
}

func consumerMeta(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = 0
	m.Topics = topics
	return m.AppendTo(nil)
}

// joinReq is a v4+ consumer JoinGroup with the "range" protocol.
func joinReq(memberID string, meta []byte) JoinRequest {
	return JoinRequest{
		MemberID:             memberID,
		ClientID:             "client",
		ClientHost:           "/127.0.0.1",
		SessionTimeout:       testSession,
		RebalanceTimeout:     testRebalance,
		ProtocolType:         ConsumerProtocolType,
		Protocols:            []Protocol{{Name: "range", Metadata: meta}},
		RequireKnownMemberID: true,
	}
}

func (s *scenario) join(caller string, req JoinRequest) {
	s.t.Helper()
	s.collect(s.g.Join(s.now, req, caller))
}

func (s *scenario) sync(caller, memberID string, generation int32, assignments ...Assignment) {
	s.t.Helper()
	s.collect(s.g.Sync(s.now, SyncRequest{MemberID: memberID, Generation: generation, Assignments: assignments}, caller))
}

func (s *scenario) heartbeat(memberID string, generation int32) *kerr.Error {
	s.t.Helper()
	err, eff := s.g.Heartbeat(s.now, memberID, nil, generation)
	s.collect(eff)
	return err
}

func (s *scenario) leave(memberIDs ...string) []*kerr.Error {
	s.t.Helper()
	var lms []LeaveMember
	for _, id := range memberIDs {
		lms = append(lms, LeaveMember{MemberID: id})
	}
	errs, eff := s.g.Leave(s.now, lms)
	s.collect(eff)
	return errs
}

func (s *scenario) commit(req CommitRequest) *kerr.Error {
	s.t.Helper()
	err, eff := s.g.Commit(s.now, req)
	s.collect(eff)
	return err
}

// take returns the one reply for caller, failing if there is none or more.
func (s *scenario) take(caller string) Reply {
	s.t.Helper()
	rs := s.replies[caller]
	if len(rs) != 1 {
		s.t.Fatalf("%s: want exactly one reply, have %d (state %s)", caller, len(rs), s.g.State())
	}
	delete(s.replies, caller)
	return rs[0]
}

func (s *scenario) joined(caller string) JoinResult {
	s.t.Helper()
	r := s.take(caller)
	if r.Join == nil {
		s.t.Fatalf("%s: reply is not a JoinGroup result", caller)
	}
	return *r.Join
}

func (s *scenario) synced(caller string) SyncResult {
	s.t.Helper()
	r := s.take(caller)
	if r.Sync == nil {
		s.t.Fatalf("%s: reply is not a SyncGroup result", caller)
	}
	return *r.Sync
}

func (s *scenario) waiting(caller string) {
	s.t.Helper()
	if rs := s.replies[caller]; len(rs) != 0 {
		s.t.Fatalf("%s: want no reply yet, have %+v", caller, rs[0])
	}
}

func (s *scenario) noPendingReplies() {
	s.t.Helper()
	for c, rs := range s.replies {
		s.t.Fatalf("unexpected reply for %v: %d replies, first %+v %+v", c, len(rs), rs[0].Join, rs[0].Sync)
	}
}

func (s *scenario) wantState(want State) {
	s.t.Helper()
	if got := s.g.State(); got != want {
		s.t.Fatalf("state %s, want %s", got, want)
	}
}

func wantErr(t *testing.T, what string, got, want *kerr.Error) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: error %v, want %v", what, got, want)
	}
}

// completeInitialDelay advances the clock until the initial rebalance of an
// Empty group completes (each member arriving during the delay extends it).
func (s *scenario) completeInitialDelay() {
	s.t.Helper()
	for range testRebalance / testDelay {
		s.advance(testDelay)
		if s.g.State() != PreparingRebalance {
			return
		}
	}
	s.t.Fatalf("initial rebalance did not complete: %s", s.g.State())
}

// heartbeatFor advances the clock by d in steps, with every listed member
// heartbeating at each step (as a live client does).
func (s *scenario) heartbeatFor(d time.Duration, generation int32, memberIDs ...string) {
	s.t.Helper()
	step := testSession / 3
	for elapsed := time.Duration(0); elapsed < d; elapsed += step {
		s.advance(min(step, d-elapsed))
		for _, id := range memberIDs {
			s.heartbeat(id, generation)
		}
	}
}

// newMember performs the KIP-394 dance: a join without id gets
// MEMBER_ID_REQUIRED and an id, and the rejoin with it is registered as
// caller. It returns the member id.
func (s *scenario) newMember(caller string, meta []byte) string {
	s.t.Helper()
	s.join(caller+"-probe", joinReq("", meta))
	res := s.joined(caller + "-probe")
	wantErr(s.t, "first join", res.Err, kerr.MemberIDRequired)
	if res.MemberID == "" {
		s.t.Fatal("MEMBER_ID_REQUIRED without a member id")
	}
	s.join(caller, joinReq(res.MemberID, meta))
	return res.MemberID
}

// stableGroup brings n members (a, b, c, …) to a Stable first generation,
// each assigned its own name; it returns the member ids.
func (s *scenario) stableGroup(n int, meta []byte) []string {
	s.t.Helper()
	var ids []string
	for i := range n {
		ids = append(ids, s.newMember(fmt.Sprintf("%c-join", 'a'+i), meta))
	}
	s.completeInitialDelay()
	var leader string
	for i := range n {
		res := s.joined(fmt.Sprintf("%c-join", 'a'+i))
		if res.Err != nil {
			s.t.Fatalf("join %d: %v", i, res.Err)
		}
		leader = res.LeaderID
	}
	var plan []Assignment
	for i, id := range ids {
		plan = append(plan, Assignment{MemberID: id, Assignment: []byte{byte('a' + i)}})
	}
	for i, id := range ids {
		if id == leader {
			continue
		}
		s.sync(fmt.Sprintf("%c-sync", 'a'+i), id, s.g.Generation())
	}
	s.sync(fmt.Sprintf("%c-sync", 'a'+indexOf(ids, leader)), leader, s.g.Generation(), plan...)
	for i := range n {
		if res := s.synced(fmt.Sprintf("%c-sync", 'a'+i)); res.Err != nil || string(res.Assignment) != string(rune('a'+i)) {
			s.t.Fatalf("sync %d: %v %q", i, res.Err, res.Assignment)
		}
	}
	s.wantState(Stable)
	return ids
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
