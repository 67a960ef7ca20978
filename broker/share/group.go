package share

import (
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Heartbeat epochs with a meaning of their own.
const (
	JoinEpoch  int32 = 0
	LeaveEpoch int32 = -1
)

// Topic is what the assignor knows of a subscribed topic.
type Topic struct {
	ID         [16]byte
	Partitions int32
}

// TopicCatalog resolves topic names for the assignor; ok is false for a
// topic that does not exist.
type TopicCatalog func(name string) (Topic, bool)

// GroupConfig tunes a share group's membership.
type GroupConfig struct {
	SessionTimeout    time.Duration // group.share.session.timeout.ms
	HeartbeatInterval time.Duration // group.share.heartbeat.interval.ms
}

// Member is one member of a share group.
type Member struct {
	ID         string
	Epoch      int32
	prevEpoch  int32
	ClientID   string
	ClientHost string
	RackID     *string
	Subscribed []string
	// Assignment maps a topic id to the partitions the member reads.
	Assignment map[[16]byte][]int32
	deadline   time.Time
}

// Group is a share group's membership: members join, heartbeat and leave;
// the coordinator assigns every member every partition of the topics it
// subscribes to (many members per partition: the share-partitions decide
// who gets which record). Callers serialize access; now comes in as an
// argument.
type Group struct {
	ID      string
	Epoch   int32 // bumps on every membership or subscription change
	members map[string]*Member
}

// NewGroup returns an empty share group.
func NewGroup(id string) *Group { return &Group{ID: id, members: map[string]*Member{}} }

// HeartbeatRequest is a ShareGroupHeartbeat.
type HeartbeatRequest struct {
	MemberID    string
	MemberEpoch int32
	RackID      *string
	// Subscribed is nil when unchanged since the last heartbeat.
	Subscribed []string
	ClientID   string
	ClientHost string
}

// HeartbeatResult is the answer to a heartbeat.
type HeartbeatResult struct {
	Err        *kerr.Error
	ErrMessage string
	MemberID   string
	Epoch      int32
	// Assignment is set when the member must (re)learn it.
	Assignment map[[16]byte][]int32
}

// Heartbeat handles one ShareGroupHeartbeat.
func (g *Group) Heartbeat(req HeartbeatRequest, cfg GroupConfig, catalog TopicCatalog, now time.Time) HeartbeatResult {
	g.Expire(cfg, now)
	if req.MemberID == "" {
		return HeartbeatResult{Err: kerr.InvalidRequest, ErrMessage: "MemberId can't be empty"}
	}
	m := g.members[req.MemberID]
	switch {
	case req.MemberEpoch == LeaveEpoch:
		if m == nil {
			return HeartbeatResult{Err: kerr.UnknownMemberID}
		}
		delete(g.members, req.MemberID)
		g.Epoch++
		return HeartbeatResult{MemberID: req.MemberID, Epoch: LeaveEpoch}
	case req.MemberEpoch < LeaveEpoch:
		return HeartbeatResult{Err: kerr.InvalidRequest, ErrMessage: "MemberEpoch is invalid"}
	case req.MemberEpoch == JoinEpoch:
		if len(req.Subscribed) == 0 && (m == nil || len(m.Subscribed) == 0) {
			return HeartbeatResult{Err: kerr.InvalidRequest, ErrMessage: "SubscribedTopicNames must be set in first request"}
		}
		if m == nil {
			m = &Member{ID: req.MemberID}
			g.members[req.MemberID] = m
		}
		g.Epoch++
	default:
		if m == nil {
			return HeartbeatResult{Err: kerr.UnknownMemberID}
		}
		if req.MemberEpoch != m.Epoch && req.MemberEpoch != m.prevEpoch {
			return HeartbeatResult{Err: kerr.FencedMemberEpoch}
		}
	}
	m.ClientID, m.ClientHost = req.ClientID, req.ClientHost
	if req.RackID != nil {
		m.RackID = req.RackID
	}
	full := req.Subscribed != nil
	if full {
		subs := slices.Clone(req.Subscribed)
		sort.Strings(subs)
		subs = slices.Compact(subs)
		if !slices.Equal(subs, m.Subscribed) {
			m.Subscribed = subs
			g.Epoch++
		}
	}
	m.deadline = now.Add(cfg.SessionTimeout)
	target := assign(m.Subscribed, catalog)
	changed := !sameAssignment(target, m.Assignment) || req.MemberEpoch == JoinEpoch
	if changed {
		m.Assignment = target
		m.prevEpoch, m.Epoch = m.Epoch, max(g.Epoch, m.Epoch+1)
	}
	res := HeartbeatResult{MemberID: m.ID, Epoch: m.Epoch}
	if changed || full || req.MemberEpoch != m.Epoch {
		res.Assignment = m.Assignment
	}
	return res
}

// assign gives a member every partition of the topics it subscribes to
// that exist.
func assign(subscribed []string, catalog TopicCatalog) map[[16]byte][]int32 {
	out := map[[16]byte][]int32{}
	for _, name := range subscribed {
		t, ok := catalog(name)
		if !ok || t.Partitions <= 0 {
			continue
		}
		ps := make([]int32, t.Partitions)
		for i := range ps {
			ps[i] = int32(i)
		}
		out[t.ID] = ps
	}
	return out
}

func sameAssignment(a, b map[[16]byte][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for id, ps := range a {
		if !slices.Equal(ps, b[id]) {
			return false
		}
	}
	return true
}

// Expire removes the members whose session ended at or before now and
// returns their ids.
func (g *Group) Expire(cfg GroupConfig, now time.Time) (gone []string) {
	for id, m := range g.members {
		if !m.deadline.IsZero() && !now.Before(m.deadline) {
			delete(g.members, id)
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		g.Epoch++
		sort.Strings(gone)
	}
	return gone
}

// Members returns the members sorted by id (copies).
func (g *Group) Members() []Member {
	out := make([]Member, 0, len(g.members))
	for _, m := range g.members {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// HasMember reports whether id is a member.
func (g *Group) HasMember(id string) bool { _, ok := g.members[id]; return ok }

// Empty reports whether the group has no members.
func (g *Group) Empty() bool { return len(g.members) == 0 }

// StateName is the group's state as Kafka names it for share groups.
func (g *Group) StateName() string {
	if g.Empty() {
		return "Empty"
	}
	return "Stable"
}

// Subscribed returns the topics some member subscribes to, sorted.
func (g *Group) Subscribed() []string {
	var out []string
	for _, m := range g.members {
		out = append(out, m.Subscribed...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
