package metadata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
)

// RaftStore is the Store the broker uses on top of the controller quorum:
// every change is a record committed through the quorum (from whichever
// node the call is made on) and applied locally before the call returns;
// reads come from the locally applied state.
//
// The broker's Topic keeps one leader epoch per partition; RaftStore maps
// it onto the richer partition state (replicas, ISR, leader, epochs): the
// epochs read are the quorum's, and UpdateTopic changes the partition count
// and configs only — leader epochs move with leader changes.
//
// On a broker-only node the member is an *Observer (OpenObserverStore):
// reads come from its copy of the applied state and changes go through
// the controller it is connected to.
type RaftStore struct {
	node    Member
	owned   bool
	timeout time.Duration
}

var _ Store = (*RaftStore)(nil)

// NewRaftStore serves the Store interface from a running node; closing the
// store does not close the node. timeout bounds each change (0: 10 s).
func NewRaftStore(n *Node, timeout time.Duration) *RaftStore {
	return newMemberStore(n, timeout)
}

// NewMemberStore is NewRaftStore for any Member (a *Node or an *Observer).
func NewMemberStore(m Member, timeout time.Duration) *RaftStore {
	return newMemberStore(m, timeout)
}

func newMemberStore(n Member, timeout time.Duration) *RaftStore {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &RaftStore{node: n, timeout: timeout}
}

// OpenRaftStore starts a node with cfg and waits (within ctx) until the
// quorum has a cluster id, which the first leader proposes. Closing the
// store closes the node.
func OpenRaftStore(ctx context.Context, cfg Config) (*RaftStore, error) {
	n, err := StartNode(cfg)
	if err != nil {
		return nil, err
	}
	return openMemberStore(ctx, n)
}

// OpenObserverStore starts an observer (a broker-only node) with cfg and
// waits (within ctx) until it has applied a state with a cluster id.
// Closing the store closes the observer.
func OpenObserverStore(ctx context.Context, cfg ObserverConfig) (*RaftStore, error) {
	o, err := StartObserver(cfg)
	if err != nil {
		return nil, err
	}
	return openMemberStore(ctx, o)
}

// openMemberStore owns n and waits for the cluster id.
func openMemberStore(ctx context.Context, n Member) (*RaftStore, error) {
	s := newMemberStore(n, 0)
	s.owned = true
	for {
		// Read the index first: a state without a cluster id at or after
		// it means the id comes at a later index.
		idx := n.AppliedIndex()
		if n.State().ClusterID != "" {
			break
		}
		if err := n.WaitApplied(ctx, idx+1); err != nil {
			n.Close()
			return nil, fmt.Errorf("metadata: waiting for the cluster id: %w", err)
		}
	}
	return s, nil
}

// Node is the raft voter behind the store; nil when the store follows
// the quorum as an observer (use Member).
func (s *RaftStore) Node() *Node {
	n, _ := s.node.(*Node)
	return n
}

// Member is the node's member of the metadata log: a *Node on a
// controller, an *Observer on a broker-only node.
func (s *RaftStore) Member() Member { return s.node }

// Observer is the observer behind the store; nil on a controller.
func (s *RaftStore) Observer() *Observer {
	o, _ := s.node.(*Observer)
	return o
}

func (s *RaftStore) propose(rec cluster.Record) (Applied, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	return s.node.Propose(ctx, rec)
}

// ClusterID implements Store.
func (s *RaftStore) ClusterID() string { return s.node.State().ClusterID }

