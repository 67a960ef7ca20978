package groups

// Transactional offset commits (TxnOffsetCommit, KIP-98; member fencing,
// KIP-447), as Kafka's group coordinator keeps them:
//
//   - A TxnOffsetCommit is validated like an OffsetCommit, except that v0–v2
//     carry no member: with generation -1, no member id and no instance id
//     it is accepted in any state; with any of them the member and
//     generation are checked (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
//     ILLEGAL_GENERATION; member epochs in a consumer group). It is not
//     refused during CompletingRebalance and is no sign of life for the
//     member's session.
//   - Its offsets are pending for the producer id: written to the log (in a
//     transactional batch), invisible to OffsetFetch, and reported as
//     UNSTABLE_OFFSET_COMMIT to an OffsetFetch with require_stable.
//   - The transaction's commit marker makes them the committed offsets,
//     unless a partition's committed offset came from a later record — a
//     plain OffsetCommit made while the transaction was open keeps its
//     place. An abort marker drops them.
//   - A tombstone for a partition (OffsetDelete, DeleteGroups, a deleted
//     topic) removes its pending offsets too. Offset expiry skips a
//     partition with pending offsets, and a group that holds any is never
//     expired.
//
// Kafka compares log offsets of the commit records (record offsets in the
// new coordinator, OffsetMetadataManager.replayEndTransactionMarker; batch
// offsets in GroupMetadata.completePendingTxnOffsetCommit). The group
// compares positions instead: each offset record it returns or replays gets
// the next number in its own count. Records of a group reach the log in the
// order they were returned, and are replayed in log order, so positions
// order them exactly as log offsets would, without the caller reporting
// where each record landed.

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TxnCommitRequest is a TxnOffsetCommit request for this group. The
// transactional id, partition checks (unknown topics, metadata size) and
// producer fencing are the caller's: the log that takes the records checks
// ProducerEpoch against the producer's state.
type TxnCommitRequest struct {
	ProducerID    int64
	ProducerEpoch int16
	// GenerationID, MemberID and GroupInstanceID (v3+, KIP-447): -1, ""
	// and nil when not given; then no member is checked.
	GenerationID    int32
	MemberID        string
	GroupInstanceID *string
	Offsets         []CommitOffset
}

// FetchedOffset is one partition of an OffsetFetch.
type FetchedOffset struct {
	TopicPartition
	// OffsetAndMetadata is the committed offset; Offset is -1 (and
	// LeaderEpoch -1) when there is none or Err is set.
	OffsetAndMetadata
	// Err is UNSTABLE_OFFSET_COMMIT for a partition with pending
	// transactional offsets when the fetch requires stable offsets.
	Err *kerr.Error
}

// txnOffset is a pending transactional offset and the position of its
// record.
type txnOffset struct {
	OffsetAndMetadata
	position int64
}

// TxnCommit validates a TxnOffsetCommit and, if it is accepted, makes its
// offsets pending for req.ProducerID. It returns one error per offset of
// req (all the same: validation concerns the group), the offset records to
// append as one transactional batch of req's producer id and epoch, and
// the call's other effects (timers that fired, a consumer group's record),
// whose records are not transactional and go to the log first.
func (g *Group) TxnCommit(now time.Time, req TxnCommitRequest) (errs []*kerr.Error, txnRecords []Record, eff Effects) {
	g.fireTimers(now)
	errs = make([]*kerr.Error, len(req.Offsets))
	if err := g.validateTxnCommit(req); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs, nil, g.take()
	}
	for _, o := range req.Offsets {
		g.stagePendingTxnOffset(req.ProducerID, o.TopicPartition, o.OffsetAndMetadata)
		om := o.OffsetAndMetadata
		txnRecords = append(txnRecords, Record{Group: g.id, IsOffset: true, TopicPartition: o.TopicPartition, Offset: &om})
	}
	return errs, txnRecords, g.take()
}

// validateTxnCommit is Kafka's validateOffsetCommit with isTransactional
// set (ClassicGroup and ConsumerGroup in the new coordinator).
func (g *Group) validateTxnCommit(req TxnCommitRequest) *kerr.Error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	anonymous := req.GenerationID < 0 && req.MemberID == "" && req.GroupInstanceID == nil
	if cg := g.consumer; cg != nil {
		if req.GenerationID < 0 && len(cg.members) == 0 {
			return nil
		}
		if anonymous {
			return nil
		}
		m := cg.members[req.MemberID]
		if m == nil {
			return kerr.UnknownMemberID
		}
		switch {
		case req.GenerationID > m.epoch:
			return kerr.FencedMemberEpoch
		case req.GenerationID < m.epoch:
			return kerr.StaleMemberEpoch
		}
		return nil
	}
	if req.GenerationID < 0 && g.state == Empty {
		return nil
	}
	if anonymous {
		// TxnOffsetCommit v0–v2 name no member; unlike OffsetCommit they
		// are accepted while the group has members.
		return nil
	}
	if err := g.validateMember(req.MemberID, req.GroupInstanceID); err != nil {
		return err
	}
	if req.GenerationID != g.generation {
		return kerr.IllegalGeneration
	}
	return nil
}

// CompleteTxnOffsets applies a transaction marker of producerID, once the
// marker is durable in the group's __consumer_offsets partition: on commit
// each pending offset of the producer becomes the committed one unless the
// committed one was written after it; on abort they are dropped. The
// marker is the record; the effects are the caller's to persist as usual
// (a consumer group left with nothing is tombstoned; normally none).
func (g *Group) CompleteTxnOffsets(now time.Time, producerID int64, commit bool) Effects {
	g.fireTimers(now)
	g.completeTxnOffsets(producerID, commit)
	return g.take()
}

