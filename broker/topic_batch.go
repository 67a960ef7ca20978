package broker

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// Topic changes of one admin request are committed together: the handler
// validates every topic against the applied state (answering each its own
// error), queues the records of those that pass, and commitTopicBatch
// proposes them as one cluster.TopicBatch — one raft round and one WAL
// fsync for the request — then waits once for this node to act on it (one
// reconcile pass). The state machine's rejection of a queued record (the
// name taken meanwhile, …) comes back for that topic alone.

// topicCreation is a validated topic waiting for its commit.
type topicCreation struct {
	name      string
	id        metadata.TopicID
	placement [][]int32
	configs   map[string]string
	// startOffsets, when set, starts the partitions' logs there (recovery
	// from the bucket).
	startOffsets map[int32]int64
}

// createResult is the outcome of one queued creation.
type createResult struct {
	topic *topicState
	err   *topicError
}

// createBatch gathers the topics of one CreateTopics request. Topics are
// placed with one cluster.Assigner, so each spreads around the topics
// queued before it as if they were applied.
type createBatch struct {
	m        *topicManager
	st       cluster.State
	assigner *cluster.Assigner
	pending  []topicCreation
	// unified maps the '.'/'_'-unified names of the queued topics to
	// their names (collidingTopic within the request).
	unified map[string]string
	// wait bounds the commit and the wait for this node to open the
	// topics (at least proposeTimeout).
	wait time.Duration
}

func (m *topicManager) newCreateBatch(wait time.Duration) *createBatch {
	return &createBatch{m: m, st: m.s.clusterState(), unified: map[string]string{}, wait: max(wait, proposeTimeout)}
}

func unifyTopicName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// add validates one topic against the applied state and the topics queued
// before it, and queues it unless validateOnly. refuse, when set, is asked
// once everything else has passed; a non-nil answer stops the creation.
func (b *createBatch) add(name string, partitions int32, replicationFactor int16, configs map[string]string, assignments [][]int32, validateOnly bool, refuse func() *topicError) *topicError {
	m := b.m
	if err := validateTopicName(name); err != nil {
		return newTopicError(kerr.InvalidTopicException, "%v", err)
	}
	if partitions == -1 {
		partitions = m.s.cfg.NumPartitions
	}
	if replicationFactor == -1 {
		replicationFactor = m.s.cfg.DefaultReplicationFactor
	}
	if partitions <= 0 {
		return newTopicError(kerr.InvalidPartitions, "number of partitions must be positive, got %d", partitions)
	}
	if partitions > 100000 {
		return newTopicError(kerr.InvalidPartitions, "number of partitions %d is over the limit of 100000", partitions)
	}
	if replicationFactor <= 0 {
		return newTopicError(kerr.InvalidReplicationFactor, "replication factor must be positive, got %d", replicationFactor)
	}
	if live := m.s.eligibleBrokers(); assignments == nil && int(replicationFactor) > live {
		return newTopicError(kerr.InvalidReplicationFactor, "replication factor %d is larger than the %d available brokers", replicationFactor, live)
	}
	if err := validateTopicConfigs(configs); err != nil {
		return newTopicError(kerr.InvalidConfig, "%v", err)
	}
	if _, ok := b.st.Topics[name]; ok {
		return m.alreadyExists(name)
	}
	if other := collidingTopic(b.st, name); other != "" {
		return newTopicError(kerr.InvalidTopicException, "topic %q collides with existing topic %q ('.' and '_' are interchangeable in metric names)", name, other)
	}
	if other, ok := b.unified[unifyTopicName(name)]; ok && strings.ContainsAny(name, "._") {
		return newTopicError(kerr.InvalidTopicException, "topic %q collides with topic %q of the same request ('.' and '_' are interchangeable in metric names)", name, other)
	}
	if refuse != nil {
		if terr := refuse(); terr != nil {
			return terr
		}
	}
	if validateOnly {
		return nil
	}
	if b.assigner == nil {
		b.assigner = cluster.NewAssigner(b.st)
	}
	placement := assignments
	if placement == nil {
		var err error
		if placement, err = placeWith(b.assigner, m.s.cfg.NodeID, int(partitions), int(replicationFactor)); err != nil {
			return newTopicError(kerr.InvalidReplicationFactor, "%v", err)
		}
	} else {
		for _, replicas := range placement {
			b.assigner.Count(replicas)
		}
	}
	b.queue(topicCreation{name: name, id: metadata.NewTopicID(), placement: placement, configs: configs})
	return nil
}

func (b *createBatch) queue(c topicCreation) {
	b.pending = append(b.pending, c)
	b.unified[unifyTopicName(c.name)] = c.name
}