// Topics implements Store; sorted by name.
func (s *RaftStore) Topics() []Topic {
	st := s.node.State()
	out := make([]Topic, 0, len(st.Topics))
	for _, t := range st.Topics {
		out = append(out, brokerTopic(t))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func brokerTopic(t cluster.Topic) Topic {
	bt := Topic{Name: t.Name, ID: TopicID(t.ID), LeaderEpochs: make([]int32, len(t.Partitions)), Configs: maps.Clone(t.Configs)}
	if bt.Configs == nil {
		bt.Configs = map[string]string{}
	}
	for i, p := range t.Partitions {
		bt.LeaderEpochs[i] = p.LeaderEpoch
	}
	return bt
}

// assign places n new partitions with replication factor rf evenly over
// the unfenced brokers (and racks). With one replica and no registered
// broker yet (a node opening its data directory) it is this node.
func (s *RaftStore) assign(n, rf int) ([]cluster.PartitionAssignment, error) {
	rf = max(rf, 1)
	plan, err := cluster.PlanAssignment(s.node.State(), n, rf)
	if err == nil {
		return plan, nil
	}
	if rf > 1 {
		return nil, fmt.Errorf("%w: replication factor %d: %w", ErrNotEnoughBrokers, rf, err)
	}
	out := make([]cluster.PartitionAssignment, n)
	for i := range out {
		out[i] = cluster.PartitionAssignment{Replicas: []int32{s.node.ID()}}
	}
	return out, nil
}

func storeError(err error, name string) error {
	switch {
	case errors.Is(err, cluster.ErrTopicExists), errors.Is(err, cluster.ErrTopicIDExists):
		return fmt.Errorf("%w: %s: %w", ErrTopicExists, name, err)
	case errors.Is(err, cluster.ErrTopicNotFound):
		return fmt.Errorf("%w: %s: %w", ErrTopicNotFound, name, err)
	}
	return err
}

// CreateTopic implements Store: the partitions get t.ReplicationFactor
// replicas each, placed by cluster.PlanAssignment.
func (s *RaftStore) CreateTopic(t Topic) error {
	if t.Partitions() < 1 {
		return fmt.Errorf("metadata: topic %s: no partitions", t.Name)
	}
	var parts []cluster.PartitionAssignment
	if t.Assignments != nil {
		for _, r := range t.Assignments {
			parts = append(parts, cluster.PartitionAssignment{Replicas: slices.Clone(r)})
		}
	} else {
		var err error
		if parts, err = s.assign(int(t.Partitions()), t.ReplicationFactor); err != nil {
			return err
		}
	}
	rec := cluster.CreateTopic{Name: t.Name, ID: cluster.TopicID(t.ID), Partitions: parts, Configs: maps.Clone(t.Configs)}
	_, err := s.propose(rec)
	return storeError(err, t.Name)
}

// UpdateTopic implements Store: it adds partitions and replaces configs as
// t asks. Leader epochs are the quorum's and not taken from t.
func (s *RaftStore) UpdateTopic(t Topic) error {
	cur, ok := s.node.State().Topic(t.Name)
	if !ok || cluster.TopicID(t.ID) != cur.ID {
		return fmt.Errorf("%w: %s", ErrTopicNotFound, t.Name)
	}
	have, want := len(cur.Partitions), int(t.Partitions())
	if want < have {
		return fmt.Errorf("metadata: topic %s has %d partitions; the count can only grow", t.Name, have)
	}
	if want > have {
		rf := len(cur.Partitions[0].Replicas)
		parts, err := s.assign(want-have, rf)
		if err != nil {
			return err
		}
		if _, err := s.propose(cluster.CreatePartitions{Topic: t.Name, Partitions: parts}); err != nil {
			return storeError(err, t.Name)
		}
	}
	if !maps.Equal(t.Configs, cur.Configs) {
		if _, err := s.propose(cluster.AlterConfigs{Topic: t.Name, Configs: maps.Clone(t.Configs)}); err != nil {
			return storeError(err, t.Name)
		}
	}
	return nil
}

// DeleteTopic implements Store.
func (s *RaftStore) DeleteTopic(name string) error {
	_, err := s.propose(cluster.DeleteTopic{Name: name})
	return storeError(err, name)
}

// AllocateProducerIDs implements Store: the block starts where the state
// stood just before the committed record.
func (s *RaftStore) AllocateProducerIDs(n int64) (int64, error) {
	a, err := s.propose(cluster.AllocateProducerIDs{N: n})
	if err != nil {
		return 0, err
	}
	return a.Before.NextProducerID, nil
}

// Close implements Store; it closes the node only if OpenRaftStore started it.
func (s *RaftStore) Close() error {
	if s.owned {
		return s.node.Close()
	}
	return nil
}
