package share

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/internal/puritytest"
)

func TestPureCore(t *testing.T) {
	puritytest.Check(t, "the share group state machine",
		"container/list", "slices", "sort", "time", "github.com/twmb/franz-go/pkg/kerr")
}

var topicA = Topic{ID: [16]byte{1}, Partitions: 2}

func catalog(name string) (Topic, bool) {
	if name == "a" {
		return topicA, true
	}
	return Topic{}, false
}

func TestGroupHeartbeats(t *testing.T) {
	cfg := GroupConfig{SessionTimeout: 10 * time.Second, HeartbeatInterval: time.Second}
	g := NewGroup("g")
	r := g.Heartbeat(HeartbeatRequest{MemberID: "m1", MemberEpoch: 0, Subscribed: []string{"a", "missing"}}, cfg, catalog, t0)
	if r.Err != nil || r.Epoch <= 0 || len(r.Assignment[topicA.ID]) != 2 {
		t.Fatalf("join: %+v", r)
	}
	r2 := g.Heartbeat(HeartbeatRequest{MemberID: "m2", MemberEpoch: 0, Subscribed: []string{"a"}}, cfg, catalog, t0)
	if r2.Err != nil || len(r2.Assignment[topicA.ID]) != 2 {
		t.Fatalf("second member shares the partitions: %+v", r2)
	}
	// A steady heartbeat gets no assignment.
	if r3 := g.Heartbeat(HeartbeatRequest{MemberID: "m1", MemberEpoch: r.Epoch}, cfg, catalog, t0); r3.Err != nil || r3.Assignment != nil || r3.Epoch != r.Epoch {
		t.Fatalf("steady: %+v", r3)
	}
	for _, c := range []struct {
		req  HeartbeatRequest
		want *kerr.Error
	}{
		{HeartbeatRequest{MemberID: "m1", MemberEpoch: r.Epoch + 5}, kerr.FencedMemberEpoch},
		{HeartbeatRequest{MemberID: "nobody", MemberEpoch: 3}, kerr.UnknownMemberID},
		{HeartbeatRequest{MemberID: "", MemberEpoch: 0, Subscribed: []string{"a"}}, kerr.InvalidRequest},
		{HeartbeatRequest{MemberID: "m3", MemberEpoch: 0}, kerr.InvalidRequest},
		{HeartbeatRequest{MemberID: "m3", MemberEpoch: -2}, kerr.InvalidRequest},
	} {
		if got := g.Heartbeat(c.req, cfg, catalog, t0); got.Err != c.want {
			t.Errorf("%+v: %v, want %v", c.req, got.Err, c.want)
		}
	}
	if len(g.Members()) != 2 {
		t.Fatalf("bad heartbeats changed the members: %d", len(g.Members()))
	}
	// m1 leaves; m2's session expires.
	if r := g.Heartbeat(HeartbeatRequest{MemberID: "m1", MemberEpoch: LeaveEpoch}, cfg, catalog, t0); r.Err != nil || r.Epoch != LeaveEpoch {
		t.Fatalf("leave: %+v", r)
	}
	if gone := g.Expire(cfg, t0.Add(10*time.Second)); len(gone) != 1 || gone[0] != "m2" || !g.Empty() || g.StateName() != "Empty" {
		t.Fatalf("expire: %v", gone)
	}
}

func TestSessions(t *testing.T) {
	s := NewSessions(1, time.Minute)
	if _, _, err := s.Begin("g", "m", 1, t0); err != kerr.ShareSessionNotFound {
		t.Fatalf("no session: %v", err)
	}
	sess, _, err := s.Begin("g", "m", 0, t0)
	if err != nil {
		t.Fatal(err)
	}
	sess.Advance()
	if _, _, err := s.Begin("g", "m", 2, t0); err != kerr.InvalidShareSessionEpoch {
		t.Fatalf("wrong epoch: %v", err)
	}
	if got, _, err := s.Begin("g", "m", 1, t0); err != nil || got != sess {
		t.Fatalf("epoch 1: %v", err)
	}
	if _, _, err := s.Begin("g", "other", 0, t0.Add(59*time.Second)); err != kerr.ShareSessionLimitReached {
		t.Fatalf("limit: %v", err)
	}
	if _, _, err := s.Begin("g", "m", -1, t0); err != nil {
		t.Fatalf("final: %v", err)
	}
	if s.Close("g", "m") != sess || s.Len() != 0 {
		t.Fatalf("close")
	}
	if _, _, err := s.Begin("g", "", 0, t0); err != kerr.InvalidRequest {
		t.Fatalf("empty member: %v", err)
	}
	sess.Epoch = 1<<31 - 1
	sess.Advance()
	if sess.Epoch != 1 {
		t.Fatalf("wrap: %d", sess.Epoch)
	}
}

// A full cache evicts its least recently used session once that one has
// been idle for minIdle, and hands it back so its records are released.
func TestSessionsEvictIdleLRU(t *testing.T) {
	s := NewSessions(2, time.Minute)
	a, _, _ := s.Begin("g", "a", 0, t0)
	b, _, _ := s.Begin("g", "b", 0, t0.Add(time.Second))
	a.Advance()
	if _, _, err := s.Begin("g", "a", 1, t0.Add(30*time.Second)); err != nil { // a is now the most recent
		t.Fatal(err)
	}
	if _, _, err := s.Begin("g", "c", 0, t0.Add(50*time.Second)); err != kerr.ShareSessionLimitReached {
		t.Fatalf("no session idle for a minute yet: %v", err)
	}
	c, evicted, err := s.Begin("g", "c", 0, t0.Add(62*time.Second))
	if err != nil || evicted != b || s.Get("g", "b") != nil || s.Get("g", "a") != a || s.Get("g", "c") != c || s.Len() != 2 {
		t.Fatalf("evicted %v err %v len %d, want b evicted (least recently used), a and c kept", evicted, err, s.Len())
	}
	if _, _, err := s.Begin("g", "b", 1, t0.Add(63*time.Second)); err != kerr.ShareSessionNotFound {
		t.Fatalf("evicted session used: %v, want SHARE_SESSION_NOT_FOUND", err)
	}
	// Reopening a member's session replaces it without evicting another.
	a2, replaced, err := s.Begin("g", "a", 0, t0.Add(64*time.Second))
	if err != nil || replaced != a || a2 == a || s.Len() != 2 || s.Get("g", "c") != c {
		t.Fatalf("reopen: replaced %v err %v len %d", replaced, err, s.Len())
	}
}
