package broker

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// Replication state of a hosted partition. The metadata quorum decides who
// leads (leader, leader epoch) and who is in sync (ISR, partition epoch);
// each node applies that decision to its replica with setRole. A leader
// tracks its followers' log end offsets from their fetches and moves the
// high watermark to the smallest log end offset in the ISR; a follower
// appends what it fetches from the leader with the leader's offsets and
// epochs (replica_fetcher.go) and takes the leader's high watermark.

// replicaRole is one partition's assignment as of an applied metadata state.
type replicaRole struct {
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	isr            []int32
}

func roleOf(p cluster.Partition) *replicaRole {
	return &replicaRole{leader: p.Leader, leaderEpoch: p.LeaderEpoch, partitionEpoch: p.PartitionEpoch,
		replicas: slices.Clone(p.Replicas), isr: slices.Clone(p.ISR)}
}

// followerProgress is what a leader knows of one follower.
type followerProgress struct {
	leo            int64 // the follower's log end offset (its last fetch offset); -1 unknown
	lastCaughtUpMs int64 // last time the follower had everything the leader had
	prevLeaderLEO  int64 // the leader's log end offset at the follower's previous fetch
	prevFetchMs    int64
}

var errNotLeaderForPartition = errors.New("broker: not the leader of this partition (any more)")

// isLeader reports whether this node leads the partition.
func (p *partition) isLeader() bool {
	r := p.role.Load()
	return r != nil && r.leader == p.self
}

// currentRole is the assignment last applied (never nil after open).
func (p *partition) currentRole() *replicaRole {
	if r := p.role.Load(); r != nil {
		return r
	}
	return &replicaRole{leader: cluster.NoLeader, leaderEpoch: p.epoch.Load()}
}

// setRole applies the partition's assignment from the metadata state. It
// reports whether this node became leader or stopped being leader.
func (p *partition) setRole(r *replicaRole, nowMs int64) (becameLeader, lostLeadership bool) {
	p.mu.Lock()
	p.rep.Lock()
	old := p.role.Load()
	wasLeader := old != nil && old.leader == p.self
	isLeader := r.leader == p.self
	if old != nil && old.leader == r.leader && old.leaderEpoch == r.leaderEpoch && old.partitionEpoch == r.partitionEpoch &&
		slices.Equal(old.isr, r.isr) && slices.Equal(old.replicas, r.replicas) {
		p.rep.Unlock()
		p.mu.Unlock()
		return false, false
	}
	newEpoch := old == nil || old.leaderEpoch != r.leaderEpoch
	if p.solo.Load() {
		// Everything appended while the ISR was this node alone is committed.
		p.storeHWLocked(p.log.LogEndOffset())
	}
	p.epoch.Store(r.leaderEpoch)
	if isLeader {
		if !wasLeader || newEpoch || p.rep.followers == nil {
			p.rep.followers = map[int32]*followerProgress{}
		}
		for _, id := range r.replicas {
			if id != p.self && p.rep.followers[id] == nil {
				// A grace period: a follower is in sync until it has had
				// replica.lag.time.max.ms to show otherwise.
				p.rep.followers[id] = &followerProgress{leo: -1, lastCaughtUpMs: nowMs, prevLeaderLEO: -1}
			}
		}
		for id := range p.rep.followers {
			if !slices.Contains(r.replicas, id) {
				delete(p.rep.followers, id)
			}
		}
		p.rep.needsTruncate = false
		if !wasLeader || newEpoch {
			// A follower joins the ISR only once it has this epoch's
			// start (Kafka's rule): it then has no divergent tail.
			p.rep.epochStart = p.log.LogEndOffset()
		}
	} else {
		p.rep.followers = nil
		if newEpoch || wasLeader {
			p.rep.needsTruncate = true
		}
	}
	p.solo.Store(isLeader && len(r.isr) == 1 && r.isr[0] == p.self)
	p.rep.isrPending = false
	p.rep.isrRetryAtMs, p.rep.isrBackoffMs = 0, 0 // a new partition epoch: decide afresh
	p.rep.pendingAdd = -1
	p.role.Store(r)
	p.advanceHWLocked()
	p.rep.Unlock()
	p.mu.Unlock()
	p.wakeWaiters()
	return isLeader && !wasLeader, wasLeader && !isLeader
}

