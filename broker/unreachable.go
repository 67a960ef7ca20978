package broker

// Fencing a crashed node at once. A refused connection (ECONNREFUSED) to a
// node's Kafka port is proof that its process is not running: nothing
// listens at the address. A timeout is not (a network partition looks the
// same), so only refusals count. When this node's replica fetcher is
// refused by a leader, it reports the leader's current incarnation once
// (cluster.BrokerUnreachable, through the quorum); the controller fences
// it on its next step unless it heard from the node since (PlanFencing),
// instead of waiting broker.session.timeout.ms. The state machine fences
// an incarnation this way at most once, so a process that lives but
// refuses (a restart before its listener opens) cannot flap.
//
// Metadata answered while a partition's leader is such a suspect would
// name the dead leader, and a client with franz-go's default settings then
// waits out its metadata.min.age (5 s) before asking again: so Metadata
// waits, at most refusalMetadataWait, for the fence to be applied.

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// refusalMetadataWait bounds how long Metadata waits for the fence of a
// leader this node saw refuse connections.
const refusalMetadataWait = time.Second

// refusals is what this node has seen refuse connections.
type refusals struct {
	mu sync.Mutex
	// reported is the incarnation last reported per node (once each).
	reported map[int32]string
	// suspect is the latest refusal per node: incarnation and time.
	suspect map[int32]refusal
}

type refusal struct {
	incarnation string
	atMs        int64
}

// connectionRefused notes err from a connection to node: if it is a
// refusal, the node's current incarnation is reported once.
func (s *Server) connectionRefused(node int32, err error) {
	if !errors.Is(err, syscall.ECONNREFUSED) || node == s.cfg.NodeID {
		return
	}
	st := s.clusterState()
	b, ok := st.Brokers[node]
	if !ok || b.Fenced || b.RefusalFenced {
		return
	}
	now := time.Now().UnixMilli()
	r := &s.refusals
	r.mu.Lock()
	if r.suspect == nil {
		r.suspect, r.reported = map[int32]refusal{}, map[int32]string{}
	}
	r.suspect[node] = refusal{incarnation: b.IncarnationID, atMs: now}
	first := r.reported[node] != b.IncarnationID
	r.reported[node] = b.IncarnationID
	r.mu.Unlock()
	if !first {
		return
	}
	s.logger.Info("connection refused: reporting the node unreachable", "node", node, "incarnation", b.IncarnationID)
	s.goTask(func() {
		// Short attempts: a proposal forwarded to a raft leader that died
		// with the node is lost, and the next attempt reaches the new one.
		deadline := time.Now().Add(time.Duration(s.cfg.BrokerSessionTimeoutMs) * time.Millisecond)
		for s.ctx.Err() == nil && time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(s.ctx, 500*time.Millisecond)
			err := s.meta.brokerUnreachable(ctx, node, b.IncarnationID, s.cfg.NodeID, now)
			cancel()
			if err == nil || errors.Is(err, cluster.ErrRejected) {
				return
			}
			if cur, ok := s.clusterState().Brokers[node]; !ok || cur.Fenced || cur.IncarnationID != b.IncarnationID {
				return
			}
		}
		// Not committed: a later refusal reports again.
		r.mu.Lock()
		if r.reported[node] == b.IncarnationID {
			delete(r.reported, node)
		}
		r.mu.Unlock()
	})
}

// suspectLeader reports whether node, a partition leader in st, refused a
// connection from this node after its last heartbeat, in the incarnation
// st names, and is not fenced yet: a fence is on its way.
func (s *Server) suspectLeader(st cluster.State, node int32) bool {
	if node < 0 {
		return false
	}
	r := &s.refusals
	r.mu.Lock()
	sus, ok := r.suspect[node]
	r.mu.Unlock()
	if !ok {
		return false
	}
	b, ok := st.Brokers[node]
	return ok && !b.Fenced && !b.RefusalFenced && b.IncarnationID == sus.incarnation && sus.atMs > b.LastHeartbeatMs
}

// awaitSuspectFences waits, at most refusalMetadataWait, until no
// partition of the named topics (nil: all) is led by a suspect.
func (s *Server) awaitSuspectFences(ctx context.Context, topics []string) {
	r := &s.refusals
	r.mu.Lock()
	none := len(r.suspect) == 0
	r.mu.Unlock()
	if none {
		return
	}
	anySuspect := func() bool {
		st := s.clusterState()
		check := func(t cluster.Topic) bool {
			for _, p := range t.Partitions {
				if s.suspectLeader(st, p.Leader) {
					return true
				}
			}
			return false
		}
		if topics == nil {
			for _, t := range st.Topics {
				if check(t) {
					return true
				}
			}
			return false
		}
		for _, name := range topics {
			if t, ok := st.Topic(name); ok && check(t) {
				return true
			}
		}
		return false
	}
	if !anySuspect() {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, refusalMetadataWait)
	defer cancel()
	_ = s.meta.waitReconciled(wctx, func() bool { return !anySuspect() })
}
