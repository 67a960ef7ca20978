package replica

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// Role is one partition's assignment as of an applied metadata state:
// the quorum decides it, SetRole applies it.
type Role struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
}

// RoleOf is the role the metadata state gives a partition.
func RoleOf(p cluster.Partition) *Role {
	return &Role{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
		Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR)}
}

// IsLeader reports whether this node leads the partition.
func (r *Replica) IsLeader() bool {
	role := r.role.Load()
	return role != nil && role.Leader == r.self
}

// Role is the assignment last applied (no leader before the first
// SetRole). Callers must not modify it.
func (r *Replica) Role() *Role {
	if role := r.role.Load(); role != nil {
		return role
	}
	return &Role{Leader: cluster.NoLeader, LeaderEpoch: r.epoch.Load()}
}

// SetRole applies the partition's assignment from the metadata state. It
// reports whether this node became leader or stopped being leader.
func (r *Replica) SetRole(role *Role, nowMs int64) (becameLeader, lostLeadership bool) {
	r.mu.Lock()
	r.rep.Lock()
	old := r.role.Load()
	wasLeader := old != nil && old.Leader == r.self
	isLeader := role.Leader == r.self
	if sameRole(old, role) {
		r.rep.Unlock()
		r.mu.Unlock()
		return false, false
	}
	newEpoch := old == nil || old.LeaderEpoch != role.LeaderEpoch
	if r.solo.Load() {
		// Everything appended while the ISR was this node alone is committed.
		r.storeHWLocked(r.storage().LogEndOffset())
	}
	r.epoch.Store(role.LeaderEpoch)
	if isLeader {
		fresh := !wasLeader || newEpoch || r.rep.followers == nil
		r.rep.followers = followersFor(r.self, role.Replicas, r.rep.followers, fresh, nowMs)
		r.rep.needsTruncate = false
		if !wasLeader || newEpoch {
			// A follower joins the ISR only once it has this epoch's
			// start (mayJoinISR).
			r.rep.epochStart = r.storage().LogEndOffset()
		}
	} else {
		r.rep.followers = nil
		if newEpoch || wasLeader {
			r.rep.needsTruncate = true
		}
	}
	r.solo.Store(isLeader && soloISR(r.self, role.ISR))
	r.rep.isrPending = false
	r.rep.isrRetryAtMs, r.rep.isrBackoffMs = 0, 0 // a new partition epoch: decide afresh
	r.rep.pendingAdd = -1
	r.role.Store(role)
	r.advanceHWLocked()
	r.rep.Unlock()
	r.mu.Unlock()
	r.wakeWaiters()
	return isLeader && !wasLeader, wasLeader && !isLeader
}

// storeHWLocked raises the high watermark (never lowers it). Needs rep.
func (r *Replica) storeHWLocked(hw int64) bool {
	if hw > r.hw.Load() {
		r.hw.Store(hw)
		return true
	}
	return false
}

// advanceHWLocked moves a leader's high watermark to highWatermark's
// answer. Needs rep.
func (r *Replica) advanceHWLocked() bool {
	role := r.role.Load()
	if role == nil || role.Leader != r.self || r.solo.Load() {
		return false
	}
	hw, ok := highWatermark(r.self, r.storage().LogEndOffset(), role.ISR, r.rep.pendingAdd, r.rep.followers)
	return ok && r.storeHWLocked(hw)
}

// ISRChange is an ISR the leader wants the quorum to record, decided under
// Role: the caller proposes it (an AlterPartition record carrying
// Role.PartitionEpoch) and reports the outcome with ISRChangeDone. At most
// one is in flight per partition.
type ISRChange struct {
	ISR  []int32
	Role *Role
}

// FollowerFetched records a follower's fetch at offset (its log end
// offset) on the leader: the high watermark may move, and a follower out
// of the ISR that has caught up is proposed for it.
func (r *Replica) FollowerFetched(id int32, offset int64, nowMs int64) *ISRChange {
	r.rep.Lock()
	role := r.role.Load()
	f, known := r.rep.followers[id]
	leo := r.storage().LogEndOffset()
	if role == nil || role.Leader != r.self || !known || offset > leo {
		// Not ours, or a follower ahead of us (it will truncate): no progress.
		r.rep.Unlock()
		return nil
	}
	r.rep.followers[id] = f.fetched(offset, leo, nowMs)
	moved := r.advanceHWLocked()
	candidate := !slices.Contains(role.ISR, id) && !r.rep.isrPending && nowMs >= r.rep.isrRetryAtMs &&
		mayJoinISR(offset, r.HighWatermark(), r.rep.epochStart)
	r.rep.Unlock()
	if moved {
		r.wakeWaiters()
	}
	if !candidate {
		return nil
	}
	return r.proposeExpansion(id, offset)
}

