package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/share"
)

// shareStateStore persists share-partition snapshots (placeholder: kept
// in memory only).
type shareStateStore struct {
	s *Server
}

func newShareStateStore(s *Server) *shareStateStore { return &shareStateStore{s: s} }

// load returns key's persisted snapshot; ok is false when there is none.
func (st *shareStateStore) load(key sharePartitionKey) (snap share.Snapshot, ok bool, code *kerr.Error) {
	return share.Snapshot{}, false, nil
}

// queueLocked queues key's snapshot for writing, under the share
// coordinator's mu (so writes keep the order of the changes); the
// returned function waits for it, with no lock held.
func (st *shareStateStore) queueLocked(key sharePartitionKey, snap share.Snapshot) func() error {
	return nil
}

// forget removes the snapshots of deleted share-partitions.
func (st *shareStateStore) forget(keys []sharePartitionKey) {}
