package broker

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// The broker's one path to the metadata quorum:
//
//	handler ── metadataClient.X(ctx, …) ──► Member.Propose ──► quorum commits,
//	   ▲                                                       this node applies
//	   │                                                             │ Subscribe
//	   │                                                             ▼
//	   └── waitApplied(ctx, index) ◄── markApplied(index) ◄── followMetadata:
//	                                                          reconcile(State)
//
// Every change the broker makes to cluster metadata — topics, partitions,
// configs, ISR changes, reassignments, features, producer-id blocks,
// registration, heartbeats, controlled shutdown — is a metadata/cluster
// record proposed through metadataClient, which returns once the record is
// committed and applied to this node's metadata state, with its log index.
// Nothing a handler does opens, closes or re-roles a partition: the
// applied-state loop (followMetadata, cluster.go) is the only reconciler. A
// handler that must see its own change in the open partitions (CreateTopics
// answering with a topic it can serve, DeleteTopics answering once the
// directories are gone) waits with waitApplied for the loop to reach the
// record's index. No lock is held across a proposal or such a wait.

// metadataClient proposes cluster records for this node and tracks how far
// the node has acted on the applied metadata.
type metadataClient struct {
	member metadata.Member
	// hook, when set (tests), runs before each proposal and may block it.
	hook atomic.Pointer[proposeHook]

	mu struct {
		sync.Mutex
		// applied is the highest log index whose state followMetadata has
		// reconciled the open partitions with.
		applied uint64
		// advanced is closed and replaced whenever applied moves (or a
		// reconcile pass ends), waking waitApplied and waitReconciled.
		advanced chan struct{}
		closed   bool
	}
}

// proposeHook runs before a record is proposed (tests: delay or block one).
type proposeHook func(ctx context.Context, rec cluster.Record)

// errMetadataClosed: the node stopped following the metadata log.
var errMetadataClosed = errors.New("broker: metadata client closed")

func newMetadataClient(m metadata.Member) *metadataClient {
	c := &metadataClient{member: m}
	c.mu.advanced = make(chan struct{})
	return c
}

// setHook installs (nil: removes) the test hook.
func (c *metadataClient) setHook(h proposeHook) {
	if h == nil {
		c.hook.Store(nil)
		return
	}
	c.hook.Store(&h)
}

// propose commits rec and returns once this node has applied it (State
// shows it). A rejection by the state machine wraps cluster.ErrRejected;
// on ctx's end the outcome is unknown.
func (c *metadataClient) propose(ctx context.Context, rec cluster.Record) (metadata.Applied, error) {
	if h := c.hook.Load(); h != nil {
		(*h)(ctx, rec)
	}
	return c.member.Propose(ctx, rec)
}

// proposeIndex is propose returning the record's log index.
func (c *metadataClient) proposeIndex(ctx context.Context, rec cluster.Record) (uint64, error) {
	a, err := c.propose(ctx, rec)
	return a.Index, err
}

// registerBroker records this process as the node's current incarnation.
func (c *metadataClient) registerBroker(ctx context.Context, rec cluster.RegisterBroker) error {
	_, err := c.propose(ctx, rec)
	return err
}

// heartbeat moves this incarnation's last heartbeat to timeMs.
func (c *metadataClient) heartbeat(ctx context.Context, node int32, incarnation string, timeMs int64) error {
	_, err := c.propose(ctx, cluster.BrokerHeartbeat{NodeID: node, IncarnationID: incarnation, TimeMs: timeMs})
	return err
}

// brokerUnreachable reports a refused connection to node's incarnation.
func (c *metadataClient) brokerUnreachable(ctx context.Context, node int32, incarnation string, reporter int32, timeMs int64) error {
	_, err := c.propose(ctx, cluster.BrokerUnreachable{NodeID: node, IncarnationID: incarnation, ReporterID: reporter, TimeMs: timeMs})
	return err
}

// controlledShutdown moves this incarnation's leaderships away and takes it
// out of the ISRs.
func (c *metadataClient) controlledShutdown(ctx context.Context, node int32, incarnation string) error {
	_, err := c.propose(ctx, cluster.ControlledShutdown{NodeID: node, IncarnationID: incarnation})
	return err
}

