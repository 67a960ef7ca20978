package metadata

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// controllerLoop runs ControllerStep every ControllerInterval while this
// node leads.
func (n *Node) controllerLoop() {
	defer n.wg.Done()
	ticker := time.NewTicker(n.cfg.ControllerInterval)
	defer ticker.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Close cancels the step in flight.
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		select {
		case <-n.stopc:
			cancel()
		case <-ctx.Done():
		}
	}()
	leading := false
	for {
		if n.IsLeader() {
			if !leading && n.cfg.run != nil {
				n.cfg.run.tookOver(n.cfg.Clock.Now())
			}
			leading = true
			if err := n.ControllerStep(ctx); err != nil && ctx.Err() == nil {
				n.cfg.Logger.Warn("metadata: controller step", "node", n.cfg.NodeID, "err", err)
			}
		} else {
			leading = false
		}
		select {
		case <-n.stopc:
			return
		case <-ticker.C:
		case <-n.becameLeader:
		}
	}
}

// controllerRun is the controller's bookkeeping across steps.
type controllerRun struct {
	mu sync.Mutex
	// lastRebalance is when the preferred-leader rebalance last ran (zero:
	// never, so the first step runs it).
	lastRebalance time.Time
	// leaderSince is when this node last became the active controller.
	leaderSince time.Time
}

func (r *controllerRun) tookOver(now time.Time) {
	r.mu.Lock()
	r.leaderSince = now
	r.mu.Unlock()
}

// takeoverGrace is how long after taking over a new controller waits
// before fencing a broker it has not heard from: a third of the session,
// at least 500 ms (live voters answer the new leader within a raft tick;
// observers' heartbeats need a commit).
func takeoverGrace(session time.Duration) time.Duration {
	return max(500*time.Millisecond, session/3)
}

// fencingView is the state PlanFencing should judge at now. Heartbeats
// cannot commit while there is no raft leader, so right after a controller
// change every broker looks silent; Kafka's controller starts every
// broker's session afresh when it takes over. Here a broker's last
// heartbeat counts as no older than takeoverGrace before the end of a
// session from the takeover: live brokers are not fenced for the
// election's gap, while one that died with the old controller is fenced
// takeoverGrace after the takeover.
//
// A refused connection (Broker.UnreachableMs) newer than the heartbeat
// and the last raft message keeps counting: it is not raised to the floor.
//
// heard, when not nil, gives the last time a raft message arrived from a
// node (0 if never): a voter whose process talks raft is alive even when
// its heartbeat records commit slowly (an fsync stall on a loaded disk),
// so it is not fenced for that; a crashed or partitioned node falls silent
// on raft too and is fenced one session after its last message.
func (r *controllerRun) fencingView(s cluster.State, session time.Duration, heard func(int32) int64) cluster.State {
	var floor int64
	if r != nil {
		r.mu.Lock()
		since := r.leaderSince
		r.mu.Unlock()
		if !since.IsZero() {
			floor = since.Add(-session + takeoverGrace(session)).UnixMilli()
		}
	}
	if floor == 0 && heard == nil {
		return s
	}
	brokers := make(map[int32]cluster.Broker, len(s.Brokers))
	for id, b := range s.Brokers {
		if heard != nil {
			b.LastHeartbeatMs = max(b.LastHeartbeatMs, heard(id))
		}
		// A refused connection newer than every sign of life is proof,
		// not silence: the takeover floor does not cover it.
		if b.UnreachableMs <= b.LastHeartbeatMs {
			b.LastHeartbeatMs = max(b.LastHeartbeatMs, floor)
		}
		brokers[id] = b
	}
	s.Brokers = brokers
	return s
}

// rebalanceDue reports whether the preferred-leader rebalance is due at
// now, and if so records now as its last run.
func (r *controllerRun) rebalanceDue(now time.Time, every time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.lastRebalance.IsZero() && now.Sub(r.lastRebalance) < every {
		return false
	}
	r.lastRebalance = now
	return true
}

// ControllerStep is one pass of the active controller: it proposes the
// cluster id if the state has none, then the fencing decisions at the
// clock's current time (PlanFencing), then the leader elections the new
// state calls for (PlanElections), then, with AutoLeaderRebalance and at
// most once per LeaderImbalanceCheckInterval of the clock, the preferred
// leader elections (PlanPreferredElections). Decisions are pure functions
// of the applied state; only their records change anything, through the
// quorum. It does nothing on a node that is not the leader.
func (n *Node) ControllerStep(ctx context.Context) error {
	if !n.IsLeader() {
		return nil
	}
	propose := func(recs ...cluster.Record) error {
		for _, r := range recs {
			pctx, cancel := context.WithTimeout(ctx, n.cfg.ProposeTimeout)
			_, err := n.Propose(pctx, r)
			cancel()
			// A rejection means the state moved on meanwhile; the next
			// step plans again from the new state.
			if err != nil && !errors.Is(err, cluster.ErrRejected) {
				return fmt.Errorf("%T: %w", r, err)
			}
		}
		return nil
	}
	if n.State().ClusterID == "" {
		id := n.cfg.ClusterID
		if id == "" {
			id = newClusterID()
		}
		if err := propose(cluster.InitCluster{ClusterID: id}); err != nil {
			return err
		}
	}
	now := n.cfg.Clock.Now()
	view := n.cfg.run.fencingView(n.State(), n.cfg.SessionTimeout, n.lastHeard)
	if err := propose(cluster.PlanFencing(view, now.UnixMilli(), n.cfg.SessionTimeout.Milliseconds())...); err != nil {
		return err
	}
	if err := n.proposeIndependent(ctx, cluster.PlanElections(n.State())); err != nil {
		return err
	}
	if !n.cfg.AutoLeaderRebalance() {
		return nil
	}
	run := n.cfg.run
	if run == nil { // a Node not built by StartNode
		return nil
	}
	if !run.rebalanceDue(now, n.cfg.LeaderImbalanceCheckInterval) {
		return nil
	}
	return n.proposeIndependent(ctx, cluster.PlanPreferredElections(n.State()))
}

// maxProposalsInFlight bounds proposeIndependent's concurrent proposals.
const maxProposalsInFlight = 256

// proposeIndependent proposes records that do not depend on one another
// (elections of distinct partitions) with up to maxProposalsInFlight in
// flight, so that raft appends and commits many per round instead of one
// fsync per record: a node that restarts leading 10,000 partitions gets
// its elections in a fraction of a second, not one raft round each. A
// rejection means the state moved on meanwhile (the next step plans
// again); the first other error is returned once all proposals finished.
func (n *Node) proposeIndependent(ctx context.Context, recs []cluster.Record) error {
	if len(recs) == 0 {
		return nil
	}
	sem := make(chan struct{}, maxProposalsInFlight)
	errs := make(chan error, len(recs))
	var wg sync.WaitGroup
	for _, r := range recs {
		sem <- struct{}{}
		wg.Add(1)
		go func() { // joined by wg.Wait below
			defer wg.Done()
			defer func() { <-sem }()
			pctx, cancel := context.WithTimeout(ctx, n.cfg.ProposeTimeout)
			_, err := n.Propose(pctx, r)
			cancel()
			if err != nil && !errors.Is(err, cluster.ErrRejected) {
				errs <- fmt.Errorf("%T: %w", r, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil if none failed
}
