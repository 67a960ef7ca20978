package metadata

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
)

// QuorumStatus is the raft quorum as this node sees it, for DescribeQuorum
// (KIP-595): indexes are raft log indexes.
type QuorumStatus struct {
	Leader int32
	Term   uint64
	// Commit is the highest committed index (Kafka's high watermark).
	Commit uint64
	// IsLeader: only a leader knows its followers' progress; elsewhere
	// Voters and Observers are empty.
	IsLeader bool
	// Voters, the leader included; Observers, the broker-only nodes
	// following this node.
	Voters, Observers []ReplicaProgress
}

// ReplicaProgress is one member's position: Match its highest index known
// replicated there, LastContact when this node last heard from it (zero:
// never); CaughtUp whether it holds everything committed.
type ReplicaProgress struct {
	ID          int32
	Match       uint64
	LastContact time.Time
	CaughtUp    bool
	// DirectoryID is a controller's KIP-853 directory id (zero: unknown).
	DirectoryID [16]byte
}

// observerSeen is what a controller knows of one observer it streams to.
type observerSeen struct {
	pos atomic.Uint64 // last index sent
	at  atomic.Int64  // unix ms of the last send
}

// observers tracks the observers this node streams to.
type observers struct {
	mu sync.Mutex
	m  map[int32]*observerSeen
}

func (o *observers) track(id int32) *observerSeen {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[int32]*observerSeen{}
	}
	s := &observerSeen{}
	o.m[id] = s
	return s
}

func (o *observers) untrack(id int32, s *observerSeen) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m[id] == s {
		delete(o.m, id)
	}
}

// QuorumStatus asks the raft loop for its status.
func (n *Node) QuorumStatus(ctx context.Context) (QuorumStatus, error) {
	reply := make(chan raft.Status, 1)
	select {
	case n.statusc <- reply:
	case <-ctx.Done():
		return QuorumStatus{}, ctx.Err()
	case <-n.failed:
		return QuorumStatus{}, n.failure()
	}
	var st raft.Status
	select {
	case st = <-reply:
	case <-ctx.Done():
		return QuorumStatus{}, ctx.Err()
	case <-n.failed:
		return QuorumStatus{}, n.failure()
	}
	commit := st.HardState.GetCommit()
	out := QuorumStatus{Leader: nodeID(st.Lead), Term: st.HardState.GetTerm(), Commit: commit, IsLeader: st.RaftState == raft.StateLeader}
	if !out.IsLeader {
		return out, nil
	}
	now := n.cfg.Clock.Now()
	members := map[int32]QuorumMember{}
	for _, m := range n.Members() {
		members[m.ID] = m
	}
	for id, pr := range st.Progress {
		p := ReplicaProgress{ID: nodeID(id), Match: pr.Match, CaughtUp: pr.Match >= commit}
		if p.ID == n.cfg.NodeID {
			p.LastContact = now
		} else if ms := n.lastHeard(p.ID); ms > 0 {
			p.LastContact = time.UnixMilli(ms)
		}
		if c, ok := members[p.ID]; ok {
			p.DirectoryID = c.DirectoryID
		}
		if pr.IsLearner {
			// Not a voter yet (AddVoter is catching it up): Kafka lists
			// such a controller among the observers.
			out.Observers = append(out.Observers, p)
			continue
		}
		out.Voters = append(out.Voters, p)
	}
	slices.SortFunc(out.Voters, func(a, b ReplicaProgress) int { return int(a.ID - b.ID) })
	n.obs.mu.Lock()
	for id, s := range n.obs.m {
		pos := s.pos.Load()
		out.Observers = append(out.Observers, ReplicaProgress{ID: id, Match: pos, LastContact: time.UnixMilli(s.at.Load()), CaughtUp: pos >= commit})
	}
	n.obs.mu.Unlock()
	slices.SortFunc(out.Observers, func(a, b ReplicaProgress) int { return int(a.ID - b.ID) })
	return out, nil
}
