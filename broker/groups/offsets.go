package groups

import (
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Commit validates an OffsetCommit against the group's membership and, if
// it is accepted, applies it and returns its records.
func (g *Group) Commit(now time.Time, req CommitRequest) (*kerr.Error, Effects) {
	g.fireTimers(now)
	err := g.validateCommit(now, req)
	if err == nil {
		for _, o := range req.Offsets {
			g.setOffset(o.TopicPartition, o.OffsetAndMetadata)
			om := o.OffsetAndMetadata
			g.out.Records = append(g.out.Records, Record{Group: g.id, IsOffset: true, TopicPartition: o.TopicPartition, Offset: &om})
		}
	}
	g.fireTimers(now)
	return err, g.take()
}

func (g *Group) validateCommit(now time.Time, req CommitRequest) *kerr.Error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if g.consumer != nil {
		return g.validateConsumerCommit(now, req)
	}
	if req.Generation < 0 && g.state == Empty {
		// A simple consumer or an admin tool: the group stores offsets only.
		return nil
	}
	if req.Generation >= 0 || req.MemberID != "" || req.InstanceID != nil {
		if err := g.validateMember(req.MemberID, req.InstanceID); err != nil {
			return err
		}
		if req.Generation != g.generation {
			return kerr.IllegalGeneration
		}
	} else if g.state != Empty {
		// Without member and generation only an Empty group takes commits.
		return kerr.UnknownMemberID
	}
	if g.state == CompletingRebalance {
		// The member knows the new generation but not its assignment yet.
		return kerr.RebalanceInProgress
	}
	if m := g.members[req.MemberID]; m != nil && !m.awaitingJoin && !m.awaitingSync {
		m.sessionDeadline = now.Add(m.sessionTimeout) // a commit is a sign of life
	}
	return nil
}

// Offset returns the committed offset of a partition.
func (g *Group) Offset(tp TopicPartition) (OffsetAndMetadata, bool) {
	o, ok := g.offsets[tp]
	return o, ok
}

// Offsets returns every committed offset, sorted by topic and partition.
func (g *Group) Offsets() []CommitOffset {
	out := make([]CommitOffset, 0, len(g.offsets))
	for tp, o := range g.offsets {
		out = append(out, CommitOffset{TopicPartition: tp, OffsetAndMetadata: o})
	}
	sort.Slice(out, func(i, j int) bool { return lessTP(out[i].TopicPartition, out[j].TopicPartition) })
	return out
}

// NumOffsets is the number of committed offsets.
func (g *Group) NumOffsets() int { return len(g.offsets) }

func lessTP(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// removeOffsets deletes the given offsets (those that exist, committed or
// pending in a transaction) and records their tombstones.
func (g *Group) removeOffsets(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool { return lessTP(tps[i], tps[j]) })
	for _, tp := range tps {
		if _, ok := g.offsets[tp]; !ok && !g.HasPendingTxnOffsets(tp) {
			continue
		}
		g.deleteOffset(tp)
		g.out.Records = append(g.out.Records, Record{Group: g.id, IsOffset: true, TopicPartition: tp})
	}
}

// dieIfUnused moves an Empty group without offsets (committed or pending)
// to Dead, with a tombstone for its metadata if it was ever written
// (generation > 0).
func (g *Group) dieIfUnused(now time.Time) {
	if g.state != Empty || g.hasOffsets() {
		return
	}
	g.transition(Dead, now)
	if g.generation > 0 {
		g.out.Records = append(g.out.Records, Record{Group: g.id})
	}
}

// ExpireOffsets removes offsets older than retention (offsets.retention.
// minutes) by Kafka's rules (KIP-211): all offsets of an Empty group once it
// has been Empty that long; in a group without a protocol type (offsets
// only), each offset that long after its commit; in a Stable consumer
// group, offsets of topics no member subscribes to. A commit made with an
// explicit retention (v1–v4) expires at its expire timestamp. An offset
// with transactional offsets pending for its partition does not expire
// (Kafka's OffsetMetadataManager.cleanupExpiredOffsets). An Empty group
// left without offsets becomes Dead.
func (g *Group) ExpireOffsets(now time.Time, retention time.Duration) Effects {
	g.fireTimers(now)
	nowMs := now.UnixMilli()
	expired := func(o OffsetAndMetadata, base int64) bool {
		if o.ExpireTimestamp >= 0 {
			return nowMs >= o.ExpireTimestamp
		}
		return nowMs-base >= retention.Milliseconds()
	}
	var remove []TopicPartition
	switch {
	case g.protocolType != "" && g.state == Empty:
		for tp, o := range g.offsets {
			base := o.CommitTimestamp
			if !g.stateTimestamp.IsZero() {
				base = g.stateTimestamp.UnixMilli()
			}
			if expired(o, base) {
				remove = append(remove, tp)
			}
		}
	case g.protocolType == ConsumerProtocolType && g.subscribedKnown && g.state == Stable:
		for tp, o := range g.offsets {
			if !g.subscribedTopics[tp.Topic] && expired(o, o.CommitTimestamp) {
				remove = append(remove, tp)
			}
		}
	case g.protocolType == "":
		for tp, o := range g.offsets {
			if expired(o, o.CommitTimestamp) {
				remove = append(remove, tp)
			}
		}
	}
	remove = slices.DeleteFunc(remove, g.HasPendingTxnOffsets)
	g.removeOffsets(remove)
	g.dieIfUnused(now)
	return g.take()
}

// Delete handles DeleteGroups: only an Empty group can be deleted; its
// offsets — committed or pending in a transaction, as Kafka's
// deleteAllOffsets — and metadata get tombstones and it becomes Dead.
func (g *Group) Delete(now time.Time) (*kerr.Error, Effects) {
	g.fireTimers(now)
	switch g.state {
	case Dead:
		return kerr.GroupIDNotFound, g.take()
	case Empty:
	default:
		return kerr.NonEmptyGroup, g.take()
	}
	g.removeOffsets(g.offsetPartitions())
	g.dieIfUnused(now)
	return nil, g.take()
}

// DeleteOffsets handles OffsetDelete. It returns a group-level error, or
// per-partition errors (GROUP_SUBSCRIBED_TO_TOPIC for topics an active
// consumer group consumes; nil where the offset was deleted or absent).
func (g *Group) DeleteOffsets(now time.Time, tps []TopicPartition) (*kerr.Error, []*kerr.Error, Effects) {
	g.fireTimers(now)
	errs := make([]*kerr.Error, len(tps))
	switch {
	case g.state == Dead:
		return kerr.GroupIDNotFound, nil, g.take()
	case g.state == Empty:
	case g.protocolType == ConsumerProtocolType:
		for i, tp := range tps {
			if g.isSubscribedToTopic(tp.Topic) {
				errs[i] = kerr.GroupSubscribedToTopic
			}
		}
	default:
		return kerr.NonEmptyGroup, nil, g.take()
	}
	var remove []TopicPartition
	for i, tp := range tps {
		if errs[i] == nil {
			remove = append(remove, tp)
		}
	}
	g.removeOffsets(remove)
	return nil, errs, g.take()
}

// RemoveTopicOffsets deletes every offset of a deleted topic (Kafka does
// this when a topic goes away). An Empty group left without offsets
// becomes Dead.
func (g *Group) RemoveTopicOffsets(now time.Time, topic string) Effects {
	var remove []TopicPartition
	for _, tp := range g.offsetPartitions() {
		if tp.Topic == topic {
			remove = append(remove, tp)
		}
	}
	if len(remove) == 0 {
		return g.take()
	}
	g.removeOffsets(remove)
	g.dieIfUnused(now)
	return g.take()
}