// commit creates the queued topics with one TopicBatch and returns, in
// queue order, each topic once this node has opened the partitions it
// hosts, or why not. A topic this node cannot open is deleted again
// (KAFKA_STORAGE_ERROR), all such topics with one more batch.
func (b *createBatch) commit() []createResult {
	m := b.m
	out := make([]createResult, len(b.pending))
	if len(b.pending) == 0 {
		return out
	}
	recs := make([]cluster.Record, len(b.pending))
	for i, c := range b.pending {
		recs[i] = cluster.CreateTopic{Name: c.name, ID: cluster.TopicID(c.id), Partitions: assignmentsOf(c.placement), Configs: maps.Clone(c.configs)}
		if c.startOffsets != nil {
			m.mu.Lock()
			m.recovering[c.id] = c.startOffsets
			m.mu.Unlock()
			defer func(id metadata.TopicID) {
				m.mu.Lock()
				delete(m.recovering, id)
				m.mu.Unlock()
			}(c.id)
		}
	}
	errs, terr := m.commitTopicBatch(recs, b.wait, "storing topics", "the topics are created but this node has not opened them yet")
	var undo []cluster.Record
	for i, c := range b.pending {
		switch err := errs[i]; {
		case errors.Is(err, cluster.ErrTopicExists):
			// Created elsewhere between our check and the commit.
			out[i].err = m.alreadyExists(c.name)
		case errors.Is(err, cluster.ErrTopicIDExists):
			out[i].err = newTopicError(kerr.TopicAlreadyExists, "a topic with id %x already exists", c.id[:])
		case err != nil:
			out[i].err = newTopicError(kerr.UnknownServerError, "storing topic %s: %v", c.name, err)
		case terr != nil:
			out[i].err = terr
		default:
			if oerr := m.openFailure(c.id); oerr != nil {
				out[i].err = newTopicError(kerr.KafkaStorageError, "creating topic %s: %v", c.name, oerr)
				undo = append(undo, cluster.DeleteTopic{Name: c.name, ID: cluster.TopicID(c.id)})
				continue
			}
			if out[i].topic = m.getByID(c.id); out[i].topic == nil {
				out[i].err = newTopicError(kerr.UnknownServerError, "topic %s was deleted while it was being created", c.name)
			}
		}
	}
	if len(undo) > 0 {
		_, _ = m.commitTopicBatch(undo, proposeTimeout, "", "")
	}
	return out
}

// commitTopicBatch proposes recs as TopicBatch records (one per
// cluster.MaxTopicBatch records) and waits, within wait, until this node
// has acted on them. It returns each record's rejection by the state
// machine (nil: applied), and terr when the quorum failed (then every
// outcome is nil; what says what was being stored) or the wait for this
// node timed out (notYet says what has not happened): the answer for the
// records that were not rejected.
func (m *topicManager) commitTopicBatch(recs []cluster.Record, wait time.Duration, what, notYet string) ([]error, *topicError) {
	ctx, cancel := context.WithTimeout(m.s.ctx, wait)
	defer cancel()
	errs := make([]error, 0, len(recs))
	var index uint64
	for start := 0; start < len(recs); start += cluster.MaxTopicBatch {
		chunk := recs[start:min(start+cluster.MaxTopicBatch, len(recs))]
		i, chunkErrs, err := m.s.meta.topicBatch(ctx, chunk)
		if err != nil {
			return make([]error, len(recs)), quorumError(err, what)
		}
		index = i
		errs = append(errs, chunkErrs...)
	}
	if err := m.s.meta.waitApplied(ctx, index); err != nil {
		return errs, newTopicError(kerr.RequestTimedOut, "%s: %v", notYet, err)
	}
	return errs, nil
}

// deleteMany deletes topics by name with one TopicBatch, waiting up to
// wait (at least proposeTimeout) for this node to remove them; it returns
// one answer per name (nil: deleted and removed on this node). A name given
// twice is deleted once; the second answer is UNKNOWN_TOPIC_OR_PARTITION,
// as if asked after the first.
func (m *topicManager) deleteMany(names []string, wait time.Duration) []*topicError {
	out := make([]*topicError, len(names))
	st := m.s.clusterState()
	var recs []cluster.Record
	var at []int
	for i, name := range names {
		switch ct, ok := st.Topic(name); {
		case !m.s.cfg.DeleteTopicEnable:
			out[i] = newTopicError(kerr.TopicDeletionDisabled, "delete.topic.enable is false")
		case isInternalTopic(name):
			out[i] = newTopicError(kerr.InvalidRequest, "%s is an internal topic and cannot be deleted", name)
		case !ok:
			out[i] = newTopicError(kerr.UnknownTopicOrPartition, "unknown topic %q", name)
		default:
			recs = append(recs, cluster.DeleteTopic{Name: name, ID: ct.ID})
			at = append(at, i)
		}
	}
	if len(recs) == 0 {
		return out
	}
	errs, terr := m.commitTopicBatch(recs, max(wait, proposeTimeout), "deleting topics", "the topics are deleted but this node has not removed them yet")
	for j, i := range at {
		switch {
		case errors.Is(errs[j], cluster.ErrTopicNotFound):
			out[i] = newTopicError(kerr.UnknownTopicOrPartition, "unknown topic %q", names[i]) // deleted meanwhile
		case errs[j] != nil:
			out[i] = newTopicError(kerr.UnknownServerError, "deleting topic %s: %v", names[i], errs[j])
		case terr != nil:
			out[i] = terr
		}
	}
	return out
}

