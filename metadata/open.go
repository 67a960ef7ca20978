package metadata

import (
	"context"
	"fmt"
)

// OpenNode starts a node with cfg (StartNode) and waits, within ctx, until
// the quorum has a cluster id, which the first leader proposes. The caller
// closes the node.
func OpenNode(ctx context.Context, cfg Config) (*Node, error) {
	n, err := StartNode(cfg)
	if err != nil {
		return nil, err
	}
	if err := WaitClusterID(ctx, n); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// OpenObserver starts an observer (a broker-only node) with cfg and waits,
// within ctx, until it has applied a state with a cluster id. The caller
// closes the observer.
func OpenObserver(ctx context.Context, cfg ObserverConfig) (*Observer, error) {
	o, err := StartObserver(cfg)
	if err != nil {
		return nil, err
	}
	if err := WaitClusterID(ctx, o); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// WaitClusterID waits, within ctx, until m has applied a state with a
// cluster id.
func WaitClusterID(ctx context.Context, m Member) error {
	for {
		// Read the index first: a state without a cluster id at or after
		// it means the id comes at a later index.
		idx := m.AppliedIndex()
		if m.State().ClusterID != "" {
			return nil
		}
		if err := m.WaitApplied(ctx, idx+1); err != nil {
			return fmt.Errorf("metadata: waiting for the cluster id: %w", err)
		}
	}
}
