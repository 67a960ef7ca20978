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
// waits, at most refusalMetadataWait, for the fence to be applied. A
// leader whose connection was lost but not yet redialed is in doubt for
// brokenDoubt; Metadata also peeks at the fetchers' sockets (peer_conns.go)
// so that a crash the fetcher has not noticed yet counts as a doubt.

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// refusalMetadataWait bounds how long Metadata waits for the fence of a
// leader this node saw refuse connections: a raft election, if the node
// was the controller too.
const refusalMetadataWait = 2500 * time.Millisecond

// brokenDoubt is how long after a lost connection to a leader (before
// its redial is refused or works) Metadata waits for the verdict.
const brokenDoubt = 200 * time.Millisecond

// peerCloseSettle is how long a Metadata naming topics waits before it
// looks at the fetchers' sockets a second time. A killed process's sockets
// are closed one by one, in descriptor order, by its exit; a client's
// connection can close before this node's replica fetcher's, and on one
// host (loopback, a laptop cluster, CI) the client's next Metadata can
// reach this node within those microseconds. Named only: a client asks
// for its topics after losing a leader; "all topics" is an admin's view.
// Measured: without it, 1 in about 20 crash rounds of
// TestClusterFailoverGapDefaults answered with the dead leader and the
// franz-go client then waited out its 5 s metadata.min.age.
const peerCloseSettle = 2 * time.Millisecond

// doubtPoll is how often a Metadata waiting on a doubt looks again.
const doubtPoll = 20 * time.Millisecond

// refusals is what this node has seen refuse connections.
type refusals struct {
	mu sync.Mutex
	// reported is the incarnation last reported per node (once each).
	reported map[int32]string
	// suspect is the latest refusal per node: incarnation and time.
	suspect map[int32]refusal
	// broken is when a connection to the node failed otherwise (EOF, a
	// reset, a timeout) and has not worked or been refused since.
	broken map[int32]int64
}

type refusal struct {
	incarnation string
	atMs        int64
}

// connectionFailed notes err from a request to node and reports whether
// it is a connection failure (not a Kafka error code). A refusal reports
// the node's current incarnation once; another failure marks the node in
// doubt until its connection works again or is refused.
func (s *Server) connectionFailed(node int32, err error) bool {
	var kafkaErr *kerr.Error
	if err == nil || errors.As(err, &kafkaErr) || node == s.cfg.NodeID {
		return false
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		s.connectionBroken(node)
		return true
	}
	s.connectionRefused(node)
	return true
}

// connectionBroken puts node in doubt: a connection to it was lost, and
// whether it was refused on redial is not known yet.
func (s *Server) connectionBroken(node int32) {
	r := &s.refusals
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken == nil {
		r.broken = map[int32]int64{}
	}
	if _, ok := r.broken[node]; !ok {
		r.broken[node] = time.Now().UnixMilli()
	}
}

// connectionHealthy notes a request to node that worked.
func (s *Server) connectionHealthy(node int32) {
	r := &s.refusals
	r.mu.Lock()
	delete(r.broken, node)
	r.mu.Unlock()
}

// connectionRefused reports node's current incarnation once.
func (s *Server) connectionRefused(node int32) {
	r0 := &s.refusals
	r0.mu.Lock()
	delete(r0.broken, node)
	r0.mu.Unlock()
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
	if m, ok := s.member.(interface{ LeaderUnreachable(int32) }); ok && s.member.LeaderID() == node {
		// The raft leader's process is gone too: elect another now.
		m.LeaderUnreachable(node)
	}
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

// doubtfulLeader reports whether this node's connection to node failed in
// the last brokenDoubt and its redial has not answered yet.
func (s *Server) doubtfulLeader(node int32) bool {
	r := &s.refusals
	r.mu.Lock()
	at, ok := r.broken[node]
	r.mu.Unlock()
	return ok && time.Now().UnixMilli()-at < brokenDoubt.Milliseconds()
}

// awaitSuspectFences waits, at most refusalMetadataWait, until no
// partition of the named topics (nil: all) is led by a suspect.
func (s *Server) awaitSuspectFences(ctx context.Context, topics []string) {
	// A leader's closed connection the fetcher has not noticed yet.
	closed := s.fetchers.closedLeaders()
	if len(closed) == 0 && topics != nil && s.fetchers.fetching() {
		// A client refreshing the topics it uses may have seen its own
		// connection to a killed leader close an instant before this
		// node's fetcher connections did (peerCloseSettle): look twice.
		t := time.NewTimer(peerCloseSettle)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		closed = s.fetchers.closedLeaders()
	}
	for _, node := range closed {
		s.connectionBroken(node)
	}
	r := &s.refusals
	r.mu.Lock()
	none := len(r.suspect) == 0 && len(r.broken) == 0
	r.mu.Unlock()
	if none {
		return
	}
	anySuspect := func() bool {
		st := s.clusterState()
		check := func(t cluster.Topic) bool {
			for _, p := range t.Partitions {
				if s.suspectLeader(st, p.Leader) || s.doubtfulLeader(p.Leader) {
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
	// The fence arrives as applied metadata; a doubt ends without any
	// (the redial answered, or brokenDoubt passed), so look again at
	// least every doubtPoll.
	deadline := time.Now().Add(refusalMetadataWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		wctx, cancel := context.WithTimeout(ctx, min(doubtPoll, time.Until(deadline)))
		err := s.meta.waitReconciled(wctx, func() bool { return !anySuspect() })
		cancel()
		if err == nil || errors.Is(err, errMetadataClosed) {
			return
		}
	}
}