// proposeExpansion marks follower id as joining the ISR if it still has
// everything committed. It holds mu (no append in between) so that, when
// the ISR was this node alone, the high watermark stops following the log
// end at a point the follower has already reached.
func (r *Replica) proposeExpansion(id int32, offset int64) *ISRChange {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Lock()
	defer r.rep.Unlock()
	role := r.role.Load()
	if role == nil || role.Leader != r.self || r.rep.isrPending || slices.Contains(role.ISR, id) || offset < r.HighWatermark() {
		return nil
	}
	if r.solo.Load() {
		r.storeHWLocked(r.storage().LogEndOffset())
		r.solo.Store(false)
	}
	r.rep.isrPending = true
	r.rep.pendingAdd = id
	return &ISRChange{ISR: append(slices.Clone(role.ISR), id), Role: role}
}

// LaggingISR returns the ISR without the followers that have not caught
// up for lagMaxMs (replica.lag.time.max.ms), or nil when nothing changes
// or a change is in flight; first, an addition whose earlier proposal's
// outcome is unknown is proposed again.
func (r *Replica) LaggingISR(nowMs, lagMaxMs int64) *ISRChange {
	r.rep.Lock()
	defer r.rep.Unlock()
	role := r.role.Load()
	if role == nil || role.Leader != r.self || r.rep.isrPending || nowMs < r.rep.isrRetryAtMs {
		return nil
	}
	// An addition whose proposal timed out (its outcome unknown) still
	// counts in the high watermark: ask again until the controller
	// decides. Otherwise a follower that stopped right after being
	// proposed (so FollowerFetched never proposes it again) would hold
	// the high watermark, and every acks=all write, forever.
	if add := r.rep.pendingAdd; add >= 0 && !slices.Contains(role.ISR, add) {
		r.rep.isrPending = true
		return &ISRChange{ISR: append(slices.Clone(role.ISR), add), Role: role}
	}
	if len(role.ISR) <= 1 {
		return nil
	}
	keep := shrunkISR(r.self, role.ISR, r.rep.followers, nowMs, lagMaxMs)
	if keep == nil {
		return nil
	}
	r.rep.isrPending = true
	return &ISRChange{ISR: keep, Role: role}
}

// ISRChangeDone ends an ISR proposal. A committed change is the new
// role's to apply (SetRole resets the pending state when it sees the new
// ISR, which may be after this returns). Only a definite rejection
// (cluster.ErrRejected, but not a stale partition epoch: the ISR changed
// meanwhile, maybe by this addition) while the role is still the
// proposal's undoes the pending addition (and, with the ISR this node
// alone, returns to the solo fast path). An unknown outcome (a timeout:
// the record may still commit) keeps the addition counted in the high
// watermark and LaggingISR proposes it again until the controller decides;
// the partition epoch makes that harmless if the first one did commit.
//
// After a failure the next proposal waits ISRRetryBackoff, doubling per
// failure up to ISRRetryBackoffMax and reset by the next role: a follower
// the quorum will not take (fenced, say) keeps fetching, and each fetch
// would otherwise propose it again at once.
func (r *Replica) ISRChangeDone(c *ISRChange, err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	r.rep.Lock()
	if role := c.Role; r.role.Load() == role {
		r.rep.isrPending = false
		r.rep.isrBackoffMs = nextISRBackoff(r.rep.isrBackoffMs)
		r.rep.isrRetryAtMs = time.Now().UnixMilli() + r.rep.isrBackoffMs
		// A stale partition epoch says the ISR changed meanwhile (maybe
		// by this very addition): the new role decides, not this answer.
		if errors.Is(err, cluster.ErrRejected) && !errors.Is(err, cluster.ErrStalePartitionEpoch) {
			r.rep.pendingAdd = -1
			if role.Leader == r.self && soloISR(r.self, role.ISR) && !r.solo.Load() {
				r.storeHWLocked(r.storage().LogEndOffset())
				r.solo.Store(true)
			}
		}
	}
	r.rep.Unlock()
	r.mu.Unlock()
	r.wakeWaiters()
}

// TakeTruncation reports (once) that a follower must reconcile its log
// with a new leader before fetching.
func (r *Replica) TakeTruncation() bool {
	r.rep.Lock()
	defer r.rep.Unlock()
	t := r.rep.needsTruncate
	r.rep.needsTruncate = false
	return t
}

// RequestTruncation makes the follower reconcile with its leader before
// its next fetch (after a failed attempt, or a fetch beyond the leader's end).
func (r *Replica) RequestTruncation() {
	r.rep.Lock()
	r.rep.needsTruncate = true
	r.rep.Unlock()
}

// TruncateTo cuts a follower's divergent tail and rebuilds the producer
// state from what remains (rewrite: no lock held across the disk).
func (r *Replica) TruncateTo(offset int64) error {
	return r.rewrite(func() (bool, error) {
		if offset >= r.storage().LogEndOffset() {
			return false, nil
		}
		return true, r.storage().TruncateTo(offset)
	}, func(hw, _ int64) int64 { return hw })
}