// createTopic creates a topic with the given placement (one replica list
// per partition, first replica the preferred leader). The state machine
// refuses a name or id in use (cluster.ErrTopicExists, ErrTopicIDExists).
// Admin requests create topics with topicBatch.
func (c *metadataClient) createTopic(ctx context.Context, name string, id metadata.TopicID, placement [][]int32, configs map[string]string) (uint64, error) {
	return c.proposeIndex(ctx, cluster.CreateTopic{Name: name, ID: cluster.TopicID(id), Partitions: assignmentsOf(placement), Configs: maps.Clone(configs)})
}

// topicBatch commits recs (CreateTopic, DeleteTopic, CreatePartitions) as
// one cluster.TopicBatch: one quorum round for all of them. It returns the
// batch's log index and each record's outcome (nil, or the state
// machine's rejection of that record alone), worked out from the state
// the batch applied to exactly as every replica applied it.
func (c *metadataClient) topicBatch(ctx context.Context, recs []cluster.Record) (uint64, []error, error) {
	batch := cluster.TopicBatch{Records: recs}
	a, err := c.propose(ctx, batch)
	if err != nil {
		return 0, nil, err
	}
	_, errs := cluster.ApplyTopicBatch(a.Before, batch)
	return a.Index, errs, nil
}

// alterConfigs replaces a topic's config overrides as a whole.
func (c *metadataClient) alterConfigs(ctx context.Context, topic string, configs map[string]string) (uint64, error) {
	return c.proposeIndex(ctx, cluster.AlterConfigs{Topic: topic, Configs: maps.Clone(configs)})
}

// alterPartition commits an ISR change decided by a partition's leader.
func (c *metadataClient) alterPartition(ctx context.Context, rec cluster.AlterPartition) error {
	_, err := c.propose(ctx, rec)
	return err
}

// reassignPartition starts (or, with no target, cancels) a move.
func (c *metadataClient) reassignPartition(ctx context.Context, rec cluster.ReassignPartition) error {
	_, err := c.propose(ctx, rec)
	return err
}

// updateFeatures changes finalized feature levels, all or none.
func (c *metadataClient) updateFeatures(ctx context.Context, rec cluster.UpdateFeatures) error {
	_, err := c.propose(ctx, rec)
	return err
}

// allocateProducerIDs reserves n consecutive producer ids and returns the
// first: the block starts where the state stood just before the record.
func (c *metadataClient) allocateProducerIDs(ctx context.Context, n int64) (int64, error) {
	a, err := c.propose(ctx, cluster.AllocateProducerIDs{N: n})
	if err != nil {
		return 0, err
	}
	return a.Before.NextProducerID, nil
}

func assignmentsOf(placement [][]int32) []cluster.PartitionAssignment {
	out := make([]cluster.PartitionAssignment, len(placement))
	for i, replicas := range placement {
		out[i] = cluster.PartitionAssignment{Replicas: slices.Clone(replicas)}
	}
	return out
}

// markApplied records that the open partitions match the applied state at
// index (or later) and wakes the waiters. Only followMetadata calls it.
func (c *metadataClient) markApplied(index uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.applied = max(c.mu.applied, index)
	close(c.mu.advanced)
	c.mu.advanced = make(chan struct{})
}

// appliedIndex is the highest index the node has acted on.
func (c *metadataClient) appliedIndex() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.applied
}

// waitApplied waits until this node has acted on the applied metadata up
// to index: the partitions it hosts are open, closed and in the roles that
// state gives them. It fails when ctx ends or the node stops following.
func (c *metadataClient) waitApplied(ctx context.Context, index uint64) error {
	return c.waitReconciled(ctx, func() bool { return c.appliedIndex() >= index })
}

// waitReconciled waits until done holds, re-checking after each pass of
// the applied-state loop; it fails when ctx ends or the node stops
// following the metadata.
func (c *metadataClient) waitReconciled(ctx context.Context, done func() bool) error {
	for {
		c.mu.Lock()
		ch, closed := c.mu.advanced, c.mu.closed
		c.mu.Unlock()
		if done() {
			return nil
		}
		if closed {
			return errMetadataClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close fails every wait: the applied-state loop has stopped.
func (c *metadataClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.closed {
		c.mu.closed = true
		close(c.mu.advanced)
		c.mu.advanced = make(chan struct{})
	}
}