// storeHWLocked raises the high watermark (never lowers it). Needs rep.
func (p *partition) storeHWLocked(hw int64) bool {
	if hw > p.hw.Load() {
		p.hw.Store(hw)
		return true
	}
	return false
}

// advanceHWLocked moves a leader's high watermark to the smallest log end
// offset in the ISR. Needs rep.
func (p *partition) advanceHWLocked() bool {
	r := p.role.Load()
	if r == nil || r.leader != p.self || p.solo.Load() {
		return false
	}
	hw := p.log.LogEndOffset()
	for _, id := range r.isr {
		if id == p.self {
			continue
		}
		f := p.rep.followers[id]
		if f == nil || f.leo < 0 {
			return false
		}
		hw = min(hw, f.leo)
	}
	if id := p.rep.pendingAdd; id >= 0 {
		// Kafka's "maximal ISR": a follower being added counts from the
		// moment it is proposed, so it never joins lacking committed records.
		if f := p.rep.followers[id]; f != nil && f.leo >= 0 {
			hw = min(hw, f.leo)
		}
	}
	return p.storeHWLocked(hw)
}

// followerFetched records a follower's fetch at offset (its log end
// offset) on the leader: the high watermark may move, and a follower out
// of the ISR that has caught up is proposed for it. It returns the ISR
// the partition should have when that differs from the current one.
func (p *partition) followerFetched(id int32, offset int64, nowMs int64) (expand []int32, role *replicaRole) {
	p.rep.Lock()
	r := p.role.Load()
	f := p.rep.followers[id]
	leo := p.log.LogEndOffset()
	if r == nil || r.leader != p.self || f == nil || offset > leo {
		// Not ours, or a follower ahead of us (it will truncate): no progress.
		p.rep.Unlock()
		return nil, nil
	}
	switch {
	case offset >= leo:
		f.lastCaughtUpMs = nowMs
	case f.prevLeaderLEO >= 0 && offset >= f.prevLeaderLEO:
		f.lastCaughtUpMs = max(f.lastCaughtUpMs, f.prevFetchMs)
	}
	f.prevLeaderLEO, f.prevFetchMs = leo, nowMs
	f.leo = offset
	moved := p.advanceHWLocked()
	candidate := !slices.Contains(r.isr, id) && !p.rep.isrPending && nowMs >= p.rep.isrRetryAtMs &&
		offset >= p.highWatermark() && offset >= p.rep.epochStart
	p.rep.Unlock()
	if moved {
		p.wakeWaiters()
	}
	if !candidate {
		return nil, nil
	}
	return p.proposeExpansion(id, offset)
}

// proposeExpansion marks follower id as joining the ISR if it still has
// everything committed. It holds mu (no append in between) so that, when
// the ISR was this node alone, the high watermark stops following the log
// end at a point the follower has already reached.
func (p *partition) proposeExpansion(id int32, offset int64) ([]int32, *replicaRole) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rep.Lock()
	defer p.rep.Unlock()
	r := p.role.Load()
	if r == nil || r.leader != p.self || p.rep.isrPending || slices.Contains(r.isr, id) || offset < p.highWatermark() {
		return nil, nil
	}
	if p.solo.Load() {
		p.storeHWLocked(p.log.LogEndOffset())
		p.solo.Store(false)
	}
	p.rep.isrPending = true
	p.rep.pendingAdd = id
	return append(slices.Clone(r.isr), id), r
}