// ReplayTxnOffset applies an offset record read back from a transactional
// batch of producerID (nil: a tombstone, which acts as any tombstone).
func (g *Group) ReplayTxnOffset(producerID int64, tp TopicPartition, o *OffsetAndMetadata) {
	if o == nil {
		g.ReplayOffset(tp, nil)
		return
	}
	g.stagePendingTxnOffset(producerID, tp, *o)
}

// ReplayTxnMarker applies a commit or abort marker of producerID read back
// from the log.
func (g *Group) ReplayTxnMarker(producerID int64, commit bool) {
	g.completeTxnOffsets(producerID, commit)
}

// HasPendingTxnOffsets reports whether a transaction has offsets pending
// for tp: an OffsetFetch with require_stable gets UNSTABLE_OFFSET_COMMIT.
func (g *Group) HasPendingTxnOffsets(tp TopicPartition) bool {
	for _, pending := range g.pendingTxnOffsets {
		if _, ok := pending[tp]; ok {
			return true
		}
	}
	return false
}

// HasPendingTxnOffsetsFrom reports whether producerID has offsets pending
// in the group, i.e. whether its marker must be applied here.
func (g *Group) HasPendingTxnOffsetsFrom(producerID int64) bool {
	_, ok := g.pendingTxnOffsets[producerID]
	return ok
}

// PendingTxnProducers returns the producer ids with pending offsets,
// sorted.
func (g *Group) PendingTxnProducers() []int64 {
	out := make([]int64, 0, len(g.pendingTxnOffsets))
	for pid := range g.pendingTxnOffsets {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// FetchOffsets answers an OffsetFetch: the committed offsets of tps, or of
// every partition with tps nil. With requireStable (KIP-447) a partition
// with pending transactional offsets gets UNSTABLE_OFFSET_COMMIT.
func (g *Group) FetchOffsets(tps []TopicPartition, requireStable bool) []FetchedOffset {
	if tps == nil {
		for _, o := range g.Offsets() {
			tps = append(tps, o.TopicPartition)
		}
	}
	none := OffsetAndMetadata{Offset: -1, LeaderEpoch: -1, ExpireTimestamp: -1}
	out := make([]FetchedOffset, 0, len(tps))
	for _, tp := range tps {
		f := FetchedOffset{TopicPartition: tp, OffsetAndMetadata: none}
		switch o, ok := g.offsets[tp]; {
		case requireStable && g.HasPendingTxnOffsets(tp):
			f.Err = kerr.UnstableOffsetCommit
		case ok:
			f.OffsetAndMetadata = o
		}
		out = append(out, f)
	}
	return out
}

// nextOffsetPosition numbers the group's offset records in log order.
func (g *Group) nextOffsetPosition() int64 {
	g.offsetRecords++
	return g.offsetRecords
}

// setOffset makes o the committed offset of tp, written at the next
// position.
func (g *Group) setOffset(tp TopicPartition, o OffsetAndMetadata) {
	g.offsets[tp] = o
	g.offsetPositions[tp] = g.nextOffsetPosition()
}

// deleteOffset drops the committed offset of tp and any pending
// transactional ones, as an offset tombstone does.
func (g *Group) deleteOffset(tp TopicPartition) {
	delete(g.offsets, tp)
	delete(g.offsetPositions, tp)
	for pid, pending := range g.pendingTxnOffsets {
		delete(pending, tp)
		if len(pending) == 0 {
			delete(g.pendingTxnOffsets, pid)
		}
	}
}

// stagePendingTxnOffset makes o pending for producerID at the next
// position, replacing an earlier pending offset of the same transaction.
func (g *Group) stagePendingTxnOffset(producerID int64, tp TopicPartition, o OffsetAndMetadata) {
	pending := g.pendingTxnOffsets[producerID]
	if pending == nil {
		pending = map[TopicPartition]txnOffset{}
		g.pendingTxnOffsets[producerID] = pending
	}
	pending[tp] = txnOffset{OffsetAndMetadata: o, position: g.nextOffsetPosition()}
}

// completeTxnOffsets applies a marker: Kafka keeps whichever of the
// committed and the transactional offset was written last.
func (g *Group) completeTxnOffsets(producerID int64, commit bool) {
	pending, ok := g.pendingTxnOffsets[producerID]
	if !ok {
		return
	}
	delete(g.pendingTxnOffsets, producerID)
	if !commit {
		return
	}
	for tp, o := range pending {
		if _, committed := g.offsets[tp]; committed && g.offsetPositions[tp] > o.position {
			continue
		}
		g.offsets[tp] = o.OffsetAndMetadata
		g.offsetPositions[tp] = o.position
	}
}

// hasOffsets reports committed or pending offsets: a group that has
// either is kept.
func (g *Group) hasOffsets() bool {
	return len(g.offsets) > 0 || len(g.pendingTxnOffsets) > 0
}

// offsetPartitions lists the partitions with committed or pending offsets.
func (g *Group) offsetPartitions() []TopicPartition {
	seen := make(map[TopicPartition]bool, len(g.offsets))
	var out []TopicPartition
	add := func(tp TopicPartition) {
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	for tp := range g.offsets {
		add(tp)
	}
	for _, pending := range g.pendingTxnOffsets {
		for tp := range pending {
			add(tp)
		}
	}
	return out
}