// rewrite runs cut, which shortens or empties the log, with mu released:
// truncation fsyncs, and mu is never held across the disk. Meanwhile
// mu.truncating refuses appends, markers and replicated batches (they
// would land in a log being cut, and see a producer table about to be
// rebuilt); the single owner of a follower's log, its fetcher, retries.
// Once cut reports a change, the producer table is rebuilt from the log
// (also outside mu: nothing appends meanwhile) and, under mu, installed
// with the high watermark hw(previous, new log end) capped by the log end.
func (r *Replica) rewrite(cut func() (changed bool, err error), hw func(prev, leo int64) int64) error {
	r.mu.Lock()
	if r.mu.truncating {
		r.mu.Unlock()
		return ErrNotLeader // another rewrite in progress: the caller retries
	}
	r.mu.truncating = true
	r.rewrites.Add(1)
	r.mu.Unlock()

	changed, err := cut()
	var producers *producerTable
	if changed {
		var lerr error
		if producers, _, lerr = loadProducerTable(r.storage(), time.Now().UnixMilli(), r.logger); err == nil {
			err = lerr
		}
	}

	r.mu.Lock()
	r.mu.truncating = false
	if producers != nil {
		r.mu.producers = producers
		r.noteUnstableLocked()
	}
	if changed {
		r.rep.Lock()
		leo := r.storage().LogEndOffset()
		r.hw.Store(min(hw(r.hw.Load(), leo), leo))
		if r.IsLeader() && r.rep.epochStart > leo {
			// Made leader while the log was being cut: its epoch begins
			// at the new end.
			r.rep.epochStart = leo
		}
		r.rep.Unlock()
	}
	r.mu.Unlock()
	r.wakeWaiters()
	return err
}

// AppendReplica appends batches fetched from the leader at leaderEpoch, as
// they are, and takes the leader's high watermark (bounded by this log's
// end). Batches this log already has are skipped; a trailing partial batch
// is dropped (the next fetch starts there).
func (r *Replica) AppendReplica(records []byte, leaderEpoch int32, leaderHW int64) error {
	records = completeBatches(records)
	r.mu.Lock()
	flush, err := r.appendReplicaLocked(records, leaderEpoch, leaderHW)
	r.mu.Unlock()
	if err == nil && flush {
		err = r.storage().Flush()
	}
	r.wakeWaiters()
	return err
}

func (r *Replica) appendReplicaLocked(records []byte, leaderEpoch int32, leaderHW int64) (flush bool, err error) {
	role := r.role.Load()
	if role == nil || role.Leader == r.self || role.LeaderEpoch != leaderEpoch || r.mu.truncating {
		return false, ErrNotLeader
	}
	r.rep.Lock()
	pending := r.rep.needsTruncate
	r.rep.Unlock()
	if pending {
		return false, ErrNotLeader // reconcile with the leader first
	}
	leo := r.storage().LogEndOffset()
	if leo == r.storage().LogStartOffset() && len(records) >= storage.BatchHeaderSize {
		// An empty log (a new replica, or one restarted at the leader's
		// log start) takes the first batch's base even when the start
		// fell inside it (DeleteRecords can put it there).
		if h, err := storage.ParseBatchHeader(records); err == nil && h.BaseOffset < leo && h.LastOffset() >= leo {
			if err := r.storage().TruncateFully(h.BaseOffset); err != nil {
				return false, err
			}
			leo = h.BaseOffset
		}
	}
	// Skip batches below the log end (a retried fetch).
	for len(records) >= storage.BatchHeaderSize {
		h, err := storage.ParseBatchHeader(records)
		if err != nil {
			return false, err
		}
		if h.LastOffset() >= leo {
			break
		}
		records = records[h.Size():]
	}
	if len(records) > 0 {
		headers, err := storage.ValidateBatches(records)
		if err != nil {
			return false, fmt.Errorf("replica: replicated batch: %w", err)
		}
		res, err := r.storage().Append(records, headers, storage.AppendOptions{KeepOffsets: true, DeferFlush: true})
		if err != nil && r.storage().LogEndOffset() == leo {
			return false, err
		}
		flush = res.FlushDue
		now := time.Now().UnixMilli()
		for i := range headers {
			h := headers[i]
			if h.IsControl() {
				if err := r.mu.producers.replayMarker(r.storage(), h); err != nil {
					return false, err
				}
				continue
			}
			r.mu.producers.record(&h, now)
		}
		r.noteUnstableLocked()
	}
	r.rep.Lock()
	r.storeHWLocked(min(leaderHW, r.storage().LogEndOffset()))
	r.rep.Unlock()
	return flush, nil
}

// completeBatches returns the prefix of b made of whole record batches.
func completeBatches(b []byte) []byte {
	n := 0
	for len(b)-n >= storage.BatchHeaderSize {
		h, err := storage.ParseBatchHeader(b[n:])
		if err != nil || n+h.Size() > len(b) {
			break
		}
		n += h.Size()
	}
	return b[:n]
}