// laggingISR returns the ISR without the followers that have not caught
// up for lagMaxMs, or nil when nothing changes (or a change is pending).
func (p *partition) laggingISR(nowMs, lagMaxMs int64) ([]int32, *replicaRole) {
	p.rep.Lock()
	defer p.rep.Unlock()
	r := p.role.Load()
	if r == nil || r.leader != p.self || p.rep.isrPending || len(r.isr) <= 1 || nowMs < p.rep.isrRetryAtMs {
		return nil, nil
	}
	var keep []int32
	for _, id := range r.isr {
		f := p.rep.followers[id]
		if id != p.self && f != nil && nowMs-f.lastCaughtUpMs > lagMaxMs {
			continue
		}
		keep = append(keep, id)
	}
	if len(keep) == len(r.isr) {
		return nil, nil
	}
	p.rep.isrPending = true
	return keep, r
}

// The wait after a failed ISR proposal before the next: it doubles per
// failure up to the maximum.
const (
	isrRetryBackoff    = 100 * time.Millisecond
	isrRetryBackoffMax = 5 * time.Second
)

// isrChangeDone ends an ISR proposal decided under role r. A committed
// change is the new role's to apply (setRole resets the pending state when
// it sees the new ISR, which may be after this returns). Only a definite
// rejection while the role is still r undoes the pending addition (and,
// with the ISR this node alone, returns to the solo fast path). An unknown
// outcome (a timeout: the record may still commit) keeps the addition
// counted in the high watermark but allows a new proposal, which the
// partition epoch makes harmless if the first one did commit.
//
// After a failure the next proposal waits isrRetryBackoff (doubling per
// failure up to isrRetryBackoffMax, reset by the next role): a follower
// the quorum will not take (fenced, say) keeps fetching, and each fetch
// would otherwise propose it again at once.
func (p *partition) isrChangeDone(r *replicaRole, err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	p.rep.Lock()
	if p.role.Load() == r {
		p.rep.isrPending = false
		p.rep.isrBackoffMs = min(max(2*p.rep.isrBackoffMs, isrRetryBackoff.Milliseconds()), isrRetryBackoffMax.Milliseconds())
		p.rep.isrRetryAtMs = time.Now().UnixMilli() + p.rep.isrBackoffMs
		if errors.Is(err, cluster.ErrRejected) {
			p.rep.pendingAdd = -1
			if r.leader == p.self && len(r.isr) == 1 && r.isr[0] == p.self && !p.solo.Load() {
				p.storeHWLocked(p.log.LogEndOffset())
				p.solo.Store(true)
			}
		}
	}
	p.rep.Unlock()
	p.mu.Unlock()
	p.wakeWaiters()
}

// takeTruncation reports (once) that a follower must reconcile its log with
// a new leader before fetching.
func (p *partition) takeTruncation() bool {
	p.rep.Lock()
	defer p.rep.Unlock()
	t := p.rep.needsTruncate
	p.rep.needsTruncate = false
	return t
}

// requestTruncation makes the follower reconcile with its leader before
// its next fetch (after a failed attempt, or a fetch beyond the leader's end).
func (p *partition) requestTruncation() {
	p.rep.Lock()
	p.rep.needsTruncate = true
	p.rep.Unlock()
}

// truncateTo cuts a follower's divergent tail and rebuilds the producer
// state from what remains.
func (p *partition) truncateTo(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if offset >= p.log.LogEndOffset() {
		return nil
	}
	if err := p.log.TruncateTo(offset); err != nil {
		return err
	}
	p.rep.Lock()
	p.hw.Store(min(p.hw.Load(), p.log.LogEndOffset()))
	p.rep.Unlock()
	return p.reloadProducersLocked()
}

// restartAt empties a follower's log to start at the leader's log start.
func (p *partition) restartAt(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.log.TruncateFully(offset); err != nil {
		return err
	}
	p.rep.Lock()
	p.hw.Store(offset)
	p.rep.Unlock()
	return p.reloadProducersLocked()
}