// growth is one topic's CreatePartitions, validated.
type growth struct {
	name      string
	id        metadata.TopicID
	placement [][]int32
}

// growBatch gathers the topics of one CreatePartitions request, placed
// with one Assigner.
type growBatch struct {
	m        *topicManager
	st       cluster.State
	assigner *cluster.Assigner
	pending  []growth
	// wait bounds the commit and the wait for this node to open the new
	// partitions (at least proposeTimeout).
	wait time.Duration
}

func (m *topicManager) newGrowBatch(wait time.Duration) *growBatch {
	return &growBatch{m: m, st: m.s.clusterState(), wait: max(wait, proposeTimeout)}
}

// add validates adding partitions to name up to count (see grow) and
// queues it unless validateOnly.
func (b *growBatch) add(name string, count int32, assignments [][]int32, validateOnly bool) *topicError {
	st := b.st
	if isInternalTopic(name) {
		// Groups are placed by partition count: adding partitions would move them.
		return newTopicError(kerr.InvalidRequest, "%s is an internal topic; its partition count cannot change", name)
	}
	ct, ok := st.Topic(name)
	if !ok {
		return newTopicError(kerr.UnknownTopicOrPartition, "unknown topic %q", name)
	}
	current := int32(len(ct.Partitions))
	switch {
	case count < current:
		return newTopicError(kerr.InvalidPartitions, "topic %q has %d partitions; the count can only grow", name, current)
	case count == current:
		return newTopicError(kerr.InvalidPartitions, "topic %q already has %d partitions", name, current)
	case count > 100000:
		return newTopicError(kerr.InvalidPartitions, "number of partitions %d is over the limit of 100000", count)
	case assignments != nil && len(assignments) != int(count-current):
		return newTopicError(kerr.InvalidReplicaAssignment, "%d new partitions but %d assignments", count-current, len(assignments))
	}
	// The replica count a reassignment of partition 0 is heading for, as
	// the state machine checks.
	rf := len(ct.Partitions[0].TargetReplicas())
	for i, replicas := range assignments {
		partition := current + int32(i)
		if len(replicas) != rf {
			return newTopicError(kerr.InvalidReplicaAssignment, "partition %d: %d replicas, but the topic's partitions have %d", partition, len(replicas), rf)
		}
		if msg := replicaSetProblem(st, replicas); msg != "" {
			return newTopicError(kerr.InvalidReplicaAssignment, "partition %d: %s", partition, msg)
		}
	}
	if validateOnly {
		return nil
	}
	if b.assigner == nil {
		b.assigner = cluster.NewAssigner(st)
	}
	placement := assignments
	if placement == nil {
		var err error
		if placement, err = placeWith(b.assigner, b.m.s.cfg.NodeID, int(count-current), rf); err != nil {
			return newTopicError(kerr.InvalidReplicationFactor, "%v", err)
		}
	} else {
		for _, replicas := range placement {
			b.assigner.Count(replicas)
		}
	}
	b.pending = append(b.pending, growth{name: name, id: metadata.TopicID(ct.ID), placement: placement})
	return nil
}

// commit adds the queued partitions with one TopicBatch and returns, in
// queue order, nil once this node has opened the new partitions it hosts,
// or why not.
func (b *growBatch) commit() []*topicError {
	m := b.m
	out := make([]*topicError, len(b.pending))
	if len(b.pending) == 0 {
		return out
	}
	recs := make([]cluster.Record, len(b.pending))
	for i, g := range b.pending {
		recs[i] = cluster.CreatePartitions{Topic: g.name, Partitions: assignmentsOf(g.placement)}
	}
	errs, terr := m.commitTopicBatch(recs, b.wait, "storing partitions", "the partitions are created but this node has not opened them yet")
	for i, g := range b.pending {
		switch err := errs[i]; {
		case errors.Is(err, cluster.ErrTopicNotFound):
			out[i] = newTopicError(kerr.UnknownTopicOrPartition, "unknown topic %q", g.name)
		case errors.Is(err, cluster.ErrReplicaCountDiffering), errors.Is(err, cluster.ErrInvalid):
			out[i] = newTopicError(kerr.InvalidReplicaAssignment, "%v", err)
		case err != nil:
			out[i] = newTopicError(kerr.UnknownServerError, "storing partitions of %s: %v", g.name, err)
		case terr != nil:
			out[i] = terr
		default:
			if oerr := m.openFailure(g.id); oerr != nil {
				out[i] = newTopicError(kerr.KafkaStorageError, "creating partitions: %v", oerr)
			}
		}
	}
	return out
}
