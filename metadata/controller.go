package metadata

import (
	"context"
	"errors"
	"fmt"
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
	for {
		if n.IsLeader() {
			if err := n.ControllerStep(ctx); err != nil && ctx.Err() == nil {
				n.cfg.Logger.Warn("metadata: controller step", "node", n.cfg.NodeID, "err", err)
			}
		}
		select {
		case <-n.stopc:
			return
		case <-ticker.C:
		case <-n.becameLeader:
		}
	}
}

// ControllerStep is one pass of the active controller: it proposes the
// cluster id if the state has none, then the fencing decisions at the
// clock's current time (PlanFencing), then the leader elections the new
// state calls for (PlanElections). Decisions are pure functions of the
// applied state; only their records change anything, through the quorum.
// It does nothing on a node that is not the leader.
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
	now := n.cfg.Clock.Now().UnixMilli()
	if err := propose(cluster.PlanFencing(n.State(), now, n.cfg.SessionTimeout.Milliseconds())...); err != nil {
		return err
	}
	return propose(cluster.PlanElections(n.State())...)
}