func (p *partition) reloadProducersLocked() error {
	producers, err := loadProducerTable(p.log, time.Now().UnixMilli())
	if err != nil {
		return err
	}
	p.mu.producers = producers
	p.noteUnstableLocked()
	return nil
}

// appendReplica appends batches fetched from the leader at leaderEpoch, as
// they are, and takes the leader's high watermark (bounded by this log's
// end). Batches this log already has are skipped; a trailing partial batch
// is dropped (the next fetch starts there).
func (p *partition) appendReplica(records []byte, leaderEpoch int32, leaderHW int64) error {
	records = completeBatches(records)
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.role.Load()
	if r == nil || r.leader == p.self || r.leaderEpoch != leaderEpoch {
		return errNotLeaderForPartition
	}
	p.rep.Lock()
	pending := p.rep.needsTruncate
	p.rep.Unlock()
	if pending {
		return errNotLeaderForPartition // reconcile with the leader first
	}
	leo := p.log.LogEndOffset()
	if leo == p.log.LogStartOffset() && len(records) >= storage.BatchHeaderSize {
		// An empty log (a new replica, or one restarted at the leader's
		// log start) takes the first batch's base even when the start
		// fell inside it (DeleteRecords can put it there).
		if h, err := storage.ParseBatchHeader(records); err == nil && h.BaseOffset < leo && h.LastOffset() >= leo {
			if err := p.log.TruncateFully(h.BaseOffset); err != nil {
				return err
			}
			leo = h.BaseOffset
		}
	}
	// Skip batches below the log end (a retried fetch).
	for len(records) >= storage.BatchHeaderSize {
		h, err := storage.ParseBatchHeader(records)
		if err != nil {
			return err
		}
		if h.LastOffset() >= leo {
			break
		}
		records = records[h.Size():]
	}
	if len(records) > 0 {
		headers, err := storage.ValidateBatches(records)
		if err != nil {
			return fmt.Errorf("broker: replicated batch: %w", err)
		}
		if _, err := p.log.Append(records, headers, storage.AppendOptions{KeepOffsets: true}); err != nil {
			if p.log.LogEndOffset() == leo {
				return err
			}
			// Written but not synced: record it like the leader does.
		}
		now := time.Now().UnixMilli()
		for i := range headers {
			h := headers[i]
			if h.IsControl() {
				if err := p.mu.producers.replayMarker(p.log, h); err != nil {
					return err
				}
				continue
			}
			p.mu.producers.record(&h, now)
		}
		p.noteUnstableLocked()
	}
	p.rep.Lock()
	p.storeHWLocked(min(leaderHW, p.log.LogEndOffset()))
	p.rep.Unlock()
	return nil
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

// awaitReplicated waits until the high watermark passes offset (acks=-1),
// appended under leader epoch epoch, the timeout passes, leadership is
// lost (or moved away and back: the epoch differs) or the server stops.
func (p *partition) awaitReplicated(offset int64, epoch int32, timeout time.Duration, done <-chan struct{}) error {
	// The high watermark is read before the epoch is checked: epochs
	// never come back, so an unchanged epoch after the read means the
	// watermark was this leadership's (not one reached after a truncation).
	committed := func() (bool, error) {
		hw := p.highWatermark()
		if !p.isLeader() || p.leaderEpoch() != epoch {
			return false, errNotLeaderForPartition
		}
		return hw > offset, nil
	}
	if ok, err := committed(); ok || err != nil {
		return err
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	wake := make(chan struct{}, 1)
	for {
		p.addWaiter(wake)
		if ok, err := committed(); ok || err != nil {
			p.removeWaiter(wake)
			return err
		}
		select {
		case <-wake:
		case <-deadline.C:
			p.removeWaiter(wake)
			return errReplicationTimeout
		case <-done:
			p.removeWaiter(wake)
			return errNotLeaderForPartition
		}
	}
}

var errReplicationTimeout = errors.New("broker: the in-sync replicas did not acknowledge in time")
